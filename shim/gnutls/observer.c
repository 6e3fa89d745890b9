/* Handshake hooks known to watch without deciding (observer.h).
 *
 * libcurl's GnuTLS backend sets one on every connection
 * (gnutls_handshake_set_hook_function(session, GNUTLS_HANDSHAKE_ANY,
 * GNUTLS_HOOK_POST, gtls_handshake_cb), lib/vtls/gtls.c of curl 8.14.1,
 * gtls_connect_step1): gtls_handshake_cb writes a trace line when tracing is
 * on, takes the session's data into curl's own cache at a NewSessionTicket,
 * and returns 0 for every message; curl verifies the server itself after the
 * handshake (gnutls_certificate_verify_peers2, gtls.c), which the judge
 * serves like any program's check. Checked in Debian 13's
 * libcurl3t64-gnutls 8.14.1 (its code, and the call in the binary: the same
 * type and time). Another release of libcurl, or another library's hook, is
 * not taken for an observer. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "observer.h"
#include "verified.h"

/* The head of libcurl's curl_version_info_data, the same since its first
 * age (curl/curl.h). */
struct curl_version_head {
    int age;
    const char *version;
    unsigned int version_num; /* 0xXXYYZZ */
};

static bool curl_verified(void *handle)
{
    const struct curl_version_head *(*info)(int) =
        (const struct curl_version_head *(*)(int))dlsym(handle, "curl_version_info");
    const struct curl_version_head *v = info != NULL ? info(0) : NULL;
    if (v == NULL)
        return false;
    verified_library("libcurl-gnutls", v->version_num >> 16, (v->version_num >> 8) & 0xff);
    return feature_on(FEATURE_CURL_GNUTLS_HOOK);
}

bool observer(gnutls_handshake_hook_func f, int when)
{
    Dl_info info;
    if (when != GNUTLS_HOOK_POST || dladdr((void *)f, &info) == 0 || info.dli_fname == NULL)
        return false;
    const char *base = strrchr(info.dli_fname, '/');
    base = base != NULL ? base + 1 : info.dli_fname;
    if (strncmp(base, "libcurl-gnutls.so.4", strlen("libcurl-gnutls.so.4")) != 0)
        return false;
    /* One libcurl-gnutls in a process: its release is read once. */
    static int known; /* 0: not yet, 1: verified, 2: not */
    int k = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
    if (k == 0) {
        /* The library the hook lives in, already loaded: no load of ours. */
        void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        k = h != NULL && curl_verified(h) ? 1 : 2;
        if (h != NULL)
            dlclose(h);
        __atomic_store_n(&known, k, __ATOMIC_RELEASE);
    }
    return k == 1;
}
