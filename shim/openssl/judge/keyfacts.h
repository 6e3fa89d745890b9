/* keyfacts: what a verification asks of a key beside its signatures,
 * answered again from memory inside handshakes and judgments. */
#ifndef RESUMESHIM_KEYFACTS_H
#define RESUMESHIM_KEYFACTS_H

#include "real.h"

/* EVP_PKEY_is_a(key, name) through is_a (the real one), unless this
 * thread knows the answer is yes. */
int keyfacts_is_a(const EVP_PKEY *key, const char *name,
                  int (*is_a)(const EVP_PKEY *, const char *));
/* EVP_PKEY_get_int_param(key, name, out) through get (the real one),
 * unless this thread knows its answer. */
int keyfacts_get_int_param(const EVP_PKEY *key, const char *name, int *out,
                           int (*get)(const EVP_PKEY *, const char *, int *));

#endif
