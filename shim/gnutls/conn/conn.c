/* GnuTLS client sessions followed, from gnutls_init to gnutls_deinit or
 * the exit (conn.h, gconn.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#include "fork.h"
#include "gconn.h"
#include "ledger.h"
#include "pool.h"
#include "session.h"

static struct gconn *conns;
pthread_mutex_t gconn_lock = PTHREAD_MUTEX_INITIALIZER;
int gconn_pool_size = 8;
long gconn_max_age = 3600;
unsigned gconn_watching;

void gconn_init(const struct config *cfg)
{
    gconn_pool_size = cfg->pool_size;
    gconn_max_age = cfg->max_age;
    fork_guard(&gconn_lock);
}

struct gconn *gconn_find(gnutls_session_t s)
{
    struct gconn *c;
    HASH_FIND_PTR(conns, &s, c);
    return c;
}

struct gconn *gconn_get(gnutls_session_t s)
{
    pthread_mutex_lock(&gconn_lock);
    struct gconn *c = gconn_find(s);
    pthread_mutex_unlock(&gconn_lock);
    return c;
}

bool gconn_is_client(gnutls_session_t s)
{
    return gconn_get(s) != NULL;
}

static void release(struct gconn *c);

void gconn_new(gnutls_session_t s, unsigned flags)
{
    struct gconn *c = calloc(1, sizeof *c), *old;
    if (c != NULL) {
        c->s = s;
        c->set.flags = flags;
    }
    pthread_mutex_lock(&gconn_lock);
    HASH_FIND_PTR(conns, &s, old);
    if (old != NULL)
        HASH_DEL(conns, old); /* freed without gnutls_deinit, address reused */
    if (c != NULL) {
        HASH_ADD_PTR(conns, s, c);
        if (c->hh.tbl == NULL) {
            free(c); /* not followed: its handshakes are full ones */
            c = NULL;
        }
    }
    pthread_mutex_unlock(&gconn_lock);
    /* One hook per session (a second call replaces the first): only on
     * tickets, until the program sets one of its own (gconn_app_hook). */
    if (c != NULL)
        G(gnutls_handshake_set_hook_function)(s, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET,
                                              GNUTLS_HOOK_POST, gconn_on_message);
    if (old != NULL) {
        gconn_drop_held(old);
        release(old);
    }
}

static void release(struct gconn *c)
{
    gconn_unwatch(c);
    gconn_settle(c);
    /* Tickets the program took from a connection that never carried data
     * are no one's to publish. */
    if (!gconn_may_publish(c))
        gconn_unreserve(c);
    for (unsigned i = 0; i < c->n_reserved; i++)
        gtls_ops.free(c->reserved[i]);
    pooled_free(&c->offered);
    free(c->held);
    free(c->set.prio);
    free(c);
}

void gconn_free(gnutls_session_t s)
{
    struct gconn *c;
    pthread_mutex_lock(&gconn_lock);
    HASH_FIND_PTR(conns, &s, c);
    if (c != NULL)
        HASH_DEL(conns, c);
    pthread_mutex_unlock(&gconn_lock);
    if (c != NULL)
        release(c);
}

/* What each live connection would publish is moved out under the lock,
 * with a copy of its key (the connection may be freed meanwhile), and
 * handed to the pool after it. */
struct leftover {
    struct leftover *next;
    struct key key;
    unsigned gen, n;
    struct pooled *held;
    unsigned n_reserved;   /* taken by the program, to be unreserved */
    void *reserved[4];
};

void gconn_settle_all(void)
{
    struct gconn *c, *tmp;
    struct leftover *list = NULL;
    pthread_mutex_lock(&gconn_lock);
    HASH_ITER(hh, conns, c, tmp) {
        bool keep = gconn_may_publish(c);
        if ((keep && c->n_held == 0) || (!keep && c->n_reserved == 0))
            continue;
        struct leftover *l = malloc(sizeof *l);
        if (l == NULL)
            continue;
        *l = (struct leftover){list, c->key, c->gen, 0, NULL, 0, {0}};
        if (keep) {
            l->n = c->n_held;
            l->held = c->held;
            c->held = NULL;
            c->n_held = 0;
        } else {
            l->n_reserved = c->n_reserved;
            memcpy(l->reserved, c->reserved, sizeof l->reserved);
            c->n_reserved = 0;
        }
        list = l;
    }
    pthread_mutex_unlock(&gconn_lock);
    while (list != NULL) {
        struct leftover *l = list;
        list = l->next;
        for (unsigned i = l->n; i-- > 0;)
            pool_put(&l->key, l->held[i], l->gen);
        for (unsigned i = 0; i < l->n_reserved; i++) {
            ledger_unreserve(&gtls_ops, l->reserved[i]);
            gtls_ops.free(l->reserved[i]);
        }
        free(l->held);
        free(l);
    }
}
