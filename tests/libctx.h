/* --libctx in the test programs: contexts made in a library context of
 * their own (SSL_CTX_new_ex), while the default one can compute nothing
 * (the null provider, as OpenSSL's sslapitest loads it), so that crypto
 * done in the wrong library context fails. */
#ifndef RESUMESHIM_TESTS_LIBCTX_H
#define RESUMESHIM_TESTS_LIBCTX_H

#include <stdio.h>
#include <openssl/err.h>
#include <openssl/provider.h>

static OSSL_LIB_CTX *own_libctx(void)
{
    OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();
    if (OSSL_PROVIDER_load(NULL, "null") == NULL || libctx == NULL ||
        OSSL_PROVIDER_load(libctx, "default") == NULL) {
        ERR_print_errors_fp(stderr);
        return NULL;
    }
    return libctx;
}

#endif
