/* Small makers shared by the unit tests. */
#ifndef RESUMESHIM_UNIT_HELPERS_H
#define RESUMESHIM_UNIT_HELPERS_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "fake.h"
#include "key.h"
#include "ledger.h"
#include "pool.h"
#include "pooled.h"
#include "store.h"

/* The core set up as set-up would, with these settings. */
static inline void core_setup(int pool_size, long max_hosts, const char *store)
{
    static struct config cfg;
    cfg = (struct config){.pool_size = pool_size, .max_age = 3600, .max_hosts = max_hosts,
                          .store = store, .rotate = 3600};
    store_init(&cfg);
    pool_init(&cfg);
}

/* A client key for a server name on port 443, as the backend would build
 * it (key_put_peer, for a socket connected there). */
static inline void make_key(struct key *k, enum key_kind kind, const char *name)
{
    key_begin(k, &fake_ops, kind);
    key_put_str(k, 'v', "verify-settings");
    key_put_str(k, 'n', name);
    key_put_num(k, 'p', 443);
    snprintf(k->server, sizeof k->server, "%s:443", name);
    key_end(k);
}

static inline struct pooled pooled_of(struct fake_sess *s, time_t now)
{
    return (struct pooled){.ops = &fake_ops, .sess = s, .born = now - 10, .expires = now + 3600};
}

/* What a take handed out, freed. pool_take defines only out->sess when it
 * finds nothing (pool.h): the rest of out is then not to be read. */
static inline void drop_taken(struct pooled *p)
{
    if (p->sess != NULL)
        pooled_free(p);
}

static inline struct fake_sess *fs(const struct pooled *p)
{
    return (struct fake_sess *)p->sess;
}

static inline bool ticket_is(const struct pooled *p, const char *t)
{
    return p->sess != NULL && fs(p)->ticket_len == strlen(t) &&
           memcmp(fs(p)->ticket, t, strlen(t)) == 0;
}

#endif
