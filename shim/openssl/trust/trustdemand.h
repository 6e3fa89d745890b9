/* trustdemand: trust files a store takes on demand. A CA file a program
 * loads (X509_load_cert_crl_file_ex) whose content this process has
 * indexed (trustindex.h) is not parsed: its entries wait beside the store,
 * and enter it one name at a time, as the store is searched for that name,
 * before the program adds an object of that name, or all at once before
 * the store's objects are handed out. trustdemand.c lists every way OpenSSL
 * 3.0 reads a store's objects, and why each finds what a full load would
 * have put there. */
#ifndef RESUMESHIM_TRUSTDEMAND_H
#define RESUMESHIM_TRUSTDEMAND_H

#include <stdbool.h>

#include "real.h"

void demand_init(void);
/* Whether any store has taken a file on demand yet: until then, searches
 * and adds have nothing to bring in. */
bool demand_on(void);
/* X509_load_cert_crl_file_ex, done by the shim when it can be done
 * exactly: true with *ret its return value; false when the real function
 * must run. */
bool demand_load_file(X509_LOOKUP *lu, const char *file, int type, OSSL_LIB_CTX *libctx,
                      const char *propq, int *ret);
/* The store is about to be searched for objects filed under name (a
 * certificate's subject, a CRL's issuer), or to be given one. */
void demand_need(X509_STORE *store, X509_LOOKUP_TYPE type, const X509_NAME *name);
/* An object was added to the store (X509_STORE_add_cert, _add_crl). */
void demand_added(X509_STORE *store);
/* The store's objects are about to be handed out whole; holding: the
 * caller keeps the store's own stack, so nothing may wait any more. */
void demand_need_all(X509_STORE *store, bool holding);
/* X509_STORE_get0_objects is about to hand out the stack to caller. */
void demand_handed(X509_STORE *store, const void *caller);
/* For the key: true with md the fingerprint of the store's objects as a
 * full load would have made them (trust.c's), when the store holds one
 * content on demand and nothing else; otherwise loads whatever waits and
 * returns false, for the fingerprint to be taken from the objects. */
bool demand_fingerprint(X509_STORE *store, unsigned char md[32]);

#endif
