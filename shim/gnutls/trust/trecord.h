/* trecord: the contents of CA loads indexed by this user's processes, kept
 * in the store (RESUMESHIM_STORE) as one record, so that the next process
 * parses none of them: git loads the system's bundle and some 150 files
 * of /etc/ssl/certs each run. */
#ifndef RESUMESHIM_GNUTLS_TRECORD_H
#define RESUMESHIM_GNUTLS_TRECORD_H

/* Once per process, at its first content not indexed here: the record's
 * contents join the index (gindex_adopt). */
void grecord_load(void);
/* Writes the record anew: what was read, and what was indexed since. */
void grecord_save(void);

#endif
