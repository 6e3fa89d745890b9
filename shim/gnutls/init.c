/* The GnuTLS side's set-up (init.h). */
#include <errno.h>
#include <pthread.h>

#include "conn.h"
#include "cred.h"
#include "init.h"
#include "prio.h"
#include "psk.h"
#include "real.h"
#include "start.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool active, ready;

static void init(void)
{
    /* The program may read errno after the call that started us. */
    int saved = errno;
    bool started;
    const struct config *cfg = core_start(&started);
    if (started) {
        gconn_init(cfg);
        cred_init();
        prio_init();
        psk_init();
        core_before_flush(gconn_settle_all);
        __atomic_store_n(&active, true, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&ready, true, __ATOMIC_RELEASE);
    errno = saved;
}

bool gshim_active(void)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        pthread_once(&once, init);
    return __atomic_load_n(&active, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&greal_missing, __ATOMIC_RELAXED);
}
