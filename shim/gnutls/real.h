/* real: the system's GnuTLS functions, found at run time by their symbol
 * version, each on its first call (as on the OpenSSL side: a program that
 * never touches GnuTLS looks nothing up). */
#ifndef RESUMESHIM_GNUTLS_REAL_H
#define RESUMESHIM_GNUTLS_REAL_H

#include <stdbool.h>

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/ocsp.h>
#include <gnutls/x509.h>

/* GnuTLS 3.8.1's PSK callback, which may hand out flags as well: declared
 * here where older headers lack it, for its hook (a program built against
 * 3.7 never calls it; the shim finds it only where the library has it). */
#if GNUTLS_VERSION_NUMBER < 0x030801
typedef int gnutls_psk_client_credentials_function3(gnutls_session_t, gnutls_datum_t *username,
                                                    gnutls_datum_t *key,
                                                    gnutls_psk_key_flags *flags);
void gnutls_psk_set_client_credentials_function3(gnutls_psk_client_credentials_t cred,
                                                 gnutls_psk_client_credentials_function3 *func);
#endif

/* Each function's slot, and the symbol version it is looked up under. */
#define GHOOK(ret, name, params, args, version)                                \
    extern __typeof__(name) *gtls_##name;                                      \
    static const char gtls_ver_##name[] __attribute__((unused)) = #version;
#include "hooks.def"
#undef GHOOK
#define GFN(name, version)                                                     \
    extern __typeof__(name) *gtls_##name;                                      \
    static const char gtls_ver_##name[] __attribute__((unused)) = #version;
#include "gnutls.def"
#undef GFN

#define G(name)                                                                \
    (*({                                                                       \
        __typeof__(gtls_##name) g_ = __atomic_load_n(&gtls_##name, __ATOMIC_ACQUIRE); \
        if (__builtin_expect(g_ == NULL, 0)) {                                 \
            greal_late((void **)&gtls_##name, #name, gtls_ver_##name);         \
            g_ = __atomic_load_n(&gtls_##name, __ATOMIC_ACQUIRE);              \
        }                                                                      \
        g_;                                                                    \
    }))
void greal_late(void **slot, const char *name, const char *version);
/* Resolves one function for its hook, publishing it in slot; NULL when
 * GnuTLS has none. */
void *greal_find(const char *name, const char *version, void **slot);
/* Set once a function the shim needs turned out missing: it acts no more. */
extern bool greal_missing;
/* gnutls_free is a variable holding the deallocator. */
void greal_free(void *p);

#endif
