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
/* Tickets the application serialized (i2d_SSL_SESSION), which stay the
 * pools' too, and those the pools handed out: whoever offers one first
 * has it. owned_offer, as a pool hands a ticket out; owned_is_spent, as
 * the application offers one itself: whether the shim offered it first
 * (if not, it is the application's from now on); owned_is_pending: one
 * serialized and not offered yet. The last MARKS_MAX are remembered. */
#define MARKS_MAX 16384
void owned_serialized(uint64_t digest);
void owned_offer(uint64_t digest);
bool owned_is_spent(uint64_t digest);
bool owned_is_pending(uint64_t digest);
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
