/* ctx: per-SSL_CTX state: the shim's new-session callback and the cache
 * mode bits it adds, hidden from the application; the context's recorded
 * settings and algorithms. */
#ifndef RESUMESHIM_CTX_H
#define RESUMESHIM_CTX_H

#include <stdbool.h>

#include "algs.h"
#include "real.h"
#include "settings.h"

/* on_session receives every session a client connection gets, and whether
 * the application's own callback kept it (conn.c's, wired by init.c). */
void ctx_init(void (*on_session)(SSL *s, SSL_SESSION *sess, bool app_kept), bool server_mode);
void ctx_setup(SSL_CTX *ctx, OSSL_LIB_CTX *libctx, const char *propq);
/* Whether the server mode may give the context its tickets (it serves,
 * computes, and has an identity); then ctx_set_server_tickets says
 * whether it did. */
bool ctx_may_serve(SSL_CTX *ctx);
void ctx_set_server_tickets(SSL_CTX *ctx, bool on);
/* The algorithms of the context's library context; NULL when it has none
 * (nothing is then computed for it: no resumption, no server tickets). */
const struct algs *ctx_algs(SSL_CTX *ctx);
/* A client handshake starts on ctx. */
void ctx_connecting(SSL_CTX *ctx);
bool ctx_cache_mode(SSL_CTX *ctx, int cmd, long larg, long *ret);
bool ctx_set_app_cb(SSL_CTX *ctx, shim_new_session_cb cb);
bool ctx_get_app_cb(SSL_CTX *ctx, shim_new_session_cb *cb);
/* Whether SSL_SESS_CACHE_CLIENT is on only because the shim put it there. */
bool ctx_adds_client_cache(SSL_CTX *ctx);
/* The application manages the context's ticket keys itself; true when
 * they were the server mode's until now. */
bool ctx_own_tickets(SSL_CTX *ctx);
/* Whether the context's tickets are the server mode's. */
bool ctx_server_tickets(SSL_CTX *ctx);
/* NULL for a context the shim did not set up. */
struct recorded *ctx_recorded(SSL_CTX *ctx);

#endif
