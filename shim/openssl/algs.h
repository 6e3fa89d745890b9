/* algs: the algorithms the shim computes with, from the library context
 * and property query of the SSL_CTX they serve. */
#ifndef RESUMESHIM_ALGS_H
#define RESUMESHIM_ALGS_H

#include <stdbool.h>
#include <stddef.h>

#include "real.h"

struct algs {
    OSSL_LIB_CTX *libctx;
    char *propq;
    EVP_MD *sha256, *sha1;
    EVP_CIPHER *aes; /* AES-256-CBC: the server mode's tickets */
    EVP_MAC *hmac;
};
/* NULL when the library context lacks any of them. */
struct algs *algs_fetch(OSSL_LIB_CTX *libctx, const char *propq);
void algs_free(struct algs *a);
/* The default library context's, for what serves no one context (the
 * store's file names, trust-store fingerprints' lookups). */
const struct algs *algs_default(void);
/* False for a NULL a, or when the computation fails. */
bool algs_sha256(const struct algs *a, const void *data, size_t len, unsigned char out[32]);
bool algs_hmac256(const struct algs *a, const unsigned char key[32], const void *data,
                  size_t len, unsigned char out[32]);

#endif
