/* trustindex: the trust files this process has loaded, by content. A
 * content loaded a second time, cleanly, is indexed: where each of its PEM
 * blocks lies, what it is (a certificate or a CRL), the name OpenSSL files
 * it under in a store (a certificate's subject, a CRL's issuer) and its
 * signature, so that a store can take its entries one name at a time
 * (trustdemand.h). Contents are kept for the life of the process and never
 * change once recorded: stores point into them without references. */
#ifndef RESUMESHIM_TRUSTINDEX_H
#define RESUMESHIM_TRUSTINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "real.h"

struct tentry {
    size_t off, len;  /* the PEM text that parses to this entry alone */
    bool crl;
    bool dup;         /* equal to an earlier entry: a store keeps that one */
    X509_NAME *name;  /* subject, or a CRL's issuer; read from a record
                       * (trustrecord.h): decoded from der when first
                       * matched, after its hash */
    unsigned char *der;
    size_t derlen;
    unsigned long hash; /* X509_NAME_hash_ex, when der is set */
    const unsigned char *sig;
    size_t siglen;
};

struct tcontent {
    unsigned char *bytes;
    size_t len;
    uint64_t hash;
    int count;    /* what X509_load_cert_crl_file_ex returned for it */
    bool tried;   /* a clean load has offered it for indexing */
    size_t n;     /* entries; 0 until indexed */
    struct tentry *e;
    /* SHA-256 over the entries' distinct signatures in trust.c's order:
     * the fingerprint of a store that holds this content alone. */
    unsigned char sighash[32];
    bool indexed; /* atomic; the entries are set before it */
    struct tcontent *next;
};

void tindex_init(void);
/* The whole of a regular file, read now (at most a few MB); false when it
 * cannot be read, is not a regular file or holds a NUL byte. */
bool tindex_read(const char *file, unsigned char **bytes, size_t *len);
/* The recorded content equal to these bytes, or NULL. */
struct tcontent *tindex_find(const unsigned char *bytes, size_t len);
/* Records the bytes of a first load. Takes bytes; NULL when not kept. */
struct tcontent *tindex_seen(unsigned char *bytes, size_t len);
/* A later load of the content was done cleanly, returning count; inf is
 * what PEM_X509_INFO_read_bio_ex made of it: the content is indexed from
 * it, once; true when this call indexed it. */
bool tindex_index(struct tcontent *c, int count, const STACK_OF(X509_INFO) *inf);
/* The name a content's record has in the store: "t-" and 16 hex digits. */
void tindex_record_name(const unsigned char *bytes, size_t len, char out[19]);
/* A content read from a record, whose bytes equal these: recorded (the
 * table's own if another thread was first). NULL when not kept. */
struct tcontent *tindex_adopt(struct tcontent *c);
/* The entry's name, decoded now if need be (NULL when it cannot be). Under
 * the lock of whoever brings entries in (demand_lock). */
const X509_NAME *tindex_name(struct tentry *e);
/* Whether entry e is filed under name; h: name's X509_NAME_hash_ex, or
 * NULL. Under the lock of whoever brings entries in (demand_lock). */
bool tindex_is(struct tentry *e, const X509_NAME *name, const unsigned long *h);
/* Frees one X509_INFO (for OPENSSL_sk_pop_free). */
void tindex_free_info(void *xi);
/* Parses the content's entry i on its own, as the whole file parses it:
 * a new reference to its certificate or CRL, false on failure. */
bool tindex_parse(const struct tcontent *c, size_t i, X509 **x, X509_CRL **crl);
/* The entry a full load of the content adds last: the last X509_INFO's
 * CRL, else its certificate, which is not the file's last entry where a
 * CRL opened that X509_INFO (index_from, trustindex.c). c->n != 0. */
size_t tindex_last_added(const struct tcontent *c);
/* The signatures of the entry's object, as the fingerprint reads them. */
bool tindex_signature(X509 *x, X509_CRL *crl, const unsigned char **sig, size_t *len);

#endif
