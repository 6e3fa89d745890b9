/* Finding the real GnuTLS functions (real.h). dlvsym with GnuTLS's own
 * version names, through RTLD_NEXT and, for a library loaded into a local
 * scope, a handle from dlopen(RTLD_NOLOAD); the shim never loads GnuTLS
 * itself. */
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "real.h"
#include "absent.h"

#define GHOOK(ret, name, params, args, version) __typeof__(name) *gtls_##name;
#include "hooks.def"
#undef GHOOK
#define GFN(name, version) __typeof__(name) *gtls_##name;
#include "gnutls.def"
#undef GFN

bool greal_missing;

/* The library the shim calls stays loaded: a program that loads GnuTLS
 * with a plugin (RTLD_GLOBAL), unloads it and loads it again elsewhere
 * would otherwise have the shim call code that is gone (the functions are
 * found once). The local scope's handle below is never closed, to the
 * same end. */
static void pin(void *p)
{
    static bool pinned;
    Dl_info info;
    if (__atomic_load_n(&pinned, __ATOMIC_ACQUIRE) || dladdr(p, &info) == 0 ||
        info.dli_fname == NULL)
        return;
    if (dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != NULL)
        __atomic_store_n(&pinned, true, __ATOMIC_RELEASE);
}

static void *find(const char *name, const char *version)
{
    void *p = dlvsym(RTLD_NEXT, name, version);
    if (p != NULL)
        pin(p);
    else {
        void *h = dlopen("libgnutls.so.30", RTLD_LAZY | RTLD_NOLOAD);
        if (h != NULL)
            p = dlvsym(h, name, version);
    }
    return p;
}

void *greal_find(const char *name, const char *version, void **slot)
{
    void *p = find(name, version);
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
}

/* Where a stand-in's 0 means success, the caller's outputs were zeroed
 * before the call, and the shim checks greal_missing before it trusts
 * them. */
void greal_late(void **slot, const char *name, const char *version)
{
    __atomic_store_n(slot, found_or_stub(find(name, version), "GnuTLS", name, &greal_missing),
                     __ATOMIC_RELEASE);
}

void greal_free(void *p)
{
    static gnutls_free_function *var;
    gnutls_free_function *v = __atomic_load_n(&var, __ATOMIC_ACQUIRE);
    if (v == NULL) {
        v = find("gnutls_free", "GNUTLS_3_4");
        __atomic_store_n(&var, v, __ATOMIC_RELEASE);
    }
    if (v != NULL && *v != NULL)
        (*v)(p);
}
