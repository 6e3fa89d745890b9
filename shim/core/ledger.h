/* ledger: whose a TLS 1.3 ticket is, and so who may offer it. The rule,
 * written here once, and the one room that answers it: ledger.c keeps a
 * process's marks and reservations, and is the only caller of the
 * store's spent table (store/spent.h), which keeps the marks across
 * processes; the pools hold only what the ledger says is the shim's.
 *
 * A ticket is offered once, by whoever holds it: each ticket is either
 * the shim's or the program's, never both.
 *  - The program's: one it can still offer. One it serialized
 *    (i2d_SSL_SESSION; it may keep the bytes, give them to a child, save
 *    them for a later run), one it offered itself (SSL_set_session,
 *    gnutls_session_set_data), one it holds by reference (kept by its
 *    new-session callback, taken with SSL_get1_session), and whatever a
 *    connection open across a fork brings (either process may take its
 *    session: pool.c's generation). The shim never
 *    offers it in the process that holds it, nor in a child. One the
 *    program offered is spent for good: marked the program's in the
 *    store, which never hands it out. One it serialized or took and did
 *    not offer is written to the store at exit (a process run once per
 *    request never offers what it kept); from there whoever offers it
 *    first has it, and the store's mark strips a later run's offer of one
 *    the shim handed out: offered once, though the bytes outlive the
 *    process.
 *  - The shim's: every other ticket a connection earned. Single use (RFC
 *    8446 C.4): once the shim offered it, it is spent, and marked so in
 *    the store.
 * A program's own offers are its own: the shim strips one only when the
 * shim offered that ticket first (the program serialized or took it from
 * a connection the shim resumed with it), never because the program
 * offered it before (curl -Z offers one session on many connections).
 * A program that keeps a reference it was never seen taking (a
 * new-session callback that takes one and returns 0) is not known. */
#ifndef RESUMESHIM_LEDGER_H
#define RESUMESHIM_LEDGER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "key.h"
#include "seam.h"

/* A ticket's mark in the store's spent table. */
enum mark {
    MARK_NONE,    /* no one offered it: the shim may, once */
    MARK_SHIM,    /* the shim offered it: spent */
    MARK_PROGRAM, /* the program's: the shim never offers it */
};

/* What a backend tells the ledger, as the program does it. Each takes
 * the pools' lock itself, so that a ticket's mark and its leaving the
 * pools are one step (another thread may be about to take it), and frees
 * sessions only after releasing it (freeing runs the application's
 * callbacks).
 * ledger_disown: a TLS 1.3 ticket the program offers itself, or takes
 * and keeps with no reservation: the program's for good; it leaves one
 * server's pool, or (k NULL) every pool.
 * ledger_claim: the same as the handshake that offers it starts, and the
 * store's copy leaves the store; false when the shim offered that ticket
 * already, in this process or another (never because the program offered
 * it before: its own offers stay its own).
 * ledger_app_offers: the program offers a TLS 1.3 ticket where the claim
 * cannot wait for the handshake (GnuTLS: before its key is known): it is
 * the program's for good, in every pool and in the store; false when the
 * shim offered it first, here or in another process (then the program
 * must not offer it).
 * ledger_serialized: the program serialized a TLS 1.3 ticket, and may
 * offer it in this process or a child: unless the shim offered it
 * already, it leaves every pool, and is reserved for the store at exit
 * unless the program offers it meanwhile.
 * ledger_took: one it took (SSL_get1_session, gnutls_session_get_data2),
 * as one its new-session callback kept, leaves the pools: its reservation
 * for the store stays, and so does a copy the store has (written
 * through), which this process's store takes pass over.
 * ledger_reserve: one the program keeps for itself (p, the ledger's from
 * now on) is published to the store at exit unless the program offered
 * it meanwhile (a program that runs once per request never offers what
 * it kept); nothing when gen is not the current fork generation.
 * ledger_unreserve: a reserved ticket goes its ordinary way after all. */
void ledger_disown(const struct key *k, const struct tls_ops *ops, const void *sess);
bool ledger_claim(const struct key *k, const struct tls_ops *ops, const void *sess);
bool ledger_app_offers(const struct tls_ops *ops, const void *sess);
void ledger_serialized(const struct tls_ops *ops, const void *sess);
void ledger_took(const struct key *k, const struct tls_ops *ops, const void *sess);
void ledger_reserve(const struct key *k, struct pooled p, unsigned gen);
void ledger_unreserve(const struct tls_ops *ops, const void *sess);

/* What the pool asks as it hands out a ticket (pool_take), without its
 * lock. ledger_spend_shared: a ticket the pool shares with the store
 * (written through) is marked spent there first, as the store marks what
 * it hands out, so that only one of them offers it; false when it may not
 * be offered (another process did, or the store cannot say).
 * ledger_from_store: a session from the store (store_take) for a
 * connection that found none in the pools, the caller's (out->sess NULL:
 * none); a ticket this process's program holds stays in the store, and
 * one taken is the shim's offer. */
bool ledger_spend_shared(uint64_t digest, time_t now);
void ledger_from_store(const struct key *k, time_t now, struct pooled *out);

/* The pool's own questions, under its lock (pool.h: pool_lock), which
 * keeps a ticket's reservation, its disowning and its entry into a pool
 * one step.
 * ledger_offered_locked: the shim offers the ticket (a pool handed it
 * out): spent, and a program that offers it later (it serialized or took
 * it from the connection the shim resumed with it) offers it a second
 * time.
 * ledger_programs_locked: the program's (it offered, serialized or took
 * it): it never enters a pool, not even later from a connection that
 * still holds it as its newest ticket.
 * ledger_end_locked: a reservation ends (the ticket goes its ordinary
 * way), its encoding handed over (NULL: none).
 * ledger_hold_locked: true when the program serialized the ticket and
 * st, its encoding, is reserved for the store at exit (the ledger's from
 * now on).
 * ledger_reserve_locked: st, the ticket's encoding, reserved for the
 * store at exit; the oldest reservation goes when there is no room.
 * ledger_drain_locked: at exit, every reservation, oldest first, into
 * list (room for ledger_count_locked(); NULL: they are dropped); each
 * reserved ticket is the program's from then on, and nothing is reserved
 * any more.
 * ledger_forked_locked: in a forked child, the reservations are the
 * parent's to publish. */
struct stored;
void ledger_offered_locked(uint64_t digest);
bool ledger_programs_locked(uint64_t digest);
struct stored *ledger_end_locked(uint64_t digest);
bool ledger_hold_locked(uint64_t digest, struct stored *st);
void ledger_reserve_locked(uint64_t digest, struct stored *st);
unsigned ledger_count_locked(void);
unsigned ledger_drain_locked(struct stored **list);
void ledger_forked_locked(void);

#endif
