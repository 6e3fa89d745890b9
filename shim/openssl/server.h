/* server: the server mode's ticket-key callback on server contexts. */
#ifndef RESUMESHIM_SERVER_H
#define RESUMESHIM_SERVER_H

#include <stdbool.h>

#include "real.h"

/* rotate: the ticket keys' period, in seconds. */
void server_init(long rotate);
/* False when the server mode cannot run (no shared memory for the ring). */
bool server_install(SSL_CTX *ctx);
void server_remove(SSL_CTX *ctx);
/* A server connection's handshake starts. (Not undone by SSL_clear:
 * OpenSSL calls that itself as a handshake starts.) */
void server_begin(SSL *s);

#endif
