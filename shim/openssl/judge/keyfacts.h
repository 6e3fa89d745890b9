/* keyfacts: what a verification asks of a key beside its signatures,
 * answered again from memory inside the judge's verifications. */
#ifndef RESUMESHIM_KEYFACTS_H
#define RESUMESHIM_KEYFACTS_H

#include "real.h"

/* Around a verification that runs no code of the program's own: answers
 * are kept and given from begin to end, and keys let go are freed at the
 * end. */
void keyfacts_begin(void);
void keyfacts_end(void);
/* EVP_PKEY_is_a(key, name) through is_a (the real one), unless this
 * thread knows the answer is yes. */
int keyfacts_is_a(const EVP_PKEY *key, const char *name,
                  int (*is_a)(const EVP_PKEY *, const char *));
/* EVP_PKEY_get_int_param(key, name, out) through get (the real one),
 * unless this thread knows its answer. */
int keyfacts_get_int_param(const EVP_PKEY *key, const char *name, int *out,
                           int (*get)(const EVP_PKEY *, const char *, int *));

#endif
