/* The server mode's ticket keys of one configuration: derived from the
 * ring's secret of a period (core/ring.h) and the configuration's
 * fingerprint (verdict.c), with the HMAC of the context's own library
 * context (algs.c). */
#include <string.h>

#include "algs.h"
#include "ring.h"
#include "threadend.h"
#include "ticketkeys.h"

/* Deriving a configuration's keys costs six HMACs a resumed connection
 * (one decryption, one renewal), 6 % of the server's work: each thread
 * keeps the last few it derived, while their period is live and the ring
 * unchanged. */
#define CACHED 4
static _Thread_local struct cached {
    uint64_t gen;
    int64_t period, epoch; /* period 0: empty */
    unsigned char conf[32];
    struct ticket_key k;
} cache[CACHED];
static _Thread_local unsigned cache_next;


static bool derive(const struct algs *algs, const unsigned char secret[32], char label,
                   const unsigned char conf[32], unsigned char md[32])
{
    unsigned char in[1 + sizeof(int64_t) + 32];
    int64_t period = ring_period();
    in[0] = (unsigned char)label;
    memcpy(in + 1, &period, sizeof period);
    memcpy(in + 1 + sizeof period, conf, 32);
    return algs_hmac256(algs, secret, in, sizeof in, md);
}

/* Finds the keys in this thread's cache, wiping what is no longer good. */
static bool cached(const unsigned char conf[32], int64_t epoch, uint64_t gen,
                   struct ticket_key *k)
{
    int64_t current = ring_epoch(time(NULL));
    bool hit = false;
    for (int i = 0; i < CACHED; i++) {
        struct cached *c = &cache[i];
        if (c->period == 0)
            continue;
        if (c->gen != gen || c->period != ring_period() || c->epoch < current - 1 ||
            c->epoch > current)
            explicit_bzero(c, sizeof *c);
        else if (!hit && c->epoch == epoch && memcmp(c->conf, conf, 32) == 0)
            *k = c->k, hit = true;
    }
    return hit;
}

/* A thread that ends leaves its cache behind in memory that the next
 * thread reuses: wiped on the way out. */
static void cache_wipe(void)
{
    explicit_bzero(cache, sizeof cache);
}

static void cache_add(const unsigned char conf[32], int64_t epoch, uint64_t gen,
                      const struct ticket_key *k)
{
    if (!thread_at_end(cache_wipe))
        return; /* not cached where it could not be wiped */
    struct cached *c = &cache[cache_next++ % CACHED];
    *c = (struct cached){gen, ring_period(), epoch, {0}, *k};
    memcpy(c->conf, conf, 32);
}

bool ticketkeys_get(const struct algs *algs, const unsigned char conf[32], int64_t epoch, bool create,
               struct ticket_key *k)
{
    uint64_t gen = ring_generation();
    if (cached(conf, epoch, gen, k))
        return true;
    unsigned char secret[32], tag[32];
    bool ok = ring_secret(epoch, create, secret) && derive(algs, secret, 'n', conf, tag) &&
              derive(algs, secret, 'a', conf, k->aes) && derive(algs, secret, 'm', conf, k->mac);
    /* The name carries its period, so that a ticket finds its secret
     * without trying each. */
    for (int i = 0; i < 8; i++)
        k->name[i] = (unsigned char)((uint64_t)epoch >> (56 - 8 * i));
    memcpy(k->name + 8, tag, 8);
    if (ok)
        cache_add(conf, epoch, gen, k);
    explicit_bzero(secret, sizeof secret);
    explicit_bzero(tag, sizeof tag);
    return ok;
}

int64_t ticketkeys_epoch(const unsigned char name[16])
{
    uint64_t e = 0;
    for (int i = 0; i < 8; i++)
        e = e << 8 | name[i];
    return (int64_t)e;
}
