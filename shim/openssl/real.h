/* real: the system's OpenSSL 3 functions, found at run time by their
 * symbol version (real.c says why each is looked up on its first call),
 * and the types of the callbacks the hooks pass through. */
#ifndef RESUMESHIM_REAL_H
#define RESUMESHIM_REAL_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/ocsp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

/* Functions later releases added that the shim hooks, declared where the
 * headers are older: the shim finds them only where the library has them. */
#if OPENSSL_VERSION_NUMBER < 0x30300000L
int SSL_write_ex2(SSL *s, const void *buf, size_t num, uint64_t flags, size_t *written);
#endif

typedef int (*shim_new_session_cb)(SSL *s, SSL_SESSION *sess);
typedef int (*shim_cert_verify_cb)(X509_STORE_CTX *store, void *arg);
typedef int (*shim_status_cb)(SSL *s, void *arg);
typedef int (*shim_cert_cb)(SSL *s, void *arg);
typedef int (*shim_purpose_check)(const X509_PURPOSE *p, const X509 *x, int ca);
typedef int (*shim_trust_check)(X509_TRUST *t, X509 *x, int flags);
typedef int (*shim_trust_default)(int id, X509 *x, int flags);
typedef int (*shim_ticket_key_cb)(SSL *s, unsigned char *name, unsigned char *iv,
                                  EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac, int enc);

#define HOOK(ret, name, params, args) extern __typeof__(name) *ossl_##name;
#include "hooks.def"
#undef HOOK
#define OSSL_FN(name) extern __typeof__(name) *ossl_##name;
#define OSSL_FN_T(name, ...) extern __typeof__(__VA_ARGS__) ossl_##name;
#include "ossl.def"
#undef OSSL_FN
#undef OSSL_FN_T
/* A function is looked up on its first call. */
#define R(name)                                                                \
    (*({                                                                       \
        __typeof__(ossl_##name) r_ = __atomic_load_n(&ossl_##name, __ATOMIC_ACQUIRE); \
        if (__builtin_expect(r_ == NULL, 0)) {                                 \
            real_late((void **)&ossl_##name, #name);                           \
            r_ = __atomic_load_n(&ossl_##name, __ATOMIC_ACQUIRE);              \
        }                                                                      \
        r_;                                                                    \
    }))
void real_late(void **slot, const char *name);
/* Set once a function the shim needs turned out missing: it acts no more. */
extern bool real_missing;
/* A variable accessed only through atomics, from threads that may have no
 * other contact (see real.c). */
void atomic_only(void *addr, size_t len);

/* Whether libssl 3 and libcrypto 3 can be found; false leaves the shim off.
 * The hooks find their own real functions (and fail the call as libssl
 * itself would on error when there is none). */
bool real_resolve(void);
/* Resolves one function; for hooks that may run before real_resolve. */
bool real_find(const char *name, void **slot);
/* The system's OpenSSL 3 function of that name, or NULL. */
void *real_lookup(const char *name);
/* A function a later release added, under the version that introduced it
 * ("OPENSSL_3.2.0"), or NULL where the library has none. */
void *real_since(const char *name, const char *version);
/* The function of that name in the library of handle h, under the version
 * that introduced it (3.0's, or 3.3's), or NULL. */
void *real_in(void *h, const char *name);

#endif
