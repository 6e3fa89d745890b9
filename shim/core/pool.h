/* pool: the per-server pools of one process, keyed by struct key; with a
 * store, its front: the store is asked only by a connection that finds
 * nothing here, and hears of the sessions this process will not use.
 *
 * The TLS-version rule lives here and nowhere else: a TLS 1.3 ticket is
 * single use (RFC 8446 C.4), so take hands it out of the pool and
 * concurrent handshakes to one server each get their own; a TLS 1.2
 * session may be resumed many times, so one stays per server and take
 * hands out a private copy.
 *
 * Whose a ticket is, the pools do not decide: they hold what the ledger
 * (ledger.h) says is the shim's, and ask it under their lock as tickets
 * come and go.
 *
 * Every function but the ledger's way in (below) takes and releases the
 * pool's mutex itself and frees sessions only after releasing it (freeing
 * runs application callbacks). */
#ifndef RESUMESHIM_POOL_H
#define RESUMESHIM_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "key.h"
#include "seam.h"

void pool_init(const struct config *cfg);
/* A session to offer, the caller's own: from memory, else from the store.
 * out->sess is NULL when there is nothing valid. */
void pool_take(const struct key *k, time_t now, struct pooled *out);
/* A session taken and not offered after all: a TLS 1.3 ticket goes back
 * for the others, a TLS 1.2 copy is dropped. */
void pool_return(const struct key *k, struct pooled p, unsigned gen);
/* A session the server sent, now the pool's; dropped when gen is not the
 * current fork generation (a connection open across a fork, seen in the
 * child or in the parent). */
void pool_put(const struct key *k, struct pooled p, unsigned gen);
/* A process may never exit cleanly (apt's methods end in _exit on
 * SIGINT), and still leaves what it earned: the first session of each
 * server goes to the store as it arrives, the rest memory first, so that a
 * long-lived process keeps its cost. pool_put does so itself; a backend
 * that holds sessions on the connection until it ends asks here, and
 * true means the session went to the store, which has it alone now. */
bool pool_write_through(const struct key *k, const struct pooled *p, unsigned gen);
/* Whether the server accepted what was offered to it. */
void pool_verdict(const struct key *k, bool resumed);
/* Drops every session of a server (the application refused it). */
void pool_forget(const struct key *k);
/* The same, and the store's entry too: a judgment refused the server. */
void pool_refuse(const struct key *k);
unsigned pool_generation(void);

/* At exit: writes to the store what this process leaves. */
void pool_flush(void);

/* The ledger's way in (ledger.c alone): its marks live under the pools'
 * lock, so that a ticket's mark and its place in the pools change in one
 * step. pool_lock takes the lock; pool_unlock releases it, and with
 * free_dropped then frees the sessions pool_evict_locked dropped (and any
 * the pools left for later), never under the lock.
 * pool_evict_locked: the ticket (sess, whose ticket_digest is digest)
 * leaves one server's pool (k) or every pool (k NULL); with hold, the
 * encoding of a copy the store has not yet is reserved for the store at
 * exit (ledger_reserve_locked). */
void pool_lock(void);
void pool_unlock(bool free_dropped);
void pool_evict_locked(const struct key *k, const struct tls_ops *ops, const void *sess,
                       uint64_t digest, bool hold);

#endif
