/* The core's one-time set-up (start.h). */
#include <pthread.h>
#include <stdlib.h>

#include "fork.h"
#include "log.h"
#include "pool.h"
#include "start.h"
#include "store.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct config *cfg;
static bool up;
static void (*before_flush)(void);

static void at_exit(void)
{
    if (__atomic_load_n(&up, __ATOMIC_ACQUIRE)) {
        if (before_flush != NULL)
            before_flush();
        pool_flush();
    }
    if (cfg->stats)
        stats_print(cfg->server);
}

static void nothing(void)
{
}

static void start(void)
{
    cfg = config_load();
    /* Registered even when disabled: the summary then shows that nothing
     * was offered, which is what a user checking RESUMESHIM_DISABLE wants. */
    atexit(at_exit);
    if (cfg->disable)
        return;
    /* A forked child counts its own; registered first, so that it runs
     * after every room's child handler. */
    if (!fork_register(nothing, nothing, stats_reset)) {
        LOG(LOG_WARN, "pthread_atfork failed; resumption is off");
        return;
    }
    /* The fork handlers take the rooms' locks in the order they register:
     * the store's first, as store_take asks the ledger under the pools'
     * lock while it holds its own (ledger.c); the other way round, a fork
     * and a take of another thread each waited on the other for good. */
    store_init(cfg);
    pool_init(cfg);
    __atomic_store_n(&up, true, __ATOMIC_RELEASE);
    LOG(LOG_INFO, "active: pool %d per server, max age %lds, %ld servers%s",
        cfg->pool_size, cfg->max_age, cfg->max_hosts, cfg->server ? "; server mode" : "");
}

const struct config *core_start(bool *started)
{
    pthread_once(&once, start);
    *started = __atomic_load_n(&up, __ATOMIC_ACQUIRE);
    return cfg;
}

void core_before_flush(void (*fn)(void))
{
    before_flush = fn;
}
