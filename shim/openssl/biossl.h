/* biossl: libssl's SSL BIO method, with its read and write passing through
 * the hooks first. */
#ifndef RESUMESHIM_BIOSSL_H
#define RESUMESHIM_BIOSSL_H

#include "real.h"

typedef int (*biossl_read_fn)(BIO *b, char *buf, size_t size, size_t *got);
typedef int (*biossl_write_fn)(BIO *b, const char *buf, size_t size, size_t *put);
typedef long (*biossl_ctrl_fn)(BIO *b, int cmd, long larg, void *parg);

/* libssl's own functions of the method, for the replacements to call;
 * set once biossl_method has made the method. */
struct biossl {
    biossl_read_fn read;
    biossl_write_fn write;
    biossl_ctrl_fn ctrl;
};
extern struct biossl biossl_real;

/* The SSL BIO method (libssl's is real) with read and write replaced; made
 * once. NULL when it cannot be made: then libssl's own serves. */
const BIO_METHOD *biossl_method(const BIO_METHOD *real, biossl_read_fn read,
                                biossl_write_fn write);

#endif
