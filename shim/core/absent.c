/* A stand-in for an absent library function (absent.h). */
#include <string.h>

#include "absent.h"
#include "log.h"

static long stub(void)
{
    return 0;
}

void *found_or_stub(void *fn, const char *lib, const char *name, bool *missing)
{
    if (fn != NULL)
        return fn;
    long (*s)(void) = stub;
    memcpy(&fn, &s, sizeof fn);
    __atomic_store_n(missing, true, __ATOMIC_RELEASE);
    LOG(LOG_WARN, "%s function %s not found; resumption is off", lib, name);
    return fn;
}
