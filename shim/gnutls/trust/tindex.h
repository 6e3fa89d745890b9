/* tindex: the PEM contents of CA loads this process made into credentials'
 * lists, by content: how many certificates GnuTLS's own parse of it finds
 * (gnutls_x509_crt_list_import2, flags 0, as add_trust_mem parses), and
 * for each one its encoding, the hash bucket a list of the default size
 * files it in, and its validity, so that a list can take them one bucket
 * at a time (tdemand.h); or read from the store (trecord.h), with the
 * place of each certificate's PEM block in place of its encoding. Contents
 * are kept for the life of the process and never change once indexed:
 * lists point into them without references. */
#ifndef RESUMESHIM_GNUTLS_TINDEX_H
#define RESUMESHIM_GNUTLS_TINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "real.h"

/* A list made with size 0 has DEFAULT_SIZE buckets (lib/x509/verify-high.c
 * of 3.7.9 and 3.8.9: 127); a certificate's is hash_pjw_bare(its raw
 * subject) modulo that. */
#define TINDEX_BUCKETS 127

struct gentry {
    gnutls_datum_t der; /* empty for an entry read from the store */
    size_t off, len;    /* its PEM block in the content (len 0: unknown) */
    unsigned bucket;
    time_t not_before, not_after;
};

struct gcontent {
    const unsigned char *bytes;
    size_t len;
    uint64_t hash;
    unsigned n; /* what the parse returned: the count a load returns */
    struct gentry *e;
    bool blocks; /* every entry's PEM block known: it can be recorded */
    struct gcontent *next, *older;
};

/* The bucket of a raw name (subject or issuer), as GnuTLS computes it. */
unsigned gindex_bucket(const unsigned char *dn, size_t len);
/* The content equal to pem, indexed now if it is new; NULL when GnuTLS's
 * parse fails, finds nothing, or memory runs out. Under the caller's lock
 * (tdemand.c): the parse runs through GnuTLS. */
const struct gcontent *gindex_of(const gnutls_datum_t *pem);
/* Entry i of c as a new certificate object, or NULL (for an entry read
 * from the store: its block parses to nothing, or to a certificate of
 * another bucket). */
gnutls_x509_crt_t gindex_crt(const struct gcontent *c, unsigned i);
/* Contents read from the store (trecord.h) join the table: each as it
 * would have been indexed here. Takes c; false when it is not kept. */
bool gindex_adopt(struct gcontent *c);
/* Each content kept that can be recorded, oldest first. */
void gindex_each(void (*fn)(const struct gcontent *c, void *arg), void *arg);
/* Contents indexed here since the last call (false: none). */
bool gindex_news(void);
uint64_t gindex_hash(const unsigned char *p, size_t n);

#endif
