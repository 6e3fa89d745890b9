/* The server mode's ticket keys (RESUMESHIM_SERVER=1): one secret per
 * period of RESUMESHIM_TICKET_KEY_ROTATE seconds, counted from the epoch so
 * that independent processes agree on which period it is.
 *
 * A secret encrypts tickets during its own period and decrypts them during
 * that one and the next; after that it is wiped here at the next handshake
 * (the shim runs no thread of its own) and dropped from the key file at
 * its next rewrite.
 * A stolen secret therefore opens at most two periods' tickets. Each
 * server configuration gets keys of its own, derived from the secret and
 * the configuration's fingerprint (openssl/ticketkeys.c): a ticket issued
 * under one certificate or client-verification setting fails the other's
 * MAC.
 *
 * Where the secrets live:
 * - a shared anonymous mapping made at load time, so that worker processes
 *   forked later share every secret any of them makes (a secret that was
 *   only inherited would diverge at the next rotation); it is kept out of
 *   core dumps and does not survive exec;
 * - with RESUMESHIM_STORE, the store's 0600 file "ticket-keys" as well, so
 *   that processes started independently, or restarted, agree. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "log.h"
#include "ring.h"
#include "store.h"
#include "util.h"

#define SLOTS 4
#define KEYFILE "ticket-keys"
#define KEYFILE_MAGIC "resumeshim-ticket-keys 1\n"
#define KEYFILE_LINES 16
#define KEYFILE_LINE 128

struct slot {
    int64_t period, epoch; /* period 0: empty */
    bool known;            /* false: looked for and found nowhere */
    unsigned char secret[32];
};

struct ring {
    pthread_mutex_t lock; /* process-shared and robust */
    uint64_t gen;         /* changes whenever a slot does */
    struct slot slot[SLOTS];
};

static struct ring *ring;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int lock_errno;

static void make_ring(void)
{
    int saved = errno;
    struct ring *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                          -1, 0);
    if (r == MAP_FAILED) {
        errno = saved;
        return; /* no server mode: tickets stay OpenSSL's */
    }
    madvise(r, sizeof *r, MADV_DONTDUMP);
    /* Kept out of swap as well, where the limit allows (RLIMIT_MEMLOCK;
     * a worker shares the page its parent locked). Said at debug level
     * once the configuration is read, which it is not yet at load time. */
    if (mlock(r, sizeof *r) != 0)
        lock_errno = errno;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&r->lock, &a);
    pthread_mutexattr_destroy(&a);
    __atomic_store_n(&ring, r, __ATOMIC_RELEASE);
    errno = saved;
}

void ring_prepare(void)
{
    pthread_once(&once, make_ring);
}

static long period_s = 3600;

bool ring_ready(long rotate)
{
    period_s = rotate;
    ring_prepare();
    int err = __atomic_exchange_n(&lock_errno, 0, __ATOMIC_RELAXED);
    if (err != 0)
        LOG(LOG_DEBUG, "ticket keys: not locked in memory (%s)", strerror(err));
    return __atomic_load_n(&ring, __ATOMIC_ACQUIRE) != NULL;
}

long ring_period(void)
{
    return period_s;
}

int64_t ring_epoch(time_t now)
{
    return (int64_t)now / period_s;
}

uint64_t ring_generation(void)
{
    struct ring *r = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);
    return r != NULL ? __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE) : 0;
}

static void wipe(struct slot *s)
{
    explicit_bzero(s, sizeof *s);
    __atomic_add_fetch(&ring->gen, 1, __ATOMIC_RELEASE);
}

/* Bounded: the holder may be waiting for the store's lock (250 ms at most)
 * in another worker; past this, the handshake goes on without a ticket. */
#define RING_WAIT_MS 1000

/* A holder stuck past the wait (stopped, say) is not waited for again for
 * a while, so that it costs each worker one wait, not one per handshake. */
#define RING_BUSY_PAUSE 10
static time_t busy_until;

static bool lock_ring(void)
{
    struct timespec until;
    if (time(NULL) < __atomic_load_n(&busy_until, __ATOMIC_RELAXED))
        return false;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += RING_WAIT_MS / 1000;
    int r = pthread_mutex_timedlock(&ring->lock, &until);
    if (r == ETIMEDOUT) {
        LOG(LOG_INFO, "ticket keys busy; no tickets for %d s", RING_BUSY_PAUSE);
        __atomic_store_n(&busy_until, time(NULL) + RING_BUSY_PAUSE, __ATOMIC_RELAXED);
    }
    if (r == EOWNERDEAD) {
        /* A worker died holding the lock, perhaps halfway through writing
         * a secret: forget them all. Tickets made with them become full
         * handshakes; nothing is accepted that should not be. */
        pthread_mutex_consistent(&ring->lock);
        for (int i = 0; i < SLOTS; i++)
            wipe(&ring->slot[i]);
        r = 0;
    }
    return r == 0;
}

/* The key file: a line per secret, "PERIOD EPOCH HEX". */
struct wanted {
    int64_t period, epoch, now;
    bool create, found;
    unsigned char secret[32];
};

static bool alive(int64_t period, int64_t epoch, int64_t now)
{
    return period > 0 && epoch >= 0 && epoch <= now / period && now / period <= epoch + 1;
}

static bool number(const char *text, const char **end, int64_t *out)
{
    char *e;
    errno = 0;
    long long v = strtoll(text, &e, 10);
    if (errno != 0 || e == text || *e != ' ' || v < 0 || text[0] == '+' || text[0] == ' ')
        return false;
    *out = v;
    *end = e + 1;
    return true;
}

static bool parse_line(const char *line, size_t len, int64_t *period, int64_t *epoch,
                       unsigned char secret[32])
{
    char text[KEYFILE_LINE];
    const char *p;
    if (len >= sizeof text)
        return false;
    memcpy(text, line, len);
    text[len] = '\0';
    bool ok = number(text, &p, period) && number(p, &p, epoch) && strlen(p) == 64 &&
              hex_decode(p, 32, secret);
    explicit_bzero(text, sizeof text);
    return ok;
}

static size_t put_line(char *out, int64_t period, int64_t epoch, const unsigned char secret[32])
{
    size_t n = (size_t)sprintf(out, "%lld %lld ", (long long)period, (long long)epoch);
    hex_encode(secret, 32, out + n);
    n += 64;
    out[n++] = '\n';
    return n;
}

/* Keeps the live secrets (a damaged line or file is dropped), finds the
 * one wanted and, for the current period, makes it when nobody has. */
static bool update_file(const char *in, size_t len, char *out, size_t *out_len, void *arg)
{
    struct wanted *w = arg;
    size_t magic = sizeof KEYFILE_MAGIC - 1, n = 0;
    int lines = 0;
    memcpy(out, KEYFILE_MAGIC, magic);
    n = magic;
    if (in == NULL || len < magic || memcmp(in, KEYFILE_MAGIC, magic) != 0)
        len = 0;
    for (size_t at = magic; at < len && lines < KEYFILE_LINES;) {
        const char *end = memchr(in + at, '\n', len - at);
        size_t l = end != NULL ? (size_t)(end - (in + at)) : len - at;
        int64_t period, epoch;
        unsigned char secret[32];
        if (parse_line(in + at, l, &period, &epoch, secret) && alive(period, epoch, w->now)) {
            if (period == w->period && epoch == w->epoch && !w->found) {
                memcpy(w->secret, secret, 32);
                w->found = true;
            }
            n += put_line(out + n, period, epoch, secret);
            lines++;
        }
        explicit_bzero(secret, sizeof secret);
        at += l + 1;
    }
    if (!w->found && w->create && lines < KEYFILE_LINES &&
        getrandom(w->secret, 32, 0) == 32) {
        w->found = true;
        n += put_line(out + n, w->period, w->epoch, w->secret);
        lines++;
    }
    *out_len = lines > 0 ? n : 0;
    return true;
}

/* Looks for the secret in the key file, or makes it. */
static void from_file(struct slot *s, bool create)
{
    struct wanted w = {s->period, s->epoch, (int64_t)time(NULL), create, false, {0}};
    if (store_rewrite(KEYFILE, sizeof KEYFILE_MAGIC + KEYFILE_LINES * KEYFILE_LINE, update_file,
                      &w) &&
        w.found) {
        memcpy(s->secret, w.secret, 32);
        s->known = true;
    } else if (create) {
        /* The file cannot be used: a secret of this process and its
         * workers, so that tickets are still issued. */
        LOG(LOG_INFO, "ticket keys: the store's key file cannot be used; keys are this "
                      "process's own");
        s->known = getrandom(s->secret, 32, 0) == 32;
    }
    explicit_bzero(&w, sizeof w);
}

/* Copies the secret of the given period: the current one (made when
 * create and nobody has it yet), or the previous one (never made). */
bool ring_secret(int64_t epoch, bool create, unsigned char out[32])
{
    int64_t period = period_s, current = ring_epoch(time(NULL));
    if (ring == NULL || epoch > current || epoch < current - 1 || (create && epoch != current) ||
        !lock_ring())
        return false;
    struct slot *found = NULL, *spare = NULL;
    for (int i = 0; i < SLOTS; i++) {
        struct slot *s = &ring->slot[i];
        /* Retired, or from before the clock was set back. */
        if (s->period != 0 &&
            (s->period != period || s->epoch < current - 1 || s->epoch > current))
            wipe(s);
        if (s->period == 0) {
            if (spare == NULL || spare->period != 0)
                spare = s;
        } else if (s->epoch == epoch)
            found = s;
        else if (spare == NULL || (spare->period != 0 && s->epoch < spare->epoch))
            spare = s;
    }
    if (found == NULL || (!found->known && create)) {
        struct slot fresh = {period, epoch, false, {0}};
        if (store_on())
            from_file(&fresh, create);
        else if (create)
            fresh.known = getrandom(fresh.secret, 32, 0) == 32;
        found = found != NULL ? found : spare;
        *found = fresh;
        __atomic_add_fetch(&ring->gen, 1, __ATOMIC_RELEASE);
        explicit_bzero(&fresh, sizeof fresh);
    }
    bool ok = found->known;
    if (ok)
        memcpy(out, found->secret, 32);
    pthread_mutex_unlock(&ring->lock);
    return ok;
}

