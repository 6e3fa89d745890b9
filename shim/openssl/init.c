/* One-time set-up (init.h): with a bad RESUMESHIM_* value, a program that
 * never touches OpenSSL is not even warned about a shim it does not use. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/appsess.h"
#include "config.h"
#include "client/conn.h"
#include "ctx.h"
#include "client/identity.h"
#include "init.h"
#include "log.h"
#include "judge/ocsp.h"
#include "real.h"
#include "ring.h"
#include "server/server.h"
#include "settings.h"
#include "judge/sigcache.h"
#include "start.h"
#include "trust/trust.h"
#include "verified.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool active;
static bool ready; /* set-up has run, whatever it decided */
static const struct config *cfg;
static bool serving; /* the server mode asked for, and verified here */

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
    cfg = config_load();
    if (!real_resolve()) {
        LOG(LOG_INFO, "OpenSSL 3 not found; resumption is off");
        return;
    }
    /* 3.x numbers itself 0xMNN00PP0 (OpenSSL_version_num(3)). */
    unsigned long v = R(OpenSSL_version_num)();
    verified_library("OpenSSL", (unsigned)(v >> 28) & 0xf, (unsigned)(v >> 20) & 0xff);
    if (!feature_on(FEATURE_OPENSSL_CLIENT))
        return;
    serving = cfg->server && feature_on(FEATURE_OPENSSL_SERVER);
    bool started;
    core_start(&started);
    if (!started)
        return;
    ctx_init(conn_session, serving);
    conn_init(cfg);
    settings_init();
    appsess_init();
    ocsp_init(conn_status_before, conn_status_after);
    trust_init();
    sigcache_init();
    identity_init();
    if (serving)
        server_init(cfg->rotate);
    __atomic_store_n(&active, true, __ATOMIC_RELEASE);
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
    return __atomic_load_n(&active, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&real_missing, __ATOMIC_RELAXED);
}

const struct config *shim_config(void)
{
    return cfg;
}

bool shim_serving(void)
{
    return serving;
}

/* Every hook asks, so once set-up has run the answer is a load, not a
 * call of pthread_once. */
bool shim_active(void)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        pthread_once(&once, init);
    return shim_started();
}
