/* trecord: the contents of CA loads indexed by this user's processes, kept
 * in the store (RESUMESHIM_STORE) as one record, so that the next process
 * parses none of them: git loads the system's bundle and some 150 files
 * of /etc/ssl/certs each run. */
#ifndef RESUMESHIM_GNUTLS_TRECORD_H
#define RESUMESHIM_GNUTLS_TRECORD_H

#include <stddef.h>

/* The store's lock comes before the lists' (the fork handlers take them
 * in that order, fork.c): the record is read and written with no lock of
 * the trust rooms held.
 *
 * Reads the record, once per process (before the lists' lock is taken for
 * a load). */
void grecord_fetch(void);
/* At the first content not indexed here (the lists' lock held): the
 * contents grecord_fetch read join the index (gindex_adopt). */
void grecord_load(void);
/* The record anew, what was read and what was indexed since (the lists'
 * lock held): NULL when there is none to write. */
unsigned char *grecord_build(size_t *size);
/* Writes and frees what grecord_build made (no lock held). */
void grecord_write(unsigned char *rec, size_t size);

#endif
