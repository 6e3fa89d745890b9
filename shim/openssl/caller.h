/* caller: which copy of OpenSSL 3 a hook's caller is bound to. A module
 * bound to another copy (a program's own static or bundled OpenSSL) has its
 * call forwarded there untouched. */
#ifndef RESUMESHIM_CALLER_H
#define RESUMESHIM_CALLER_H

#include <stdint.h>

enum {
#define HOOK(ret, name, params, args) IDX_##name,
#include "hooks.def"
#undef HOOK
    HOOK_COUNT
};
/* The function to forward a hook's call to when its caller is bound to
 * another copy of OpenSSL 3; NULL for callers of the system's. */
void *real_foreign(const void *caller, unsigned hook);
/* The address range of the module this thread last saw call a hook for the
 * system's OpenSSL: a caller within it needs no real_foreign (a keep-alive
 * request makes two hook calls, and the whole hook must stay within about
 * 1 % of what the request costs). Empty (lo == hi) until there is one. */
struct caller_range {
    uintptr_t lo, hi;
};
extern _Thread_local struct caller_range caller_native;

#endif
