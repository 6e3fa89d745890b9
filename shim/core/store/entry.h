/* An entry's session as store_encode makes it (store.h's struct stored):
 * encoded and named, ready to be written by store_write. */
#ifndef RESUMESHIM_STORE_ENTRY_H
#define RESUMESHIM_STORE_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/record.h"

struct stored {
    char salt[HEX_LEN + 1];   /* what the names below were made with */
    char name[HEX_LEN + 3];   /* s-HEX */
    char server[HEX_LEN + 1];
    bool tls13;
    int64_t expires;
    unsigned seq;             /* store_write's order */
    size_t len;
    char line[];              /* the record, as record_line wrote it */
};

#endif
