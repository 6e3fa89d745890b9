/* The record functions' gate, while a connection is watched (gconn.h). */
#include <pthread.h>

#include "flush.h"
#include "gconn.h"

/* Before a record function: a connection refused by its judgment moves no
 * data, as a session whose handshake failed does not. */
int gconn_io_before(gnutls_session_t s)
{
    struct gconn *c = gconn_get(s);
    /* Refused, or its judgment still to come. */
    return c != NULL && (c->failed != 0 || (c->ended && !c->done))
               ? GNUTLS_E_UNAVAILABLE_DURING_HANDSHAKE
               : 0;
}

/* After one: data moved (ret > 0), and what the connection earned may be
 * published when it ends; the program's first write leaves at once. */
void gconn_io_after(gnutls_session_t s, ssize_t ret, bool sent)
{
    if (ret <= 0)
        return;
    pthread_mutex_lock(&gconn_lock);
    struct gconn *c = gconn_find(s);
    bool now = c != NULL && c->done && !c->moved;
    if (now) {
        c->moved = true;
        if (c->failed == 0)
            gconn_unwatch(c);
    }
    pthread_mutex_unlock(&gconn_lock);
    if (now && sent)
        gflush_first_write(s, c->set.own_transport);
    if (now)
        gconn_write_through(c);
}
