/* Certificate callbacks seen to run (certcb.h).
 *
 * Verified on this machine (OpenSSL 3.0, a client with SSL_CTX_set_cert_cb
 * against openssl s_server, TLS 1.3 and 1.2): no call without -verify, one
 * in a full handshake with -verify or -Verify, none in a resumed one.
 *
 * OpenSSL has no getter for either callback, so the trampolines are never
 * seen by the program. A connection copies its context's callback and
 * argument when it is made (ssl_cert_dup), and keeps them when the context
 * gets another later: each SSL_CTX_set_cert_cb gets a pair of its own,
 * freed with the context, which outlives every connection holding a copy
 * (SSL_new takes a reference; SSL_set_SSL_CTX replaces the copy with the
 * new context's). A connection's own callback stays in its ex_data, which
 * SSL_dup copies, as it copies the connection's certificate settings. */
#include <stdlib.h>

#include "certcb.h"
#include "conn.h"

struct pair {
    shim_cert_cb cb;
    void *arg;
    struct pair *next; /* a context's earlier pairs */
};

static int ctx_index = -1, ssl_index = -1;

static void free_pairs(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                       void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    for (struct pair *p = ptr, *next; p != NULL; p = next) {
        next = p->next;
        free(p);
    }
}

static int dup_pair(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                    long argl, void *argp)
{
    (void)to, (void)from, (void)idx, (void)argl, (void)argp;
    const struct pair *src = *from_d;
    struct pair *copy = src != NULL ? malloc(sizeof *copy) : NULL;
    if (copy != NULL)
        *copy = (struct pair){src->cb, src->arg, NULL};
    /* No memory: the copy's callback would find nothing and fail its
     * handshake; OpenSSL's SSL_dup fails on a 0 here. */
    *from_d = copy;
    return src == NULL || copy != NULL;
}

void certcb_init(void)
{
    ctx_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL_CTX, 0, NULL, NULL, NULL,
                                           free_pairs);
    ssl_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL, 0, NULL, NULL, dup_pair,
                                           free_pairs);
}

static int via_ctx(SSL *s, void *arg)
{
    const struct pair *p = arg;
    conn_cert_asked(s);
    return p->cb(s, p->arg);
}

static int via_ssl(SSL *s, void *arg)
{
    const struct pair *p = R(SSL_get_ex_data)(s, ssl_index);
    conn_cert_asked(s);
    return p != NULL ? p->cb(s, arg) : 1;
}

bool certcb_set_ctx(SSL_CTX *ctx, shim_cert_cb cb, void *arg)
{
    struct pair *p = ctx_index >= 0 ? malloc(sizeof *p) : NULL;
    if (p == NULL)
        return false;
    *p = (struct pair){cb, arg, R(SSL_CTX_get_ex_data)(ctx, ctx_index)};
    if (R(SSL_CTX_set_ex_data)(ctx, ctx_index, p) != 1) {
        free(p);
        return false;
    }
    R(SSL_CTX_set_cert_cb)(ctx, via_ctx, p);
    return true;
}

bool certcb_set_ssl(SSL *s, shim_cert_cb cb, void *arg)
{
    struct pair *p = ssl_index >= 0 ? R(SSL_get_ex_data)(s, ssl_index) : NULL;
    if (p == NULL && ssl_index >= 0 && (p = malloc(sizeof *p)) != NULL &&
        R(SSL_set_ex_data)(s, ssl_index, p) != 1) {
        free(p);
        p = NULL;
    }
    if (p == NULL)
        return false;
    *p = (struct pair){cb, arg, NULL};
    R(SSL_set_cert_cb)(s, via_ssl, arg);
    return true;
}
