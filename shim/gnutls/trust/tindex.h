/* tindex: the PEM contents of CA loads this process made into credentials'
 * lists, by content: how many certificates GnuTLS's own parse of it finds
 * (gnutls_x509_crt_list_import2, flags 0, as add_trust_mem parses), and
 * for each one its encoding, the hash bucket a list of the default size
 * files it in, and its validity, so that a list can take them one bucket
 * at a time (tdemand.h). Contents are kept for the life of the process and
 * never change once indexed: lists point into them without references. */
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
    gnutls_datum_t der;
    unsigned bucket;
    time_t not_before, not_after;
};

struct gcontent {
    unsigned char *bytes;
    size_t len;
    uint64_t hash;
    unsigned n; /* what the parse returned: the count a load returns */
    struct gentry *e;
    struct gcontent *next;
};

/* The bucket of a raw name (subject or issuer), as GnuTLS computes it. */
unsigned gindex_bucket(const unsigned char *dn, size_t len);
/* The content equal to pem, indexed now if it is new; NULL when GnuTLS's
 * parse fails, finds nothing, or memory runs out. Under the caller's lock
 * (tdemand.c): the parse runs through GnuTLS. */
const struct gcontent *gindex_of(const gnutls_datum_t *pem);
/* Entry i of c as a new certificate object, or NULL. */
gnutls_x509_crt_t gindex_crt(const struct gcontent *c, unsigned i);

#endif
