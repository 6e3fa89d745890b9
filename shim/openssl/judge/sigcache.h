/* sigcache: the signature checks a handshake or a judgment already made,
 * so that the judge of a resumed connection does not make them again. */
#ifndef RESUMESHIM_SIGCACHE_H
#define RESUMESHIM_SIGCACHE_H

#include "real.h"

void sigcache_init(void);
/* X509_verify(cert, key) through verify (the real one), unless it is
 * known to succeed; a success is kept. */
int sigcache_verify(X509 *cert, EVP_PKEY *key, int (*verify)(X509 *, EVP_PKEY *));

#endif
