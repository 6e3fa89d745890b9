/* conn: a GnuTLS client session's life as the shim follows it, in a table
 * kept by the session's address from gnutls_init to gnutls_deinit: begin
 * (key, offer), handshake done, tickets as they arrive, and the end, when
 * what the connection earned goes to the pool.
 *
 * The verdict (measured on GnuTLS 3.7.9, tests/gnutls.bats): a resumed
 * session runs neither gnutls_session_set_verify_cert's check nor a
 * verify callback again, but gnutls_certificate_verify_peers* on it
 * re-judge the peer's certificates, which the session data carries. So a
 * session is offered only under a key holding everything an in-handshake
 * check depended on (verdict.c), never to a connection a callback judges,
 * and a connection whose own by-hand check failed publishes nothing. */
#ifndef RESUMESHIM_GNUTLS_CONN_H
#define RESUMESHIM_GNUTLS_CONN_H

#include <stdbool.h>

#include "config.h"
#include "real.h"

void gconn_init(const struct config *cfg);
/* A client session was made (flags: as the program gave them). */
void gconn_new(gnutls_session_t s, unsigned flags);
/* The program frees the session: what it earned is settled first. */
void gconn_free(gnutls_session_t s);
/* At exit: sessions the program never freed are settled. */
void gconn_settle_all(void);

/* Around gnutls_handshake. */
void gconn_begin(gnutls_session_t s);
void gconn_after(gnutls_session_t s, int ret);

/* The program's own handshake hook: the shim's stays installed and calls
 * it. False when the session is not followed (the call goes to GnuTLS). */
bool gconn_app_hook(gnutls_session_t s, unsigned htype, int when, gnutls_handshake_hook_func f);
/* The program sets session data itself (its own cache), or takes some. */
void gconn_app_set(gnutls_session_t s, const void *data, size_t size);
void gconn_app_took(gnutls_session_t s, const void *data, size_t size);

/* What the program sets that a verdict depends on. */
void gconn_verify_cert(gnutls_session_t s, const char *host, const gnutls_typed_vdata_st *data,
                       unsigned n, unsigned flags);
void gconn_verify_function(gnutls_session_t s, bool set);
/* text NULL: priorities the shim cannot name. */
void gconn_priority(gnutls_session_t s, const char *text);
/* The server name (SNI) the program set. */
void gconn_server_name(gnutls_session_t s, const void *name, size_t len);
/* The program moves the bytes itself: no socket the shim can read. */
void gconn_own_transport(gnutls_session_t s);
/* The program's own check of the peer (verify_peers*) failed. */
void gconn_refused(gnutls_session_t s);

#endif
