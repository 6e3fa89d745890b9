/* One-time set-up, on the first call of any hook rather than at load time:
 * a program that never touches OpenSSL pays nothing and, with a bad
 * RESUMESHIM_* value, is not even warned about a shim it does not use. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool active;
static bool ready; /* set-up has run, whatever it decided */

static void at_exit(void)
{
    if (shim_started())
        pool_flush();
    if (cfg.stats)
        stats_print();
}

/* The locks a forking thread must not leave held in the child. */
static void prepare(void)
{
    key_atfork_prepare();
    pool_atfork_prepare();
    store_atfork_prepare();
}

static void parent(void)
{
    store_atfork_parent();
    pool_atfork_parent();
    key_atfork_parent();
}

static void child(void)
{
    store_atfork_child();
    pool_atfork_child();
    key_atfork_child();
    stats_reset();
}

static void init_once(void);

static void init(void)
{
    /* The program may read errno after the OpenSSL call that started us. */
    int saved = errno;
    init_once();
    errno = saved;
    atomic_only(&ready, sizeof ready);
    __atomic_store_n(&ready, true, __ATOMIC_RELEASE);
}

static void init_once(void)
{
    config_load();
    if (!real_resolve()) {
        LOG(LOG_INFO, "OpenSSL 3 not found; resumption is off");
        return;
    }
    /* Registered even when disabled: the summary then shows that nothing
     * was offered, which is what a user checking RESUMESHIM_DISABLE wants. */
    atexit(at_exit);
    if (cfg.disable)
        return;
    ctx_init();
    conn_init();
    appsess_init();
    ocsp_init();
    key_init();
    if (cfg.server)
        server_init();
    store_init(cfg.store);
    if (pthread_atfork(prepare, parent, child) != 0) {
        LOG(LOG_WARN, "pthread_atfork failed; resumption is off");
        return;
    }
    __atomic_store_n(&active, true, __ATOMIC_RELEASE);
    LOG(LOG_INFO, "active: pool %d per server, max age %lds, %ld servers%s",
        cfg.pool_size, cfg.max_age, cfg.max_hosts, cfg.server ? "; server mode" : "");
}

/* The server mode's key ring must exist before a server forks its
 * workers, which may happen before it first touches OpenSSL (gunicorn's
 * master never does). So it alone is made at load time, when asked for. */
static void server_at_load(void)
{
    const char *server = secure_getenv("RESUMESHIM_SERVER");
    if (server != NULL && strcmp(server, "1") == 0)
        ring_prepare();
}

#ifdef __GLIBC__
/* glibc hands constructors the environment: most programs never set the
 * variable, and looking for it here costs them no call through the PLT,
 * whose first use is a symbol lookup (secure_getenv cost every program
 * 1,100 instructions at start). secure_getenv still decides. */
__attribute__((constructor)) static void at_load(int argc, char **argv, char **envp)
{
    static const char name[] = "RESUMESHIM_SERVER=";
    (void)argc, (void)argv;
    for (char **e = envp; e != NULL && *e != NULL; e++) {
        size_t i = 0;
        while (name[i] != '\0' && (*e)[i] == name[i])
            i++;
        if (name[i] == '\0') {
            server_at_load();
            return;
        }
    }
}
#else
__attribute__((constructor)) static void at_load(void)
{
    server_at_load();
}
#endif

bool shim_started(void)
{
    return __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

/* Every hook asks, so once set-up has run the answer is a load, not a
 * call of pthread_once. */
bool shim_active(void)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        pthread_once(&once, init);
    return __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

void shim_stop(void)
{
    __atomic_store_n(&active, false, __ATOMIC_RELEASE);
}
