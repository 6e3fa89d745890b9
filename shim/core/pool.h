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
 * Every function takes and releases the pool's mutex itself and frees
 * sessions only after releasing it (freeing runs application callbacks). */
#ifndef RESUMESHIM_POOL_H
#define RESUMESHIM_POOL_H

#include <stdbool.h>
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
 * current fork generation (a parent's connection seen in a child). */
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

/* Tickets the application owns (the rule: core/ledger.h; core/owned.h
 * keeps the record):
 * pool_discard: a TLS 1.3 ticket the application offers itself leaves one
 * server's pool, or (k NULL) every pool, for good.
 * pool_claim: the same as the handshake that offers it starts, and the
 * store's copy leaves the store; false when the shim offered that ticket
 * already, in this process or another (never because the program offered
 * it before: its own offers stay its own).
 * pool_serialized: the application serialized a TLS 1.3 ticket, and may
 * offer it in this process or a child: unless the shim offered it
 * already, it leaves every pool, and is reserved for the store at exit
 * unless the program offers it meanwhile.
 * pool_took: one it took (SSL_get1_session, gnutls_session_get_data2),
 * as one its new-session callback kept, leaves the pools: its reservation
 * for the store stays, and so does a copy the store has (written
 * through), which this process's store takes pass over.
 * pool_reserve: one the application keeps for itself is published to the
 * store at exit unless the application offered it meanwhile
 * (a program that runs once per request never offers what it kept).
 * pool_unreserve: a reserved ticket goes its ordinary way after all.
 * pool_app_offers: the program offers a TLS 1.3 ticket where the claim
 *   cannot wait for the handshake (GnuTLS: before its key is known): it is
 *   the program's for good, in every pool and in the store; false when the
 *   shim offered it first, here or in another process (then the program
 *   must not offer it). */
void pool_discard(const struct key *k, const struct tls_ops *ops, const void *sess);
bool pool_claim(const struct key *k, const struct tls_ops *ops, const void *sess);
void pool_serialized(const struct tls_ops *ops, const void *sess);
void pool_took(const struct key *k, const struct tls_ops *ops, const void *sess);
void pool_reserve(const struct key *k, struct pooled p, unsigned gen);
void pool_unreserve(const struct tls_ops *ops, const void *sess);
bool pool_app_offers(const struct tls_ops *ops, const void *sess);

/* At exit: writes to the store what this process leaves. */
void pool_flush(void);

#endif
