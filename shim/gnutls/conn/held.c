/* The sessions a GnuTLS connection earned, held until it may publish
 * them, and where they go then (gconn.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gconn.h"
#include "ledger.h"
#include "pool.h"
#include "session.h"

void gconn_drop_held(struct gconn *c)
{
    for (unsigned i = 0; i < c->n_held; i++)
        pooled_free(&c->held[i]);
    c->n_held = 0;
}

struct pooled gconn_unhold(struct gconn *c, unsigned i)
{
    struct pooled p = c->held[i];
    memmove(&c->held[i], &c->held[i + 1], (c->n_held - i - 1) * sizeof *c->held);
    c->n_held--;
    return p;
}

/* A session of c's (a reference of its own), with c's times. */
static struct pooled earned(const struct gconn *c, void *sess)
{
    time_t e = c->born + (gconn_max_age < MAX_LIFETIME ? gconn_max_age : MAX_LIFETIME);
    return (struct pooled){.ops = &gtls_ops, .sess = sess, .born = c->born,
                           .expires = c->until < e ? c->until : e};
}

void gconn_hold(struct gconn *c, const unsigned char *data, size_t len, bool tls13)
{
    if (c->held == NULL && (c->held = calloc((size_t)gconn_pool_size, sizeof *c->held)) == NULL)
        return;
    struct pooled p = earned(c, gsession_new(data, len, tls13));
    if (p.sess == NULL)
        return;
    struct pooled old = {0};
    pthread_mutex_lock(&gconn_lock);
    if (c->n_held == (unsigned)gconn_pool_size)
        old = c->held[--c->n_held];
    memmove(&c->held[1], &c->held[0], c->n_held * sizeof *c->held);
    c->held[0] = p;
    c->n_held++;
    pthread_mutex_unlock(&gconn_lock);
    pooled_free(&old);
}

/* What the connection earned goes to the pool once the program is done
 * with it: a program checks the peer by hand after the handshake, while
 * tickets may already have arrived (wget asks for the session data right
 * after the handshake, which waits for one). */
bool gconn_may_publish(const struct gconn *c)
{
    return c->done && c->moved && !c->refused && c->failed == 0 && c->key.len != 0;
}

/* A program may never end its connection nor exit cleanly (apt's https
 * method ends in _exit on SIGINT): once the connection may publish, its
 * newest ticket is offered to the store at once (pool_write_through: the
 * first of each server), and a TLS 1.3 ticket that went leaves it. */
void gconn_write_through(struct gconn *c)
{
    /* Only the session's own thread sets through. */
    if (c->through || !gconn_may_publish(c) || c->n_held == 0)
        return;
    pthread_mutex_lock(&gconn_lock);
    struct pooled p = {0};
    if (c->n_held > 0 && gtls_ops.up_ref(c->held[0].sess))
        p = c->held[0]; /* a held session carries no chain (gconn_hold) */
    c->through = true;
    pthread_mutex_unlock(&gconn_lock);
    if (p.sess == NULL)
        return;
    struct pooled gone = {0};
    if (pool_write_through(&c->key, &p, c->gen) && gtls_ops.is_tls13(p.sess)) {
        pthread_mutex_lock(&gconn_lock);
        for (unsigned i = 0; i < c->n_held && gone.sess == NULL; i++)
            if (gtls_ops.same_ticket(c->held[i].sess, p.sess))
                gone = gconn_unhold(c, i);
        pthread_mutex_unlock(&gconn_lock);
    }
    pooled_free(&gone);
    gtls_ops.free(p.sess);
}

void gconn_settle(struct gconn *c)
{
    bool keep = gconn_may_publish(c);
    for (unsigned i = c->n_held; i-- > 0;) {
        if (keep)
            pool_put(&c->key, c->held[i], c->gen);
        else
            pooled_free(&c->held[i]);
    }
    c->n_held = 0;
}

void gconn_unreserve(struct gconn *c)
{
    for (unsigned i = 0; i < c->n_reserved; i++) {
        ledger_unreserve(&gtls_ops, c->reserved[i]);
        gtls_ops.free(c->reserved[i]);
    }
    c->n_reserved = 0;
}
