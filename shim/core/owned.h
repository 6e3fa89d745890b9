/* owned: a process's record of whose each TLS 1.3 ticket is (the rule:
 * ledger.h): the program's (they never enter a pool, not even later from
 * a connection that still holds one as its newest ticket), those the shim
 * offered (spent; the last MARKS_MAX of both kinds are remembered), and
 * those the program
 * took and keeps, reserved for the store at exit in their encoded form,
 * oldest first. Called only by the pool, under its lock, which keeps a
 * ticket's reservation, its disowning and its entry into a pool one
 * step. */
#ifndef RESUMESHIM_OWNED_H
#define RESUMESHIM_OWNED_H

#include <stdbool.h>
#include <stdint.h>

struct stored;

#define MARKS_MAX 16384
/* The program's from now on, unless the shim offered it already:
 * owned_disown, one it offered (never the store's: it spent it);
 * owned_hold, one it serialized (the store's at exit, unless it offers it
 * meanwhile: owned_is_held). owned_is_disowned: either. */
bool owned_is_disowned(uint64_t digest);
void owned_disown(uint64_t digest);
void owned_hold(uint64_t digest);
bool owned_is_held(uint64_t digest);
/* The tickets a pool or the store handed out (owned_offer): the shim
 * offered them, and a program that offers one later (it serialized or
 * took it from the connection the shim resumed with it) offers it a
 * second time. */
void owned_offer(uint64_t digest);
bool owned_is_spent(uint64_t digest);
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
