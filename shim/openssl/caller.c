/* Which OpenSSL a caller means.
 *
 * The hooks carry OpenSSL 3's symbol version, so a module bound to a second,
 * private copy of OpenSSL 3 (a renamed libssl.so.3 inside a Python wheel)
 * binds to them too. Its objects belong to its copy: handing them to the
 * system's would crash the host. So each calling module is classified once,
 * by what its own lookup scope resolves one libcrypto function to (every
 * copy of libssl brings its own libcrypto); a module whose scope names
 * another copy has its calls forwarded there, untouched, each function
 * looked up in that scope when the module first calls it. (Looking up every
 * hooked name in every calling module cost curl 500,000 instructions.)
 *
 * The fast path is a per-thread cache of the last few callers' address
 * ranges: two comparisons per hook call. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "caller.h"
#include "fork.h"
#include "log.h"
#include "real.h"

struct module {
    struct module *next;
    uintptr_t lo, hi;
    bool foreign;              /* its scope names another copy */
    void *scope;               /* where foreign: the module's handle */
    void *fn[HOOK_COUNT];      /* that copy's functions, once looked up */
};

/* Entries are never freed: per-thread caches point at them. */
static struct module *modules;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static _Thread_local const struct module *recent[4];
static _Thread_local unsigned recent_next;
_Thread_local struct caller_range caller_native;

/* The hooks' names as one block and offsets into it: a table of pointers
 * would cost a relocation each at the start of every program. */
static const struct names {
#define HOOK(ret, name, params, args) char name[sizeof #name];
#include "hooks.def"
#undef HOOK
} names = {
#define HOOK(ret, name, params, args) #name,
#include "hooks.def"
#undef HOOK
};
static const unsigned short name_at[HOOK_COUNT] = {
#define HOOK(ret, name, params, args) offsetof(struct names, name),
#include "hooks.def"
#undef HOOK
};

static const char *hook_name(unsigned i)
{
    return (const char *)&names + name_at[i];
}

struct found {
    uintptr_t addr, lo, hi;
    const char *name;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct found *f = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (start < lo)
            lo = start;
        if (start + ph->p_memsz > hi)
            hi = start + ph->p_memsz;
    }
    if (f->addr < lo || f->addr >= hi)
        return 0;
    f->lo = lo;
    f->hi = hi;
    f->name = info->dlpi_name;
    return 1;
}

static const struct module *known(uintptr_t addr)
{
    for (const struct module *m = modules; m != NULL; m = m->next)
        if (addr >= m->lo && addr < m->hi)
            return m;
    return NULL;
}

/* Whether a function a module's scope names is this process's OpenSSL:
 * one of the shim's own hooks (the main program's scope is the global one,
 * the shim first), or the system's function, found afresh (this may run
 * before the shim starts). The shim's own range is found once, as the
 * callers' are (dladdr would cost 50,000 instructions a call). */
static bool ours(void *p, const char *name)
{
    static uintptr_t lo, hi;
    if (__atomic_load_n(&hi, __ATOMIC_ACQUIRE) == 0) {
        struct found f = {.addr = (uintptr_t)&real_foreign};
        if (dl_iterate_phdr(find_module, &f) != 0) {
            __atomic_store_n(&lo, f.lo, __ATOMIC_RELAXED);
            __atomic_store_n(&hi, f.hi, __ATOMIC_RELEASE);
        }
    }
    uintptr_t a = (uintptr_t)p;
    if (a >= __atomic_load_n(&lo, __ATOMIC_RELAXED) && a < __atomic_load_n(&hi, __ATOMIC_ACQUIRE))
        return true;
    return p == real_lookup(name);
}

/* The loader's own lock is taken outside ours: a library constructor
 * running under the loader's lock may call OpenSSL, and so a hook. */
static const struct module *classify(uintptr_t addr)
{
    pthread_mutex_lock(&lock);
    const struct module *m = known(addr);
    pthread_mutex_unlock(&lock);
    if (m != NULL)
        return m;
    struct found f = {.addr = addr};
    struct module *new = calloc(1, sizeof *new);
    if (new == NULL || dl_iterate_phdr(find_module, &f) == 0) {
        free(new);
        return NULL;
    }
    new->lo = f.lo;
    new->hi = f.hi;
    const char *name = f.name != NULL && f.name[0] != '\0' ? f.name : NULL;
    /* The handle is kept: unloading a module that calls OpenSSL while it
     * may still be in a hook is not ours to risk. */
    void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    const char *probe = hook_name(IDX_X509_STORE_add_cert);
    void *p = h != NULL ? dlvsym(h, probe, "OPENSSL_3.0.0") : NULL;
    if (p != NULL && !ours(p, probe)) {
        new->foreign = true;
        new->scope = h;
        atomic_only(new->fn, sizeof new->fn);
    }
    if (new->foreign)
        LOG(LOG_INFO, "%s uses its own OpenSSL 3: its calls pass through untouched",
            name != NULL ? name : "the program");
    pthread_mutex_lock(&lock);
    if ((m = known(addr)) == NULL) {
        new->next = modules;
        modules = new;
        m = new;
        new = NULL;
    }
    pthread_mutex_unlock(&lock);
    free(new); /* another thread classified it first */
    return m;
}

/* Registered on first use, not by the shim's set-up: callers are
 * classified even when the shim itself is off. */
static void register_atfork(void)
{
    fork_guard(&lock);
}

void *real_foreign(const void *caller, unsigned hook)
{
    uintptr_t addr = (uintptr_t)caller;
    const struct module *m = NULL;
    for (unsigned i = 0; i < sizeof recent / sizeof *recent; i++)
        if (recent[i] != NULL && addr >= recent[i]->lo && addr < recent[i]->hi) {
            m = recent[i];
            break;
        }
    if (m == NULL) {
        pthread_once(&fork_once, register_atfork);
        m = classify(addr);
        if (m == NULL)
            return NULL;
        recent[recent_next++ % (sizeof recent / sizeof *recent)] = m;
    }
    if (!m->foreign) {
        caller_native = (struct caller_range){m->lo, m->hi};
        return NULL;
    }
    void *p = __atomic_load_n(&m->fn[hook], __ATOMIC_ACQUIRE);
    if (p == NULL) {
        /* A function the other copy lacks resolves to ours, through the
         * global scope: such a call is the system's to handle, marked by a
         * pointer that is no function (the entry itself). Two threads may
         * both look one up: the same answer. */
        p = real_in(m->scope, hook_name(hook));
        if (p == NULL || ours(p, hook_name(hook)))
            p = (void *)m;
        __atomic_store_n(&((struct module *)m)->fn[hook], p, __ATOMIC_RELEASE);
    }
    return p == (const void *)m ? NULL : p;
}
