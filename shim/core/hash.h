/* uthash, its additions failing softly: with no memory for one, the
 * element is left out of the table (its hh.tbl NULL) where uthash's
 * default ends the program (exit(-1)). Every addition checks. */
#ifndef RESUMESHIM_HASH_H
#define RESUMESHIM_HASH_H

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#endif
