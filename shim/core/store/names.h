/* The entries' names (names.c): an entry is named "s-" and the salted
 * SHA-256 of its key, its server by that of "host:port", so that no file
 * of the store lists a host; a new salt (DIR/salt) orphans every entry,
 * and the entries go with it. */
#ifndef RESUMESHIM_STORE_NAMES_H
#define RESUMESHIM_STORE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "key.h"
#include "seam.h"
#include "store/entry.h"
#include "store/record.h"

/* The process's mutex in the fork registry (store_init). */
void names_init(void);
/* SHA-256 of the salt, a newline and the data, in hex. */
bool salted(const struct tls_ops *ops, const char salt[HEX_LEN + 1], const void *data,
            size_t len, char out[HEX_LEN + 1]);
/* Whether a name is one the store gives an entry. */
bool entry_name(const char *name);
/* Removes every entry; whether every one went. */
bool remove_entries(int dfd);
/* The store's salt, made when create says (the lock is held). */
bool get_salt(int dfd, bool create, char salt[HEX_LEN + 1]);
/* Names the entry for a key under st->salt: its file and its server. */
bool name_with(const struct key *k, struct stored *st);
/* The same under the store's salt, read now (the lock is held), which
 * becomes the salt last seen. */
bool name_entry(int dfd, const struct key *k, struct stored *st);
/* The salt last seen ("" when none was), for naming without the store. */
void names_salt_seen(char salt[HEX_LEN + 1]);

#endif
