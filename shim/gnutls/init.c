/* The GnuTLS side's set-up (init.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "conn/conn.h"
#include "cred/cred.h"
#include "init.h"
#include "prio.h"
#include "cred/psk.h"
#include "real.h"
#include "start.h"
#include "trust/tdemand.h"
#include "verified.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool active, ready;

/* The release of the GnuTLS that runs ("3.8.9"): only there may the
 * backend act whose facts were verified on it. */
static bool verified(void)
{
    const char *v = G(gnutls_check_version)(NULL);
    unsigned major, minor;
    if (v == NULL || sscanf(v, "%u.%u", &major, &minor) != 2)
        return false;
    verified_library("GnuTLS", major, minor);
    return feature_on(FEATURE_GNUTLS_CLIENT);
}

static void init(void)
{
    /* The program may read errno after the call that started us. */
    int saved = errno;
    bool started;
    const struct config *cfg = core_start(&started);
    if (started && verified()) {
        gconn_init(cfg);
        cred_init();
        prio_init();
        psk_init();
        tdemand_init();
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
