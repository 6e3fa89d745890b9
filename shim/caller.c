/* Which OpenSSL a caller means.
 *
 * The hooks carry OpenSSL 3's symbol version, so a module bound to a second,
 * private copy of OpenSSL 3 (a renamed libssl.so.3 inside a Python wheel)
 * binds to them too. Its objects belong to its copy: handing them to the
 * system's would crash the host. So each calling module is classified once,
 * by what its own lookup scope resolves each hooked name to; a module whose
 * scope names another copy has its calls forwarded there, untouched.
 *
 * The fast path is a per-thread cache of the last few callers' address
 * ranges: two comparisons per hook call. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

struct module {
    struct module *next;
    uintptr_t lo, hi;
    bool foreign;              /* any hook resolves to another copy */
    void *fn[HOOK_COUNT];      /* that copy's functions, where foreign */
};

/* Entries are never freed: per-thread caches point at them. */
static struct module *modules;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static _Thread_local const struct module *recent[4];
static _Thread_local unsigned recent_next;

static const char *const names[HOOK_COUNT] = {
#define HOOK(ret, name, params, args) #name,
#include "hooks.def"
#undef HOOK
};

static void *own(unsigned i)
{
    static void *const hooks[HOOK_COUNT] = {
#define HOOK(ret, name, params, args) (void *)&name,
#include "hooks.def"
#undef HOOK
    };
    return hooks[i];
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
    for (unsigned i = 0; h != NULL && i < HOOK_COUNT; i++) {
        void *p = dlvsym(h, names[i], "OPENSSL_3.0.0");
        /* Compared with the system's function found afresh, not with the
         * shim's resolved pointers: this may run before the shim starts. */
        if (p != NULL && p != own(i) && p != real_lookup(names[i])) {
            new->fn[i] = p;
            new->foreign = true;
        }
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
static void atfork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void atfork_child(void)
{
    pthread_mutex_init(&lock, NULL);
}

static void register_atfork(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
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
    return m->foreign ? m->fn[hook] : NULL;
}
