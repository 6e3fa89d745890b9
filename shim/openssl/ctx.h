/* ctx: per-SSL_CTX state: the shim's new-session callback and the cache
 * mode bits it adds, hidden from the application; the context's recorded
 * settings and algorithms. */
#ifndef RESUMESHIM_CTX_H
#define RESUMESHIM_CTX_H

#include <stdbool.h>

#include "algs.h"
#include "real.h"
#include "settings.h"

/* What a handshake needs of its context, from one lookup: the settings
 * recorded on it (NULL for a context the shim did not set up) and its
 * algorithms (NULL: none could be fetched). */
struct ctx_parts {
    const struct recorded *rec;
    const struct algs *algs;
};

/* on_session receives every session a client connection gets, and whether
 * the application's own callback kept it (connkeep.c's, wired by init.c). */
void ctx_init(void (*on_session)(SSL *s, SSL_SESSION *sess, bool app_kept), bool server_mode);
/* True when it set the context up now (SSL_CTX_new reaches SSL_CTX_new_ex
 * through our hook too: the second call finds it done). */
bool ctx_setup(SSL_CTX *ctx, OSSL_LIB_CTX *libctx, const char *propq);
/* Whether the server mode may give a context just set up its tickets (it
 * serves, computes, and has an identity now); then ctx_set_server_tickets
 * says whether it did. */
bool ctx_may_serve(SSL_CTX *ctx);
typedef int (*shim_sec_cb)(const SSL *s, const SSL_CTX *ctx, int op, int bits, int nid,
                           void *other, void *ex);
/* OpenSSL's default security callback, as every context starts with it;
 * NULL until the shim set a context up. */
shim_sec_cb ctx_default_sec_cb(void);
void ctx_set_server_tickets(SSL_CTX *ctx, bool on);
/* The algorithms of the context's library context; NULL when it has none
 * (nothing is then computed for it: no resumption, no server tickets). */
const struct algs *ctx_algs(SSL_CTX *ctx);
struct ctx_parts ctx_parts(SSL_CTX *ctx);
/* A client handshake starts on ctx: its parts; false (and nothing) for a
 * context the shim did not set up, or whose new-session callback a
 * program replaced past the hooks. */
bool ctx_connecting(SSL_CTX *ctx, struct ctx_parts *parts);
bool ctx_cache_mode(SSL_CTX *ctx, int cmd, long larg, long *ret);
/* The application's OCSP status callback, which the shim's stands in for
 * (ocsp.c); false for a context the shim did not set up. */
bool ctx_set_status_cb(SSL_CTX *ctx, shim_status_cb cb);
shim_status_cb ctx_status_cb(SSL_CTX *ctx);
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
/* The application's session-ticket callbacks (SSL_CTX_set_session_ticket_cb)
 * on a context where the server mode's decrypt callback stands in for them
 * (server.c); false for a context the shim did not set up. */
struct ticket_cbs {
    SSL_CTX_generate_session_ticket_fn gen;
    SSL_CTX_decrypt_session_ticket_fn dec;
    void *arg;
};
bool ctx_set_ticket_cbs(SSL_CTX *ctx, const struct ticket_cbs *cbs);
bool ctx_ticket_cbs(SSL_CTX *ctx, struct ticket_cbs *cbs);

#endif
