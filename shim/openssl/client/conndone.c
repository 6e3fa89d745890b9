/* The end of a client connection's handshake (connstate.h): whether it
 * resumed what the shim offered and whether the server was verified; for a
 * resumed connection, the judge's verdict under the configuration the
 * connection has then, and the refusal that fails it; the chains callbacks
 * and the program ask for. */
#include <stdlib.h>
#include <string.h>

#include "connstate.h"
#include "ctx.h"
#include "judge/judge.h"
#include "judge/ocsp.h"
#include "log.h"
#include "pool.h"
#include "pooled.h"
#include "session.h"

void conn_set_verified_chain(struct conn *c, STACK_OF(X509) *chain)
{
    if (c->verified_chain != NULL)
        R(OPENSSL_sk_pop_free)((OPENSSL_STACK *)c->verified_chain, (OPENSSL_sk_freefunc)R(X509_free));
    c->verified_chain = chain;
}

/* The staple a connection's sessions carry: the one the server sent in a
 * full handshake, or, on a resumed one, the one its session carried. One
 * too large, or that cannot be copied, is lost: the connection publishes
 * nothing (handshake_done). */
static struct chain kept_staple(struct conn *c, SSL *s, bool reused)
{
    struct chain k = {0};
    if (reused && c->offered != NULL) {
        k.staple = c->offered_chain.staple, k.staple_len = c->offered_chain.staple_len;
        k.lost = c->offered_chain.lost;
        c->offered_chain.staple = NULL, c->offered_chain.staple_len = 0;
        return k;
    }
    unsigned char *der = NULL;
    long len = R(SSL_ctrl)(s, SSL_CTRL_GET_TLSEXT_STATUS_REQ_OCSP_RESP, 0, &der);
    if (len <= 0 || der == NULL)
        return k;
    if (len <= MAX_STAPLE_BYTES && (k.staple = malloc((size_t)len)) != NULL) {
        memcpy(k.staple, der, (size_t)len);
        k.staple_len = (size_t)len;
    } else {
        k.lost = true;
    }
    return k;
}

/* The application's judge refused a resumed connection: it fails as the
 * full handshake with that outcome fails (the reason libssl pushes on the
 * queue, the handshake call failing, no data moving after it), and the
 * server's sessions go. The fatal alert libssl would send cannot be: the
 * client's Finished has gone, and libssl sends no alert on request. */
void conn_push_refusal(const struct conn *c)
{
    R(ERR_new)();
    R(ERR_set_debug)(__FILE__, __LINE__, __func__);
    R(ERR_set_error)(ERR_LIB_SSL, c->refusal, NULL);
}

static void refuse(struct conn *c, SSL *s, int reason, const char *why)
{
    c->refused = true;
    c->refusal = reason;
    c->verified = false;
    pool_refuse(&c->key);
    conn_push_refusal(c);
    /* A fatal alert marks the session not resumable (ssl3_send_alert,
     * ssl/s3_msg.c): a program that keeps it must not resume it. */
    SSL_SESSION *sess = R(SSL_get_session)(s);
    if (sess != NULL)
        R(SSL_CTX_remove_session)(R(SSL_get_SSL_CTX)(s), sess);
    R(SSL_set_shutdown)(s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    LOG(LOG_DEBUG, "a resumed connection refused: %s", why);
}

/* A resumed connection whose status callback OpenSSL did not call (TLS
 * 1.2), or that has none: it is shown the staple now, and judged. */
static void judge_staple(struct conn *c, SSL *s)
{
    /* Should the staple not fit on the connection, the callback judges
     * its absence, and that verdict is not kept. */
    if (!ocsp_present(s, &c->chain))
        c->verified = false;
    int verdict = c->key.judge ? ocsp_ask(s) : 1;
    if (verdict <= 0)
        refuse(c, s, verdict < 0 ? ERR_R_MALLOC_FAILURE : SSL_R_INVALID_STATUS_RESPONSE,
               "the application's status callback");
}

/* The key chose the session; the judge decides, now, under the
 * configuration the connection has at its end, in libssl's order: the
 * chain first, then the staple. A verify callback may suspend the
 * judgment (SSL_set_retry_verify), as it suspends a full handshake: the
 * call then fails with SSL_ERROR_WANT_RETRY_VERIFY, and the next
 * handshake call judges again. */
void conn_judge(struct conn *c, SSL *s)
{
    STACK_OF(X509) *built = NULL;
    struct ctx_parts parts = ctx_parts(R(SSL_get_SSL_CTX)(s));
    enum verdict v = judge_resumed(s, &parts, chain_certs(&c->chain), &built);
    if (built != NULL)
        conn_set_verified_chain(c, built);
    c->pending = v == VERDICT_PENDING;
    if (v == VERDICT_REFUSED) {
        refuse(c, s, SSL_R_CERTIFICATE_VERIFY_FAILED, "the server's chain");
    } else if (v == VERDICT_UNJUDGED) {
        R(SSL_set_verify_result)(s, X509_V_ERR_NO_VALID_SCTS);
        refuse(c, s, SSL_R_CALLBACK_FAILED, "Certificate Transparency turned on after the offer");
    } else if (v == VERDICT_PASSED && c->key.staple && !c->judged) {
        judge_staple(c, s);
    }
}

static void handshake_done(struct conn *c, SSL *s)
{
    c->done = true;
    bool reused = R(SSL_session_reused)(s);
    c->offered_kept = c->offered != NULL;
    c->resumed = reused && c->offered_kept;
    struct chain staple = c->key.staple ? kept_staple(c, s, reused) : (struct chain){0};
    if (!reused)
        c->push = false; /* a full TLS 1.2 handshake ends with the server */
    stat_add(reused ? ST_RESUMED : ST_FULL);
    if (c->offered != NULL)
        pool_verdict(&c->key, reused);
    /* A resumed connection proves nothing new about the server: what it
     * earns inherits the moment of the full handshake that verified it. */
    c->born = reused && c->offered != NULL ? c->offered_born : time(NULL);
    c->verified = !(R(SSL_get_verify_mode)(s) & SSL_VERIFY_PEER) ||
                  R(SSL_get_verify_result)(s) == X509_V_OK;
    /* Resumed from a session the application supplied: the verdict was not
     * reached under this key, nor is its age known. Publish nothing. */
    if (reused && c->offered == NULL)
        c->verified = false;
    if (staple.lost)
        c->verified = false;
    /* A TLS 1.2 resumption gets no new-session callback; a ticket the
     * server renewed lives only in the connection's session. */
    SSL_SESSION *now = R(SSL_get_session)(s);
    if (reused && c->offered != NULL && now != NULL && !session_is_tls13(now) &&
        !session_same_ticket(now, c->offered))
        conn_session(s, now, false);
    if (c->offered != NULL) {
        R(SSL_SESSION_free)(c->offered);
        c->offered = NULL;
    }
    /* The chain the server sent, for the judge of the sessions it earns; a
     * session restored from the store has the leaf but not the chain. */
    STACK_OF(X509) *chain = R(SSL_get_peer_cert_chain)(s);
    if (chain != NULL)
        chain_set_certs(&c->chain, chain);
    else if (reused)
        c->chain = c->offered_chain, c->offered_chain = (struct chain){0};
    chain_free(&c->offered_chain);
    c->chain.staple = staple.staple, c->chain.staple_len = staple.staple_len;
    c->chain.lost = staple.lost;
    if (reused && c->offered_kept)
        conn_judge(c, s);
}

void conn_notice_done(struct conn *c, SSL *s)
{
    if (!c->done && !R(SSL_in_init)(s) && !R(SSL_in_before)(s))
        handshake_done(c, s);
}

/* Callbacks that find a certificate's issuer in the chain compare it with
 * the session's own leaf object (IO::Socket::SSL's status callback does,
 * by address): a chain decoded from the store gets that object as its leaf. */
static STACK_OF(X509) *same_leaf(STACK_OF(X509) *chain, const SSL *s)
{
    X509 *peer = R(SSL_get0_peer_certificate)(s);
    OPENSSL_STACK *sk = (OPENSSL_STACK *)chain;
    X509 *first = chain != NULL && R(OPENSSL_sk_num)(sk) > 0 ? R(OPENSSL_sk_value)(sk, 0) : NULL;
    if (peer != NULL && first != NULL && first != peer && R(X509_cmp)(first, peer) == 0 &&
        R(X509_up_ref)(peer) == 1) {
        R(OPENSSL_sk_set)(sk, 0, peer);
        R(X509_free)(first);
    }
    return chain;
}

STACK_OF(X509) *conn_peer_chain(const SSL *s)
{
    struct conn *c = conn_get((SSL *)s);
    if (c == NULL)
        return NULL;
    /* Inside a resumed handshake (its status callback), the chain behind
     * the offered session. */
    if (!c->done && c->offered != NULL && R(SSL_session_reused)(s))
        return same_leaf(chain_certs(&c->offered_chain), s);
    return c->done ? same_leaf(chain_certs(&c->chain), s) : NULL;
}

STACK_OF(X509) *conn_verified_chain(const SSL *s)
{
    const struct conn *c = conn_get((SSL *)s);
    return c != NULL ? c->verified_chain : NULL;
}

void conn_status_before(SSL *s)
{
    struct conn *c = conn_get(s);
    if (c == NULL || c->done || c->offered == NULL || !c->key.staple ||
        !R(SSL_session_reused)(s))
        return;
    c->judged = true;
    /* Should the staple not fit on the connection, the callback sees none
     * and judges that; the verdict is then not kept (nothing published). */
    if (c->offered_chain.lost || !ocsp_present(s, &c->offered_chain))
        c->offered_chain.lost = true;
}

void conn_status_after(SSL *s, int verdict)
{
    struct conn *c = conn_get(s);
    if (c != NULL && c->judged && verdict <= 0)
        pool_refuse(&c->key);
}
