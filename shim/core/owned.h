/* owned: the tickets the application owns rather than the pools: those
 * it offers, serializes or takes itself (as digests in a small ring: they
 * never enter a pool, not even later from a connection that still holds
 * one as its newest ticket), and those it keeps, reserved for the store
 * at exit in their encoded form, oldest first. Called only by the pool,
 * under its lock, which keeps a ticket's reservation, its disowning and
 * its entry into a pool one step. */
#ifndef RESUMESHIM_OWNED_H
#define RESUMESHIM_OWNED_H

#include <stdbool.h>
#include <stdint.h>

struct stored;

bool owned_is_disowned(uint64_t digest);
void owned_disown(uint64_t digest);
/* The tickets this process has offered (as digests, in a ring of their
 * own): one the application then offers itself would be offered twice. */
bool owned_is_spent(uint64_t digest);
void owned_spend(uint64_t digest);
/* Reserves a ticket's encoding (the room owns it from now on); the oldest
 * reservation goes when there is no room. */
void owned_reserve(uint64_t digest, struct stored *st);
/* Ends a reservation and hands over its encoding (NULL: none). */
struct stored *owned_take(uint64_t digest);
/* At exit: every reservation, oldest first, into list (which has room for
 * owned_count()); each reserved ticket is disowned. */
unsigned owned_count(void);
/* list NULL: they are dropped. */
unsigned owned_drain(struct stored **list);
/* In a forked child: the reservations are the parent's to publish. */
void owned_forget_all(void);

#endif
