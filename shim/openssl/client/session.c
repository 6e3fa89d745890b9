/* OpenSSL's sessions as the core sees them (session.h). */
#include <stdlib.h>
#include <string.h>

#include "algs.h"
#include "config.h"
#include "session.h"
#include "util.h"

static unsigned char *certs_encode(const void *certs, size_t *len);

/* Certificates one after another, decoded in a library context (NULL: the
 * default one). Decoding failures do not reach the application's error
 * queue. */
static OPENSSL_STACK *decode(const unsigned char *p, const unsigned char *end,
                             OSSL_LIB_CTX *libctx, const char *propq)
{
    bool own = libctx != NULL || propq != NULL;
    R(ERR_set_mark)();
    OPENSSL_STACK *certs = R(OPENSSL_sk_new_null)();
    while (certs != NULL && p < end) {
        /* d2i_X509 fills an object made in the library context; on
         * failure it frees it and sets it NULL (d2i_X509(3)). */
        X509 *x = own ? R(X509_new_ex)(libctx, propq) : NULL;
        if (!own || x != NULL)
            x = R(d2i_X509)(own ? &x : NULL, &p, (long)(end - p));
        if (x == NULL || R(OPENSSL_sk_push)(certs, x) == 0) {
            R(X509_free)(x);
            R(OPENSSL_sk_pop_free)(certs, (OPENSSL_sk_freefunc)R(X509_free));
            certs = NULL;
        }
    }
    R(ERR_pop_to_mark)();
    return certs;
}

/* Programs may read a connection's chain from two threads at once (the
 * getter takes a const SSL): each decodes, the first to finish publishes
 * its copy, and the DER stays until the chain is freed. */
STACK_OF(X509) *chain_certs(struct chain *c)
{
    STACK_OF(X509) *have = __atomic_load_n((STACK_OF(X509) **)&c->certs, __ATOMIC_ACQUIRE);
    if (have != NULL || c->der == NULL)
        return have;
    OPENSSL_STACK *certs = decode(c->der, c->der + c->der_len, NULL, NULL);
    if (certs != NULL &&
        !__atomic_compare_exchange_n((STACK_OF(X509) **)&c->certs, &have,
                                     (STACK_OF(X509) *)certs, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        R(OPENSSL_sk_pop_free)(certs, (OPENSSL_sk_freefunc)R(X509_free));
        return have;
    }
    if (certs != NULL)
        c->ops = &ossl_ops;
    return (STACK_OF(X509) *)certs;
}

STACK_OF(X509) *chain_remade(STACK_OF(X509) *certs, OSSL_LIB_CTX *libctx, const char *propq)
{
    size_t len;
    unsigned char *der = certs != NULL ? certs_encode(certs, &len) : NULL;
    OPENSSL_STACK *made = der != NULL ? decode(der, der + len, libctx, propq) : NULL;
    free(der);
    return (STACK_OF(X509) *)made;
}

void chain_set_certs(struct chain *c, STACK_OF(X509) *certs)
{
    c->certs = R(X509_chain_up_ref)(certs);
    c->ops = c->certs != NULL ? &ossl_ops : NULL;
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

time_t chain_expiry(STACK_OF(X509) *chain)
{
    const OPENSSL_STACK *sk = (const OPENSSL_STACK *)chain;
    int n = sk != NULL ? R(OPENSSL_sk_num)(sk) : 0;
    time_t e = n > 0 ? not_after(R(OPENSSL_sk_value)(sk, 0)) : 0;
    for (int i = 1; i < n; i++)
        e = earliest(e, not_after(R(OPENSSL_sk_value)(sk, i)));
    return e;
}

time_t session_expiry(const SSL_SESSION *sess, time_t born, long max_age, X509 *own_cert)
{
    time_t e = born + max_age;
    e = earliest(e, born + MAX_LIFETIME);
    /* The server's ticket lifetime: OpenSSL stores it as the timeout. */
#if OPENSSL_VERSION_NUMBER >= 0x30300000L
    time_t given = R(SSL_SESSION_get_time_ex)(sess);
#else
    time_t given = R(SSL_SESSION_get_time)(sess);
#endif
    long life = R(SSL_SESSION_get_timeout)(sess);
    if (life > MAX_LIFETIME)
        life = MAX_LIFETIME;
    e = earliest(e, given + life);
    /* OpenSSL takes a TLS 1.3 ticket's lifetime as the session timeout, but
     * not a TLS 1.2 one's. */
    unsigned long hint = R(SSL_SESSION_get_ticket_lifetime_hint)(sess);
    if (hint > 0)
        e = earliest(e, given + (time_t)(hint < MAX_LIFETIME ? hint : MAX_LIFETIME));
    X509 *peer = R(SSL_SESSION_get0_peer)((SSL_SESSION *)sess);
    e = earliest(e, peer != NULL ? not_after(peer) : 0);
    if (own_cert != NULL)
        e = earliest(e, not_after(own_cert));
    return e;
}

/* The table of operations (include/seam.h). */
static void sess_free(void *sess)
{
    R(SSL_SESSION_free)(sess);
}

static bool sess_up_ref(void *sess)
{
    return R(SSL_SESSION_up_ref)(sess) == 1;
}

static void *sess_dup(const void *sess)
{
    return R(SSL_SESSION_dup)(sess);
}

static bool sess_tls13(const void *sess)
{
    return session_is_tls13(sess);
}

static bool sess_resumable(const void *sess)
{
    return R(SSL_SESSION_is_resumable)(sess) == 1;
}

static uint64_t sess_digest(const void *sess)
{
    const unsigned char *t;
    size_t len;
    R(SSL_SESSION_get0_ticket)(sess, &t, &len);
    return fnv1a64(t, len);
}

static bool sess_same(const void *a, const void *b)
{
    return session_same_ticket(a, b);
}

static unsigned char *sess_encode(const void *sess, size_t *len)
{
    int n = R(i2d_SSL_SESSION)(sess, NULL);
    unsigned char *der = n > 0 ? malloc((size_t)n) : NULL, *q = der;
    *len = der != NULL && R(i2d_SSL_SESSION)(sess, &q) == n ? (size_t)n : 0;
    if (*len == 0) {
        free(der);
        der = NULL;
    }
    return der;
}

static void *sess_decode(const unsigned char *der, size_t len)
{
    const unsigned char *p = der;
    return R(d2i_SSL_SESSION)(NULL, &p, (long)len);
}

static void certs_free(void *certs)
{
    R(OPENSSL_sk_pop_free)(certs, (OPENSSL_sk_freefunc)R(X509_free));
}

static void *certs_up_ref(void *certs)
{
    return R(X509_chain_up_ref)(certs);
}

static unsigned char *certs_encode(const void *certs, size_t *len)
{
    const OPENSSL_STACK *sk = certs;
    int n = R(OPENSSL_sk_num)(sk);
    size_t total = 0;
    *len = 0;
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

/* The store serves the process, not one context: the default library
 * context's digest. */
static bool sha256(const void *data, size_t len, unsigned char out[32])
{
    return algs_sha256(algs_default(), data, len, out);
}

const struct tls_ops ossl_ops = {
    .name = "openssl",
    .free = sess_free,
    .up_ref = sess_up_ref,
    .dup = sess_dup,
    .is_tls13 = sess_tls13,
    .resumable = sess_resumable,
    .ticket_digest = sess_digest,
    .same_ticket = sess_same,
    .encode = sess_encode,
    .decode = sess_decode,
    .certs_free = certs_free,
    .certs_up_ref = certs_up_ref,
    .certs_encode = certs_encode,
    .sha256 = sha256,
};
