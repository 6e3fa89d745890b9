/* Preloaded before the shim: every malloc of the size of a hash table's
 * first buckets (uthash: 32 buckets of 16 bytes) made from the shim's own
 * code fails, as when memory runs out at the moment a table is made.
 * Whatever else the program or its libraries allocate is served. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

extern void *__libc_malloc(size_t size);

static int from_shim(const void *at)
{
    Dl_info info;
    if (dladdr(at, &info) == 0 || info.dli_fname == NULL)
        return 0;
    const char *base = strrchr(info.dli_fname, '/');
    return strcmp(base != NULL ? base + 1 : info.dli_fname, "libresumeshim.so") == 0;
}

void *malloc(size_t size)
{
    if (size == 32 * 16 && from_shim(__builtin_return_address(0)))
        return NULL;
    return __libc_malloc(size);
}
