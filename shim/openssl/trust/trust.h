/* trust: fingerprints of X509_STOREs by content, for the cache key. Kept
 * on each store (ex_data), taken before the store's first use by a
 * connection we follow, and taken again only when the application changes
 * the store: verification loads certificates from lookup directories
 * lazily, which must not change it between two connections. */
#ifndef RESUMESHIM_TRUST_H
#define RESUMESHIM_TRUST_H

#include <stdbool.h>

#include "algs.h"
#include "real.h"

void trust_init(void);
/* The store's objects' fingerprint and its lookup locations' digest (64
 * bytes); false when it cannot be told apart. */
bool trust_fingerprint(X509_STORE *store, const struct algs *algs, unsigned char md[64]);
/* A certificate's or CRL's signature, as a fingerprint reads it. */
struct trust_sig {
    const unsigned char *p;
    size_t len;
};
/* SHA-256, in algs, over signatures in one order (by length, then bytes;
 * each after its length in 4 bytes), sorting sigs: a store's fingerprint
 * (trust_fingerprint), which a trust file's index (trustindex.c) must
 * reproduce byte for byte. False on any failure. */
bool trust_digest(struct trust_sig *sigs, size_t n, const struct algs *algs, unsigned char md[32]);
/* The application changed a trust store. */
void trust_changed(X509_STORE *store);
/* The application gave a store a lookup location (a CA directory). */
void trust_lookup(X509_STORE *store, int cmd, const char *where);
/* The store verifies with code of the program's own: any of the functions
 * X509_STORE_set_* puts in place of libcrypto's. */
bool trust_runs_code(X509_STORE *store);
/* Code of the program's own was put in place of libcrypto's where every
 * verification runs it: a lookup method other than libcrypto's file,
 * directory and OSSL_STORE ones (on any store), a purpose or a trust
 * check. Seen: since then. */
void trust_program_code(void);
bool trust_program_code_seen(void);

#endif
