/* verified: the library releases each feature was verified on
 * (verified.def), and whether the running library is one of them. */
#ifndef RESUMESHIM_VERIFIED_H
#define RESUMESHIM_VERIFIED_H

#include <stdbool.h>

enum feature {
#define VERIFIED(f, lib, releases, what) FEATURE_##f,
#include "verified.def"
#undef VERIFIED
    FEATURE_COUNT
};

/* A backend tells, at its set-up, which release of its library runs
 * (major, minor); every feature of that library is on from then if that
 * release is in its list, and each that is not is logged once (info). */
void verified_library(const char *lib, unsigned major, unsigned minor);
/* Whether f's library was told and f was verified on its release. */
bool feature_on(enum feature f);

#endif
