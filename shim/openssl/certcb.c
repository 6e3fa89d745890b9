/* Certificate callbacks seen to run (certcb.h).
 *
 * Verified on this machine (OpenSSL 3.0, a client with SSL_CTX_set_cert_cb
 * against openssl s_server, TLS 1.3 and 1.2): no call without -verify, one
 * in a full handshake with -verify or -Verify, none in a resumed one.
 *
 * Only a connection's own callback (SSL_set_cert_cb) is watched. A
 * context's is copied into each connection made after it is set, and not
 * into those made before, which no hook sees (SSL_new): a context with one
 * resumes nothing (hooks.c). OpenSSL has no getter for either callback, so
 * the trampoline is never seen by the program. The connection's callback
 * stays in its ex_data, which SSL_dup copies, as it copies the connection's
 * certificate settings; SSL_set_SSL_CTX replaces those settings with the
 * new context's, callback and all (hooks.c notes it). */
#include <stdlib.h>

#include "certcb.h"
#include "conn.h"
#include "exdata.h"

struct pair {
    shim_cert_cb cb;
    void *arg;
};

static int ssl_index = -1;

static int dup_pair(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                    long argl, void *argp)
{
    (void)to, (void)from, (void)idx, (void)argl, (void)argp;
    const struct pair *src = *from_d;
    struct pair *copy = src != NULL ? malloc(sizeof *copy) : NULL;
    if (copy != NULL)
        *copy = *src;
    /* No memory: the copy's callback would find nothing; OpenSSL's
     * SSL_dup fails on a 0 here. */
    *from_d = copy;
    return src == NULL || copy != NULL;
}

void certcb_init(void)
{
    ssl_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL, 0, NULL, NULL, dup_pair,
                                           exdata_free);
}

static int via_ssl(SSL *s, void *arg)
{
    const struct pair *p = R(SSL_get_ex_data)(s, ssl_index);
    conn_cert_asked(s);
    return p != NULL ? p->cb(s, arg) : 1;
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
    *p = (struct pair){cb, arg};
    R(SSL_set_cert_cb)(s, via_ssl, arg);
    return true;
}
