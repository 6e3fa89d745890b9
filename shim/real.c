/* Finding the real OpenSSL functions.
 *
 * dlvsym with the OpenSSL 3 version name, so a program that links OpenSSL
 * 1.1 never reaches these hooks (its references carry OPENSSL_1_1_0 and bind
 * past us) and we never bind to a 1.1 libssl loaded beside 3.
 * RTLD_NEXT finds libraries in the global scope; Python loads _ssl (and with
 * it libssl) by dlopen into a local scope, where only a handle from
 * dlopen(RTLD_NOLOAD) reaches it. We never load a copy ourselves. */
#include <dlfcn.h>
#include <string.h>

#include "shim.h"

#define HOOK(ret, name, params, args) __typeof__(name) *ossl_##name;
#include "hooks.def"
#undef HOOK
#define OSSL_FN(name) __typeof__(name) *ossl_##name;
#include "ossl.def"
#undef OSSL_FN

#define OSSL_VERSION "OPENSSL_3.0.0"

struct slot {
    const char *name;
    void **ptr;
    bool hooked;
};

static const struct slot slots[] = {
#define HOOK(ret, name, params, args) {#name, (void **)&ossl_##name, true},
#include "hooks.def"
#undef HOOK
#define OSSL_FN(name) {#name, (void **)&ossl_##name, false},
#include "ossl.def"
#undef OSSL_FN
};

static void *find(const char *name)
{
    static const char *const sonames[] = {"libssl.so.3", "libcrypto.so.3"};
    void *p = dlvsym(RTLD_NEXT, name, OSSL_VERSION);
    for (size_t i = 0; p == NULL && i < sizeof sonames / sizeof *sonames; i++) {
        void *h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h != NULL)
            p = dlvsym(h, name, OSSL_VERSION);
        /* The handle is kept: the library stays loaded as long as the
         * program runs anyway, and dlclose would race other threads. */
    }
    return p;
}

void *real_lookup(const char *name)
{
    return find(name);
}

bool real_find(const char *name, void **slot)
{
    void *p = find(name);
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p != NULL;
}

bool real_resolve(void)
{
    bool all = true;
    for (size_t i = 0; i < sizeof slots / sizeof *slots; i++) {
        void *p = find(slots[i].name);
        __atomic_store_n(slots[i].ptr, p, __ATOMIC_RELEASE);
        if (p == NULL)
            all = false;
    }
    return all;
}
