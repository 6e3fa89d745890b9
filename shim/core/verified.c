/* The library releases each feature was verified on (verified.h). */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "verified.h"

/* Arrays, not pointers: a table of pointers costs every program the shim
 * is preloaded into a relocation each at start. */
static const struct {
    char lib[16], releases[16], what[32];
} table[FEATURE_COUNT] = {
#define VERIFIED(f, l, r, w) [FEATURE_##f] = {l, r, w},
#include "verified.def"
#undef VERIFIED
};

/* Written once per library, by its backend's set-up, before anything asks. */
static bool on[FEATURE_COUNT];

static bool listed(const char *releases, const char *release)
{
    size_t n = strlen(release);
    for (const char *p = releases; (p = strstr(p, release)) != NULL; p += n)
        if ((p == releases || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

void verified_library(const char *lib, unsigned major, unsigned minor)
{
    char release[24];
    snprintf(release, sizeof release, "%u.%u", major, minor);
    for (int f = 0; f < FEATURE_COUNT; f++) {
        if (strcmp(table[f].lib, lib) != 0)
            continue;
        bool yes = listed(table[f].releases, release);
        __atomic_store_n(&on[f], yes, __ATOMIC_RELEASE);
        if (!yes)
            LOG(LOG_INFO, "%s %s: %s is not verified on this release; off (verified on %s)", lib,
                release, table[f].what, table[f].releases);
    }
}

bool feature_on(enum feature f)
{
    return __atomic_load_n(&on[f], __ATOMIC_ACQUIRE);
}
