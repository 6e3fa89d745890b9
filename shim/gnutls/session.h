/* session: GnuTLS's sessions as the core sees them. A GnuTLS client
 * session is the data gnutls_session_get_data2 packs (it holds the peer's
 * certificates, which a resumed session reports again); the shim keeps its
 * own copy of those bytes, reference-counted. */
#ifndef RESUMESHIM_GNUTLS_SESSION_H
#define RESUMESHIM_GNUTLS_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "seam.h"

extern const struct tls_ops gtls_ops;

/* A session of the given data (copied); NULL when out of memory. */
void *gsession_new(const unsigned char *data, size_t len, bool tls13);
const unsigned char *gsession_data(const void *sess, size_t *len);
bool gsession_sha256(const void *data, size_t len, unsigned char out[32]);

#endif
