/* settings: what changes a verdict but OpenSSL 3.0 offers no getter for,
 * recorded by the hooks as the application sets it: on a context (kept by
 * ctx.c), and on a connection where it overrides its context (kept here,
 * in the connection's ex_data, made only when the application sets one). */
#ifndef RESUMESHIM_SETTINGS_H
#define RESUMESHIM_SETTINGS_H

#include <stdbool.h>

#include "real.h"

struct recorded {
    bool sid_set, purpose_set, trust_set;
    unsigned sid_len;
    unsigned char sid[SSL_MAX_SID_CTX_LENGTH];
    int purpose, trust;
    /* A callback chooses what the client authenticates with: a PSK
     * (client or use-session; OpenSSL has no getter for either), or a
     * context's certificate callback, which is not watched (certcb.c). */
    bool identity_cb;
    /* Connections: the certificate callback in force is this one, the
     * connection's own, run through the trampoline (certcb.c); NULL: none
     * watched. */
    shim_cert_cb cert_fn;
    shim_cert_verify_cb cert_verify_cb;
    void *cert_verify_arg;
    /* A context's own identity, random, made with it when the server mode
     * is on: what a callback decides by (its argument, the context's app
     * data) cannot be fingerprinted, so contexts that judge clients by
     * callback share tickets only with themselves and the copies fork
     * makes of them, as OpenSSL's per-context keys would; so do contexts
     * with a name callback (verdict.c). Never an address: a later context
     * reuses a freed one's. Zero on connections. */
    unsigned char identity[16];
    /* A context's name callback or ClientHello callback (contexts only):
     * either may move its connections to another context
     * (SSL_set_SSL_CTX), by code the shim cannot read. */
    bool name_cb, hello_cb;
    /* Connections: moved to another context (SSL_set_SSL_CTX) since made. */
    bool moved;
    /* Signature algorithms set, ever (identity.c): which certificate a
     * client sends depends on them. A context's reach the connections made
     * after, which no hook can tell from the others: it stays set. */
    bool sigalgs;
    /* Contexts: a client-certificate ENGINE set (SSL_CTX_set_client_cert_engine),
     * which libssl asks before the client-certificate callback whenever a
     * server asks for a certificate (ssl_do_client_cert_cb, ssl/statem/
     * statem_clnt.c of 3.0.19 and 3.5.7, by the connection's current
     * context) and which has no getter. OpenSSL cannot unset it (a NULL
     * engine fails ENGINE_init): it stays set. */
    bool engine;
};
enum setting { SET_PURPOSE, SET_TRUST };

/* Whether an SSL_ctrl or SSL_CTX_ctrl command sets signature algorithms. */
static inline bool settings_sigalgs_cmd(int cmd)
{
    return cmd == SSL_CTRL_SET_SIGALGS || cmd == SSL_CTRL_SET_SIGALGS_LIST ||
           cmd == SSL_CTRL_SET_CLIENT_SIGALGS || cmd == SSL_CTRL_SET_CLIENT_SIGALGS_LIST;
}

void settings_init(void);
void settings_set_sid(struct recorded *r, const unsigned char *sid, unsigned len);
void settings_set_int(struct recorded *r, enum setting which, int value);
/* A connection's own settings: made on first use (NULL when they cannot
 * be), or only looked at (NULL: none). SSL_clear keeps them; SSL_dup
 * copies them. */
struct recorded *settings_of(SSL *s);
const struct recorded *settings_peek(const SSL *s);
/* Whether SSL_set_session leaves s's method as it is. It puts back the
 * context's method where the connection's differs (ssl/ssl_sess.c of
 * 3.0.19), and from 3.2 on the method the connection was made with
 * (s->defltmeth, ssl_sess.c of 3.5.7), which nothing can read: so the
 * connection must have the context's method and still be on the context it
 * was made on. */
bool settings_method_kept(const SSL *s);
/* The session id context in force: the connection's, else its context's
 * (either may be NULL); never NULL. */
const struct recorded *recorded_sid(const struct recorded *conn, const struct recorded *ctx);

#endif
