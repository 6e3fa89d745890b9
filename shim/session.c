/* What the shim reads off a session to decide whether it may be offered. */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

void chain_free(struct chain *c)
{
    if (c->certs != NULL)
        R(OPENSSL_sk_pop_free)((OPENSSL_STACK *)c->certs, (OPENSSL_sk_freefunc)R(X509_free));
    free(c->der);
    free(c->staple);
    *c = (struct chain){0};
}

struct chain chain_copy(const struct chain *c)
{
    struct chain copy = {0};
    if (c->certs != NULL)
        copy.certs = R(X509_chain_up_ref)(c->certs);
    else if (c->der != NULL && (copy.der = malloc(c->der_len)) != NULL) {
        memcpy(copy.der, c->der, c->der_len);
        copy.der_len = c->der_len;
    }
    copy.lost = c->lost;
    if (c->staple != NULL && (copy.staple = malloc(c->staple_len)) != NULL) {
        memcpy(copy.staple, c->staple, c->staple_len);
        copy.staple_len = c->staple_len;
    } else if (c->staple != NULL) {
        copy.lost = true;
    }
    return copy;
}

/* Programs may read a connection's chain from two threads at once (the
 * getter takes a const SSL): each decodes, the first to finish publishes
 * its copy, and the DER stays until the chain is freed. Decoding failures
 * do not reach the application's error queue. */
STACK_OF(X509) *chain_certs(struct chain *c)
{
    STACK_OF(X509) *have = __atomic_load_n(&c->certs, __ATOMIC_ACQUIRE);
    if (have != NULL || c->der == NULL)
        return have;
    const unsigned char *p = c->der, *end = c->der + c->der_len;
    R(ERR_set_mark)();
    OPENSSL_STACK *certs = R(OPENSSL_sk_new_null)();
    while (certs != NULL && p < end) {
        X509 *x = R(d2i_X509)(NULL, &p, (long)(end - p));
        if (x == NULL || R(OPENSSL_sk_push)(certs, x) == 0) {
            R(X509_free)(x);
            R(OPENSSL_sk_pop_free)(certs, (OPENSSL_sk_freefunc)R(X509_free));
            certs = NULL;
        }
    }
    R(ERR_pop_to_mark)();
    if (certs != NULL &&
        !__atomic_compare_exchange_n(&c->certs, &have, (STACK_OF(X509) *)certs, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        R(OPENSSL_sk_pop_free)(certs, (OPENSSL_sk_freefunc)R(X509_free));
        return have;
    }
    return (STACK_OF(X509) *)certs;
}

unsigned char *chain_encode(const struct chain *c, size_t *len)
{
    *len = 0;
    if (c->certs == NULL) {
        unsigned char *der = c->der != NULL ? malloc(c->der_len) : NULL;
        if (der != NULL) {
            memcpy(der, c->der, c->der_len);
            *len = c->der_len;
        }
        return der;
    }
    const OPENSSL_STACK *sk = (const OPENSSL_STACK *)c->certs;
    int n = R(OPENSSL_sk_num)(sk);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        int l = R(i2d_X509)(R(OPENSSL_sk_value)(sk, i), NULL);
        if (l <= 0)
            return NULL;
        total += (size_t)l;
    }
    unsigned char *der = total > 0 ? malloc(total) : NULL, *q = der;
    for (int i = 0; der != NULL && i < n; i++)
        R(i2d_X509)(R(OPENSSL_sk_value)(sk, i), &q);
    *len = der != NULL ? total : 0;
    return der;
}

void pooled_free(struct pooled *p)
{
    if (p->sess != NULL)
        R(SSL_SESSION_free)(p->sess);
    p->sess = NULL;
    chain_free(&p->chain);
}

bool session_is_tls13(const SSL_SESSION *sess)
{
    /* Equality: DTLS version numbers count down from 0xFEFF. */
    return R(SSL_SESSION_get_protocol_version)(sess) == TLS1_3_VERSION;
}

bool session_same_ticket(const SSL_SESSION *a, const SSL_SESSION *b)
{
    const unsigned char *ta, *tb;
    size_t la, lb;
    R(SSL_SESSION_get0_ticket)(a, &ta, &la);
    R(SSL_SESSION_get0_ticket)(b, &tb, &lb);
    return la != 0 && la == lb && memcmp(ta, tb, la) == 0;
}

/* notAfter as a time_t; 0 (always past) when it cannot be read, so a
 * certificate we cannot date is never trusted from a cache. */
static time_t not_after(X509 *cert)
{
    struct tm tm;
    const ASN1_TIME *t = R(X509_get0_notAfter)(cert);
    if (t == NULL || R(ASN1_TIME_to_tm)(t, &tm) != 1)
        return 0;
    return timegm(&tm);
}

static time_t earliest(time_t a, time_t b)
{
    return a < b ? a : b;
}

time_t session_expiry(const SSL_SESSION *sess, time_t born, X509 *own_cert)
{
    time_t e = born + cfg.max_age;
    e = earliest(e, born + MAX_LIFETIME);
    /* The server's ticket lifetime: OpenSSL stores it as the timeout. */
    long given = R(SSL_SESSION_get_time)(sess);
    long life = R(SSL_SESSION_get_timeout)(sess);
    if (life > MAX_LIFETIME)
        life = MAX_LIFETIME;
    e = earliest(e, (time_t)given + life);
    /* OpenSSL takes a TLS 1.3 ticket's lifetime as the session timeout, but
     * not a TLS 1.2 one's. */
    unsigned long hint = R(SSL_SESSION_get_ticket_lifetime_hint)(sess);
    if (hint > 0)
        e = earliest(e, (time_t)given + (time_t)(hint < MAX_LIFETIME ? hint : MAX_LIFETIME));
    X509 *peer = R(SSL_SESSION_get0_peer)((SSL_SESSION *)sess);
    e = earliest(e, peer != NULL ? not_after(peer) : 0);
    if (own_cert != NULL)
        e = earliest(e, not_after(own_cert));
    return e;
}
