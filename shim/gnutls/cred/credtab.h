/* credtab: state kept per GnuTLS credentials object, found by its address
 * (certificate credentials in cred.c, PSK ones in psk.c): a table and its
 * lock. Each entry begins with struct credent. */
#ifndef RESUMESHIM_GNUTLS_CREDTAB_H
#define RESUMESHIM_GNUTLS_CREDTAB_H

#include <pthread.h>
#include <stddef.h>

#include "hash.h"

struct credent {
    UT_hash_handle hh;
    const void *cred;
};

struct credtab {
    struct credent *head;
    pthread_mutex_t lock;
};
#define CREDTAB_INIT {NULL, PTHREAD_MUTEX_INITIALIZER}

void credtab_init(struct credtab *t);
/* A zeroed entry of size bytes for cred, in place of any earlier one (an
 * address GnuTLS reuses); none when out of memory. */
void credtab_new(struct credtab *t, const void *cred, size_t size);
void credtab_gone(struct credtab *t, const void *cred);
/* Under t->lock: cred's entry, or NULL. */
void *credtab_find(struct credtab *t, const void *cred);

#endif
