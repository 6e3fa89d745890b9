/* flush: the last flight of a TLS 1.3 client handshake, and the first
 * write after a handshake, sent at once. */
#ifndef RESUMESHIM_GNUTLS_FLUSH_H
#define RESUMESHIM_GNUTLS_FLUSH_H

#include <stdbool.h>

#include "real.h"

/* s's first handshake has just completed: what the kernel still holds of
 * it leaves now, on the session's own socket (own_transport: the program
 * moves the bytes itself, and no socket is known). */
void gflush_handshake(gnutls_session_t s, bool own_transport);
/* The program's first write on s since its handshake is queued: it leaves
 * now. */
void gflush_first_write(gnutls_session_t s, bool own_transport);

#endif
