/* store: the cross-process store (RESUMESHIM_STORE): every process of the
 * user offers tickets that earlier ones earned. The verbs: store_take (a
 * session for a key; a TLS 1.3 ticket leaves the store, marked spent),
 * store_encode then store_write (sessions added), store_claim, store_spend
 * and store_mark (whose a ticket is: the ledger's questions, ledger.c
 * alone asks them), store_forget (a key's
 * entry removed); store_rewrite and store_side_read/_write for a backend's
 * own files; store_list and store_clear for the resumeshim command.
 * Ownership: the store keeps nothing of the caller's. What store_take
 * fills is the caller's (pooled_free); a struct stored is the caller's
 * from store_encode, freed with free() after store_write (which reorders
 * the list and frees nothing); a side file read is the caller's (free()).
 * Each call opens, locks and closes the store itself; false or nothing
 * means the store could not be used and the caller goes on without it.
 * The host's errno is preserved across every call. The room
 * shim/core/store/ holds the store, one concern a file: the directory
 * kept safe (dir.c), its lock (lock.c), the entries' names (names.c), the
 * sessions (sessions.c), the spent table (spent.c), the files beside the
 * entries (side.c), the command's listing (list.c) and the files' format
 * (record.c). */
#ifndef RESUMESHIM_STORE_H
#define RESUMESHIM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "key.h"
#include "ledger.h"
#include "store/record.h"
#include "seam.h"

/* A session encoded and named for one entry, ready to be written. */
struct stored;

/* Nothing: the store is off (cfg->store NULL or refused). */
void store_init(const struct config *cfg);
bool store_on(void);
/* Takes a session from the store: a TLS 1.3 ticket leaves it, and is
 * marked spent (store_claim); one whose digest held() says the taking
 * process's program holds is passed over, and stays. */
void store_take(const struct key *k, time_t now, bool (*held)(uint64_t digest), struct pooled *out);
/* The application offers a TLS 1.3 ticket of its own (sess, whose
 * ticket_digest is digest): it is marked the program's (ledger.h), so that
 * no copy of it is taken from the store (under any key), and the copy held
 * for the key leaves the store. True when the shim offered it already (a
 * process took it from a pool or the store): then it has been offered
 * once. False when the store cannot be used. */
bool store_claim(const struct key *k, const void *sess, uint64_t digest, time_t now);
/* Marks a TLS 1.3 ticket (its ticket_digest) spent by the shim, as
 * store_take does: 1 when no one had offered it (it may be offered), 0
 * when it was offered or is the program's, -1 when the store cannot say. */
int store_spend(uint64_t digest, time_t now);
/* Reads a ticket's mark, and makes one of kind mark where there is none
 * (MARK_NONE: only reads): the mark it had, or -1. */
int store_mark(uint64_t digest, time_t now, enum mark mark);
/* Removes a key's entry (the application refused the server). */
void store_forget(const struct key *k);
/* A session encoded and named now (NULL when it cannot be), to be written
 * later by store_write, which calls no TLS library function (it may run
 * after the library's cleanup). Freed with free(). */
struct stored *store_encode(const struct key *k, const struct pooled *p);
/* Adds the sessions to the store, in one operation; the list is given
 * oldest first, and reordered. */
void store_write(struct stored **list, unsigned n);
/* A file of the store that holds secrets of its own (the server mode's
 * ticket keys), read and rewritten under the lock: update is given its
 * contents (NULL, 0 when there is none) and writes the new ones to out,
 * which has room for max bytes (none: the file is removed), or returns
 * false to leave it as it is. Every copy is wiped after use. */
typedef bool (*store_update)(const char *in, size_t len, char *out, size_t *out_len, void *arg);
bool store_rewrite(const char *name, size_t max, store_update update, void *arg);
/* A backend's own file beside the entries, named "t-" and hex digits (at
 * most 16 MB; the store keeps the 8 newest): read whole (freed with
 * free()), or written in one piece. */
bool store_side_read(const char *name, char **buf, size_t *len);
bool store_side_write(const char *name, const char *buf, size_t len);

/* For the resumeshim command, given the store's absolute path, a directory
 * it judged the user's own store. store_list hands visit each readable
 * entry, in name order: its server (the salted hash store_server_hash
 * makes of a "host:port"), and its records, expired ones too; salt gets
 * the store's salt ("" when it has none). store_clear removes every entry,
 * the salt and any tmp under the lock, waiting up to wait_us for it. Both
 * false when the store could not be read or emptied. */
typedef void (*store_visit)(const char server[HEX_LEN + 1], const struct record *recs, int n,
                            void *arg);
bool store_list(const char *path, char salt[HEX_LEN + 1], store_visit visit, void *arg);
bool store_server_hash(const struct tls_ops *ops, const char salt[HEX_LEN + 1],
                       const char *server, char out[HEX_LEN + 1]);
bool store_clear(const char *path, long wait_us);

#endif
