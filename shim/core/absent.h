/* absent: what stands in for a library function the backends look up at
 * run time and do not find. */
#ifndef RESUMESHIM_ABSENT_H
#define RESUMESHIM_ABSENT_H

#include <stdbool.h>

/* fn, a library's function found at run time; or, when it was not found,
 * a stand-in that returns 0 (no pointer, failure or "no" for every
 * function the backends call; the x86-64 and AArch64 conventions let a
 * function of no arguments be called with some), *missing set so that the
 * shim stops acting, and one warning naming it. */
void *found_or_stub(void *fn, const char *lib, const char *name, bool *missing);

#endif
