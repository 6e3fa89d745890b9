/* hook: what every exported GnuTLS entry point (hooks.c, listhooks.c)
 * starts with. */
#ifndef RESUMESHIM_GNUTLS_HOOK_H
#define RESUMESHIM_GNUTLS_HOOK_H

#include "real.h"

#define EXPORT __attribute__((visibility("default")))
/* The real function, found on first use under the version hooks.def
 * names; without one, the call fails as GnuTLS reports errors. */
#define REAL_OR(name, fail)                                                    \
    __typeof__(gtls_##name) real_ = __atomic_load_n(&gtls_##name, __ATOMIC_ACQUIRE); \
    if (real_ == NULL &&                                                       \
        (real_ = (__typeof__(real_))greal_find(#name, gtls_ver_##name,         \
                                               (void **)&gtls_##name)) == NULL) \
        return fail
#define REAL_OR_VOID(name) REAL_OR(name, )

#endif
