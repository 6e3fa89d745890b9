/* What a client connection offers as its handshake begins (connstate.h):
 * the application's own session, left alone, or else the session the pool
 * has for the connection's key. */
#include "appsess.h"
#include "connstate.h"
#include "log.h"
#include "ledger.h"
#include "pool.h"
#include "pooled.h"
#include "session.h"
#include "settings.h"

static void offer(struct conn *c, SSL *s)
{
    /* SSL_set_session would put another method on a connection whose
     * method the application changed. */
    if (!settings_method_kept(s))
        return;
    struct pooled p;
    pool_take(&c->key, time(NULL), &p);
    if (p.sess == NULL)
        return;
    /* A staple that could not be kept exact is shown to no judge, and a
     * session whose chain cannot be shown to the judge is not offered. */
    if (p.chain.lost || chain_certs(&p.chain) == NULL) {
        pooled_free(&p);
        return;
    }
    SSL_SESSION *give = p.sess;
    if (R(SSL_set_session)(s, give) != 1) {
        pooled_free(&p);
        return;
    }
    c->offered = give;
    c->offered_chain = p.chain;
    c->offered_born = p.born;
    stat_add(ST_OFFERED);
    LOG(LOG_DEBUG, "offered a TLS %s session", session_is_tls13(give) ? "1.3" : "1.2");
    c->push = !session_is_tls13(give);
}

void conn_offer(struct conn *c, SSL *s, SSL_CTX *ctx)
{
    SSL_SESSION *own = R(SSL_get_session)(s);
    /* The application offers a session of its own (or SSL_clear kept the
     * last one): leave it alone, and make sure no pool or store hands the
     * same ticket to another connection. A ticket it serialized is the
     * pool's too (hooks.c: i2d_SSL_SESSION): if the shim offered it first,
     * here or in another process, this connection offers none of its own
     * rather than offer it a second time. */
    /* The claim is made whatever the method: a connection moved to another
     * context offers its own ticket as any other. Taking it back passes
     * through SSL_set_session, which puts back 3.0's context method or
     * 3.5's original one (settings.h): where the connection has its
     * context's method, that is no change for a program that never set
     * one of its own. */
    if (own != NULL && c->key.len != 0 && session_is_tls13(own) &&
        !ledger_claim(&c->key, &ossl_ops, own) &&
        R(SSL_get_ssl_method)(s) == R(SSL_CTX_get_ssl_method)(ctx) &&
        R(SSL_set_session)(s, NULL) == 1) {
        LOG(LOG_DEBUG, "the application offers a ticket offered already; it offers none");
        own = NULL;
    }
    if (own != NULL) {
        appsess_begin(s, own);
        return;
    }
    if (c->key.len != 0)
        offer(c, s);
}

bool conn_offer_pending(const SSL *s)
{
    const struct conn *c = conn_get((SSL *)s);
    return c != NULL && c->started && ((!c->done && c->offered != NULL) || c->pending);
}
