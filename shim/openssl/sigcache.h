/* sigcache: the signature checks a handshake or a judgment already made,
 * so that the judge of a resumed connection does not make them again. */
#ifndef RESUMESHIM_SIGCACHE_H
#define RESUMESHIM_SIGCACHE_H

#include <stdbool.h>

#include "real.h"

void sigcache_init(void);
/* Whether X509_verify(cert, key) is known to succeed. */
bool sigcache_known(const X509 *cert, const EVP_PKEY *key);
/* X509_verify(cert, key) succeeded. */
void sigcache_note(X509 *cert, EVP_PKEY *key);

#endif
