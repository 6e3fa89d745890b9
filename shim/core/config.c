/* The RESUMESHIM_* variables (config.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"
#include "util.h"

static struct config cfg = {
    .pool_size = 8,
    .max_age = 3600,
    .max_hosts = 1024,
    .disable = false,
    .stats = false,
    .log_level = LOG_WARN,
    .rotate = 3600,
};

static void number(const char *name, long lo, long hi, long *val)
{
    const char *s = secure_getenv(name);
    long v;
    if (s == NULL)
        return;
    if (parse_long(s, lo, hi, &v))
        *val = v;
    else
        LOG(LOG_WARN, "%s='%s' is not a whole number from %ld to %ld; using %ld",
            name, s, lo, hi, *val);
}

static void flag(const char *name, bool *val, bool if_bad)
{
    const char *s = secure_getenv(name);
    if (s == NULL || *s == '\0')
        return;
    if (strcmp(s, "0") == 0 || strcmp(s, "1") == 0) {
        *val = s[0] == '1';
        return;
    }
    *val = if_bad;
    LOG(LOG_WARN, "%s='%s' is neither 0 nor 1; using %d", name, s, if_bad);
}

static void level(void)
{
    static const char *const names[] = {"off", "error", "warn", "info", "debug"};
    const char *s = secure_getenv("RESUMESHIM_LOG");
    long v;
    if (s == NULL || *s == '\0')
        return;
    for (int i = 0; i <= LOG_DEBUG; i++)
        if (strcasecmp(s, names[i]) == 0) {
            cfg.log_level = log_level = i;
            return;
        }
    if (parse_long(s, LOG_OFF, LOG_DEBUG, &v)) {
        cfg.log_level = log_level = (int)v;
        return;
    }
    LOG(LOG_WARN, "RESUMESHIM_LOG='%s' is not off, error, warn, info, debug or 0-4; using warn", s);
}

static void load(void)
{
    /* The log destination and level come first so that the warnings about
     * the other variables go where the user asked. */
    const char *log_file = secure_getenv("RESUMESHIM_LOG_FILE");
    const char *refused = log_open(log_file);
    level();
    if (refused != NULL)
        LOG(LOG_WARN, "RESUMESHIM_LOG_FILE='%s' is refused (%s); logging to stderr", log_file,
            refused);
    long pool = cfg.pool_size;
    number("RESUMESHIM_POOL_SIZE", 1, POOL_MAX, &pool);
    cfg.pool_size = (int)pool;
    number("RESUMESHIM_MAX_AGE", 1, MAX_LIFETIME, &cfg.max_age);
    number("RESUMESHIM_MAX_HOSTS", 1, 1000000, &cfg.max_hosts);
    /* A value that is neither 0 nor 1 reads as an attempt to turn the shim
     * off: doing nothing is the safe reading. */
    flag("RESUMESHIM_DISABLE", &cfg.disable, true);
    flag("RESUMESHIM_STATS", &cfg.stats, false);
    cfg.store = secure_getenv("RESUMESHIM_STORE");
    flag("RESUMESHIM_SERVER", &cfg.server, false);
    number("RESUMESHIM_TICKET_KEY_ROTATE", 1, MAX_LIFETIME, &cfg.rotate);
}

/* Either backend's set-up may ask first, from any thread. */
const struct config *config_load(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    return &cfg;
}
