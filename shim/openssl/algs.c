/* The algorithms the shim computes with (fingerprints, ticket keys, ticket
 * encryption), fetched from the library context and property query of the
 * SSL_CTX they serve (SSL_CTX_new_ex). An application that restricts its
 * default library context (OpenSSL's sslapitest loads the null provider
 * into it) or chose a provider for its contexts (FIPS) has the shim's
 * crypto done where its own is. Fetched once per library context and
 * query: Python makes a context per connection, nearly all of them in the
 * default library context, which shares one set. */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#else
#define ANNOTATE_HAPPENS_BEFORE(obj) ((void)(obj))
#define ANNOTATE_HAPPENS_AFTER(obj) ((void)(obj))
#endif

#include "algs.h"

static struct algs *defaults;

void algs_free(struct algs *a)
{
    if (a == NULL)
        return;
    R(EVP_MD_free)(a->sha256);
    R(EVP_MD_free)(a->sha1);
    R(EVP_CIPHER_free)(a->aes);
    R(EVP_MAC_free)(a->hmac);
    free(a->propq);
    free(a);
}

struct algs *algs_fetch(OSSL_LIB_CTX *libctx, const char *propq)
{
    struct algs *a = calloc(1, sizeof *a);
    if (a == NULL || (propq != NULL && (a->propq = strdup(propq)) == NULL)) {
        free(a);
        return NULL;
    }
    a->libctx = libctx;
    /* A failed fetch leaves errors behind that are not the application's. */
    R(ERR_set_mark)();
    a->sha256 = R(EVP_MD_fetch)(libctx, "SHA256", propq);
    a->sha1 = R(EVP_MD_fetch)(libctx, "SHA1", propq);
    a->aes = R(EVP_CIPHER_fetch)(libctx, "AES-256-CBC", propq);
    a->hmac = R(EVP_MAC_fetch)(libctx, "HMAC", propq);
    R(ERR_pop_to_mark)();
    if (a->sha256 == NULL || a->sha1 == NULL || a->aes == NULL || a->hmac == NULL) {
        algs_free(a);
        return NULL;
    }
    return a;
}

/* Kept for the process's life: contexts come and go, the default library
 * context does not. NULL while it cannot give them (fetched again on the
 * next call). Published by an atomic exchange, which orders the set's
 * making before its use; helgrind does not see that order unless told
 * (the tests run threads under it), and the telling is a few instructions
 * that do nothing outside valgrind. */
const struct algs *algs_default(void)
{
    struct algs *a = __atomic_load_n(&defaults, __ATOMIC_ACQUIRE), *none = NULL;
    if (a != NULL) {
        ANNOTATE_HAPPENS_AFTER(&defaults);
        return a;
    }
    if ((a = algs_fetch(NULL, NULL)) == NULL)
        return a;
    ANNOTATE_HAPPENS_BEFORE(&defaults);
    if (!__atomic_compare_exchange_n(&defaults, &none, a, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        algs_free(a);
        a = none;
        ANNOTATE_HAPPENS_AFTER(&defaults);
    }
    return a;
}

bool algs_sha256(const struct algs *a, const void *data, size_t len, unsigned char out[32])
{
    return a != NULL && R(EVP_Digest)(data, len, out, NULL, a->sha256, NULL) == 1;
}

bool algs_hmac256(const struct algs *a, const unsigned char key[32], const void *data,
                  size_t len, unsigned char out[32])
{
    static char digest[] = "SHA256";
    OSSL_PARAM params[3] = {
        OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, sizeof digest - 1),
        OSSL_PARAM_END,
        OSSL_PARAM_END,
    };
    if (a == NULL)
        return false;
    if (a->propq != NULL)
        params[1] = (OSSL_PARAM)OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_PROPERTIES, a->propq,
                                                       strlen(a->propq));
    EVP_MAC_CTX *m = R(EVP_MAC_CTX_new)(a->hmac);
    size_t got = 0;
    bool ok = m != NULL && R(EVP_MAC_init)(m, key, 32, params) == 1 &&
              R(EVP_MAC_update)(m, data, len) == 1 && R(EVP_MAC_final)(m, out, &got, 32) == 1 &&
              got == 32;
    R(EVP_MAC_CTX_free)(m);
    return ok;
}
