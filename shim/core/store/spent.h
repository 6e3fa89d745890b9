/* DIR/spent: the TLS 1.3 tickets offered from the store or a pool, and
 * those a program offered itself, so that a ticket is
 * offered once, whichever entry (configuration) holds a copy of it. Each
 * mark says whose the ticket is (ledger.h): the shim's, spent once it
 * offered it; or the program's, which the shim never offers and the
 * program may offer as often as it likes. A table of SPENT_SLOTS slots of
 * (digest, until), a ticket's slot one of SPENT_PROBE after its digest's
 * place; each mark lives as long as a ticket can (MAX_LIFETIME), and
 * PROGRAM_BIT of until says the program's (a mark written before there
 * were two kinds reads as the shim's: it strips a program's later offer,
 * as it did then). A window with no room loses its oldest mark: the store
 * remembers up to about SPENT_SLOTS tickets a week. Read and written in
 * place under the lock, 16 bytes a slot: a process killed meanwhile
 * leaves one slot torn at worst. */
#ifndef RESUMESHIM_SPENT_H
#define RESUMESHIM_SPENT_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "ledger.h"

/* On fd, the table's file (size bytes, opened for reading and writing by
 * the store, under its lock): the ticket's mark (ledger.h), and with mark
 * not MARK_NONE, one of that kind made where there is none. -1: the table
 * cannot be used (nothing may be offered from the store then, nor can it
 * be said what was). */
int spent_mark(int fd, off_t size, uint64_t digest, time_t now, enum mark mark);
/* Under the store's lock (dfd its directory): the ticket's mark in
 * DIR/spent, made of kind mark where there is none; -1 as spent_mark. */
int spend(int dfd, uint64_t digest, time_t now, enum mark mark);

#endif
