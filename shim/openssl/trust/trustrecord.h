/* trustrecord: a trust file's index kept in the store (RESUMESHIM_STORE),
 * with the file's content, so that the next process takes the file on
 * demand from its first load: curl loads the system bundle once per run. */
#ifndef RESUMESHIM_TRUSTRECORD_H
#define RESUMESHIM_TRUSTRECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "trustindex.h"

/* The indexed content of these bytes recorded in the store, taken into the
 * process's table, or NULL. */
struct tcontent *trecord_load(const unsigned char *bytes, size_t len);
/* Writes an indexed content's record. */
void trecord_save(const struct tcontent *c);

#endif
