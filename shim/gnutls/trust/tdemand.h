/* tdemand: GnuTLS certificate credentials' trust, loaded on demand.
 *
 * A git request through libcurl-gnutls spends most of its instructions
 * loading the system's bundle, then the same certificates again from
 * /etc/ssl/certs, each checked against every one of its bucket for
 * duplicates, to verify one chain that reads two or three buckets. Here a
 * credentials' own list (the one GnuTLS made for them, until the program
 * is handed it) takes no certificate while only a client's verification
 * reads it: each CA load is recorded and answered from the content's
 * index (tindex.h), and lookups run on a shadow list that holds, complete
 * and in load order, every bucket the call can read. Whatever could see
 * more of the list first replays the recorded loads into the real list,
 * still empty, with GnuTLS's own call and the program's arguments; the
 * list is GnuTLS's from then on. */
#ifndef RESUMESHIM_GNUTLS_TDEMAND_H
#define RESUMESHIM_GNUTLS_TDEMAND_H

#include <stdbool.h>
#include <time.h>

#include "real.h"

void tdemand_init(void);
/* Credentials were allocated (their list may wait), or freed. */
void tdemand_cred_new(gnutls_certificate_credentials_t cred);
void tdemand_cred_gone(gnutls_certificate_credentials_t cred);
/* The list is freed by GnuTLS (gnutls_certificate_set_trust_list). */
void tdemand_list_gone(gnutls_x509_trust_list_t list);
/* True on this thread while the shim itself calls into a list: the
 * hooks pass those calls on untouched. */
bool tdemand_inside(void);
/* add_trust_mem into list: true when recorded, the count in *ret. */
bool tdemand_add_mem(gnutls_x509_trust_list_t list, const gnutls_datum_t *cas,
                     const gnutls_datum_t *crls, gnutls_x509_crt_fmt_t type, unsigned flags,
                     unsigned vflags, int *ret);
/* What follows may read or change all of the list: the recorded loads go
 * in first. */
void tdemand_whole(gnutls_x509_trust_list_t list);
void tdemand_whole_cred(gnutls_certificate_credentials_t cred);
/* The program may log what GnuTLS does (a log or audit function, a level):
 * every list waiting is loaded now, before it can, and none waits again. */
void tdemand_noisy(void);
/* The list a lookup runs on: list's shadow, holding the subject and issuer
 * buckets of crts (and dn's bucket), or list itself. */
gnutls_x509_trust_list_t tdemand_lookup(gnutls_x509_trust_list_t list,
                                        const gnutls_x509_crt_t *crts, unsigned n,
                                        const gnutls_datum_t *dn);
/* For a list that waits: fn(arg, t) for each certificate's notBefore and
 * notAfter of the certificates a full load would have put in it, until
 * one returns false; 1 when all returned true, 0 when one did not, -1
 * when the list does not wait (its own certificates are read). */
int tdemand_bounds(gnutls_x509_trust_list_t list, bool (*fn)(void *arg, time_t t), void *arg);

#endif
