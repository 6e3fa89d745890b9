/* gconn: a followed session's state, shared by the files of the conn room
 * (conn.h is what the hooks see of it): the table and a connection's end
 * (conn.c), the sessions it earned and where they go (held.c), its
 * handshake and judgment (handshake.c), the bound of what it earns
 * (expiry.c), the session data the program sets or takes (appsess.c), the
 * record functions' gate (io.c), and what the program sets that its key
 * reads (settings.c). */
#ifndef RESUMESHIM_GNUTLS_GCONN_H
#define RESUMESHIM_GNUTLS_GCONN_H

#include <pthread.h>
#include <time.h>

#include "hash.h"

#include "conn.h"
#include "judge/verdict.h"
#include "pooled.h"

struct gconn {
    UT_hash_handle hh;
    gnutls_session_t s;
    struct gsettings set;
    struct key key;
    struct gidentity id;
    bool started, done, app_data, refused;
    bool ended;            /* the first handshake completed (done: and passed) */
    bool resumed_ours;     /* resumed from the session the shim offered */
    bool moved;            /* application data moved after the handshake */
    bool watched;          /* counted in watching */
    bool through;          /* its newest ticket was offered to the store */
    int failed;            /* the judgment's error (0: none) */
    struct pooled offered; /* sess NULL: nothing offered */
    time_t born;           /* the verifying full handshake behind this one */
    time_t until;          /* the earliest notAfter of the chain, or staple's nextUpdate */
    unsigned gen;
    unsigned n_held;
    struct pooled *held;   /* pool_size slots, newest first */
    gnutls_handshake_hook_func app_hook;
    unsigned app_htype;
    int app_when;
    /* Tickets the program took and the store may have at exit: ended
     * should its check of the peer fail after all. */
    unsigned n_reserved;
    void *reserved[4];
};

/* A session is used by one thread at a time; the table's lock guards the
 * table, and the sessions a connection holds, which the exit flush reads
 * from another thread. The pool's lock is never taken under it (a fork
 * takes the pool's first). */
extern pthread_mutex_t gconn_lock;
/* Under the lock: the connection followed for s, or NULL. */
struct gconn *gconn_find(gnutls_session_t s);
/* The same, taking the lock. */
struct gconn *gconn_get(gnutls_session_t s);
/* The configuration's (gconn_init). */
extern int gconn_pool_size;
extern long gconn_max_age;

/* c counted in gconn_watching, or no longer. */
static inline void gconn_unwatch(struct gconn *c)
{
    if (c->watched) {
        c->watched = false;
        __atomic_sub_fetch(&gconn_watching, 1, __ATOMIC_RELAXED);
    }
}

static inline void gconn_watch(struct gconn *c)
{
    if (!c->watched) {
        c->watched = true;
        __atomic_add_fetch(&gconn_watching, 1, __ATOMIC_RELAXED);
    }
}

/* held.c */
void gconn_hold(struct gconn *c, const unsigned char *data, size_t len, bool tls13);
/* Under the lock: held session i leaves the connection. */
struct pooled gconn_unhold(struct gconn *c, unsigned i);
void gconn_drop_held(struct gconn *c);
bool gconn_may_publish(const struct gconn *c);
void gconn_write_through(struct gconn *c);
/* What the connection holds goes to the pool, or is dropped. */
void gconn_settle(struct gconn *c);
/* Tickets the program took are no longer reserved for the store. */
void gconn_unreserve(struct gconn *c);

/* handshake.c: the shim's handshake hook, on every followed session. */
int gconn_on_message(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                     const gnutls_datum_t *msg);

/* expiry.c: when what the session earned stops counting. */
time_t gconn_chain_until(gnutls_session_t s);

#endif
