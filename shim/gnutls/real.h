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
