/* Session data the program sets or takes itself (gconn.h): a TLS 1.3
 * ticket it touches is its own. */
#include <pthread.h>

#include "gconn.h"
#include "ledger.h"
#include "session.h"

/* Takes a TLS 1.3 ticket of the program's out of the connection's held
 * sessions; true when it was there and the program took it after a
 * handshake the connection may publish from (it is then reserved for the
 * store, as on the OpenSSL side: a program that takes each ticket for a
 * cache of its own, wget does, but runs once per request never offers it). */
static bool take_held(struct gconn *c, const void *mine, bool reserve)
{
    struct pooled found[4];
    unsigned n = 0;
    pthread_mutex_lock(&gconn_lock);
    for (unsigned i = 0; c != NULL && i < c->n_held;) {
        if (!c->held[i].ops->is_tls13(c->held[i].sess) ||
            !gtls_ops.same_ticket(c->held[i].sess, mine) || n == sizeof found / sizeof *found) {
            i++;
            continue;
        }
        found[n++] = gconn_unhold(c, i);
    }
    pthread_mutex_unlock(&gconn_lock);
    bool reserved = false;
    for (unsigned i = 0; i < n; i++) {
        if (reserve && !reserved && c->done && !c->refused &&
            c->n_reserved < sizeof c->reserved / sizeof *c->reserved &&
            gtls_ops.up_ref(found[i].sess)) {
            c->reserved[c->n_reserved++] = found[i].sess;
            ledger_reserve(&c->key, found[i], c->gen);
            reserved = true;
        } else {
            pooled_free(&found[i]);
        }
    }
    return reserved;
}

/* A TLS 1.3 ticket the program takes or offers is its own (core/ledger.h):
 * it leaves the connection and every pool; false: it offers one the shim
 * offered first. */
static bool app_owns(gnutls_session_t s, const void *data, size_t size, bool offers)
{
    struct gconn *c = gconn_get(s);
    /* What a program takes from a TLS 1.2 session (reusable) or a TLS 1.3
     * one before any ticket (4 bytes of placeholder, measured) is no
     * ticket: it would only push real ones out of the disowned ring. */
    if (data == NULL || size <= 4 ||
        (!offers && G(gnutls_protocol_get_version)(s) != GNUTLS_TLS1_3))
        return true;
    void *mine = gsession_new(data, size, true);
    if (mine == NULL)
        return true;
    bool may = true, reserved = take_held(c, mine, !offers);
    /* One taken after it went to the store (gconn_write_through) stays there,
     * for a process that may end in _exit (glib-networking's and libcurl's
     * hooks take each ticket for a cache a one-shot never offers from). */
    if (!offers && (reserved || (c != NULL && c->through && c->key.len != 0)))
        ledger_took(&c->key, &gtls_ops, mine);
    else if (offers && gtls_ops.is_tls13(mine))
        may = ledger_app_offers(&gtls_ops, mine);
    else
        ledger_disown(NULL, &gtls_ops, mine);
    gtls_ops.free(mine);
    return may;
}

bool gconn_app_set(gnutls_session_t s, const void *data, size_t size)
{
    struct gconn *c = gconn_get(s);
    if (c != NULL && !c->started)
        c->app_data = true;
    return app_owns(s, data, size, true);
}

void gconn_app_took(gnutls_session_t s, const void *data, size_t size)
{
    app_owns(s, data, size, false);
}
