/* Finding the real OpenSSL functions.
 *
 * dlvsym with the OpenSSL 3 version name, so a program that links OpenSSL
 * 1.1 never reaches these hooks (its references carry OPENSSL_1_1_0 and bind
 * past us) and we never bind to a 1.1 libssl loaded beside 3.
 * RTLD_NEXT finds libraries in the global scope; Python loads _ssl (and with
 * it libssl) by dlopen into a local scope, where only a handle from
 * dlopen(RTLD_NOLOAD) reaches it. We never load a copy ourselves.
 *
 * Each function is looked up when it is first called (R() in shim.h), not
 * all at start: a lookup costs about 1,600 instructions, and looking up all
 * 155 at the first OpenSSL call cost 230,000 where a resumed connection
 * uses a third of them. There is no table of names or pointers either: its
 * 300 relocations cost every program the shim is preloaded into about
 * 4,000 instructions at start, TLS or not. */
#include <dlfcn.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#endif
#endif

#include "real.h"
#include "absent.h"

/* Helgrind does not model C11 atomics: a pointer published with a release
 * store and read with acquire loads by threads that had no other contact
 * looks to it like a race. Such variables are taken out of its checking
 * (a no-op outside valgrind, run once per variable). */
void atomic_only(void *addr, size_t len)
{
#ifdef VALGRIND_HG_DISABLE_CHECKING
    VALGRIND_HG_DISABLE_CHECKING(addr, len);
#else
    (void)addr, (void)len;
#endif
}

#define HOOK(ret, name, params, args) __typeof__(name) *ossl_##name;
#include "hooks.def"
#undef HOOK
#define OSSL_FN(name) __typeof__(name) *ossl_##name;
#define OSSL_FN_T(name, ...) __typeof__(__VA_ARGS__) ossl_##name;
#include "ossl.def"
#undef OSSL_FN
#undef OSSL_FN_T

bool real_missing;

/* A function is found under the version that introduced it: OpenSSL 3.0's,
 * or, for the few the shim calls from later releases' headers, 3.3's
 * (SSL_SESSION_get_time_ex). */
static void *find_at(const char *name, const char *version)
{
    static const char *const sonames[] = {"libssl.so.3", "libcrypto.so.3"};
    void *p = dlvsym(RTLD_NEXT, name, version);
    for (size_t i = 0; p == NULL && i < sizeof sonames / sizeof *sonames; i++) {
        void *h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h != NULL)
            p = dlvsym(h, name, version);
        /* The handle is kept: the library stays loaded as long as the
         * program runs anyway, and dlclose would race other threads. */
    }
    return p;
}

static void *find(const char *name)
{
    void *p = find_at(name, "OPENSSL_3.0.0");
    return p != NULL ? p : find_at(name, "OPENSSL_3.3.0");
}

void *real_since(const char *name, const char *version)
{
    return find_at(name, version);
}

void *real_in(void *h, const char *name)
{
    void *p = dlvsym(h, name, "OPENSSL_3.0.0");
    return p != NULL ? p : dlvsym(h, name, "OPENSSL_3.3.0");
}

void *real_lookup(const char *name)
{
    return find(name);
}

bool real_find(const char *name, void **slot)
{
    atomic_only(slot, sizeof *slot);
    void *p = find(name);
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p != NULL;
}

/* Only a library that carries OpenSSL 3's version without all of its
 * functions lacks one: every OpenSSL function the shim calls reports
 * failure with 0 or NULL. */
void real_late(void **slot, const char *name)
{
    atomic_only(slot, sizeof *slot);
    __atomic_store_n(slot, found_or_stub(find(name), "OpenSSL 3", name, &real_missing),
                     __ATOMIC_RELEASE);
}

/* Set-up needs both libraries present; one function of each tells. */
bool real_resolve(void)
{
    return real_find("SSL_get_ex_data", (void **)&ossl_SSL_get_ex_data) &&
           real_find("CRYPTO_get_ex_new_index", (void **)&ossl_CRYPTO_get_ex_new_index);
}
