/* A library's word on its own release, made up: preloaded after the shim
 * (LD_PRELOAD="libresumeshim.so fakever.so"), it is what the shim's
 * lookups past itself find first. FAKE_OPENSSL_RELEASE=3.4 makes
 * OpenSSL_version_num() say 3.4.0, FAKE_GNUTLS_RELEASE=3.6.0 makes
 * gnutls_check_version(NULL) say "3.6.0"; unset, or asked anything else,
 * the real library answers. The version script (tests/fakever.map) gives
 * each the symbol version of the library it stands in for. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long OpenSSL_version_num(void);
const char *gnutls_check_version(const char *req);

/* As the shim finds them: past this library, or in the library a program
 * loaded into a scope of its own (Python's _ssl). */
static void *real(const char *name, const char *version, const char *soname)
{
    void *p = dlvsym(RTLD_NEXT, name, version);
    void *h = p == NULL ? dlopen(soname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    return h != NULL ? dlvsym(h, name, version) : p;
}

unsigned long OpenSSL_version_num(void)
{
    unsigned major, minor;
    const char *r = getenv("FAKE_OPENSSL_RELEASE");
    if (r != NULL && sscanf(r, "%u.%u", &major, &minor) == 2)
        return (unsigned long)major << 28 | (unsigned long)minor << 20;
    unsigned long (*fn)(void) = (unsigned long (*)(void))real("OpenSSL_version_num",
        "OPENSSL_3.0.0", "libcrypto.so.3");
    return fn != NULL ? fn() : 0;
}

const char *gnutls_check_version(const char *req)
{
    const char *r = getenv("FAKE_GNUTLS_RELEASE");
    if (req == NULL && r != NULL && *r != '\0')
        return r;
    const char *(*fn)(const char *) = (const char *(*)(const char *))real("gnutls_check_version",
        "GNUTLS_3_4", "libgnutls.so.30");
    return fn != NULL ? fn(req) : NULL;
}
