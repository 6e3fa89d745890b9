/* pooled: what the core does with the sessions it holds through the seam
 * (include/seam.h): free, copy and encode a chain, free a pooled session. */
#ifndef RESUMESHIM_POOLED_H
#define RESUMESHIM_POOLED_H

#include "seam.h"

#define MAX_TICKET_BYTES 8192
#define MAX_STAPLE_BYTES 16384

void chain_free(struct chain *c);
struct chain chain_copy(const struct chain *c);
/* The DER of every certificate, one after another (malloc'd; NULL, 0 for
 * none or on failure). */
unsigned char *chain_encode(const struct chain *c, size_t *len);
void pooled_free(struct pooled *p);

#endif
