/* vtime: a certificate's validity times, converted once, for the checks of
 * time inside handshakes and judgments. */
#ifndef RESUMESHIM_VTIME_H
#define RESUMESHIM_VTIME_H

#include <time.h>

#include <openssl/asn1.h>

/* What X509_cmp_time(ctm, cmp_time) answers, from a memo of ctm's value;
 * through real (the real one) for whatever the memo does not answer
 * exactly as it would. */
int vtime_cmp(const ASN1_TIME *ctm, time_t *cmp_time,
              int (*real)(const ASN1_TIME *, time_t *));

#endif
