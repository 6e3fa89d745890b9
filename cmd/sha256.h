/* sha256: SHA-256 (FIPS 180-4), for the store's names in `resumeshim list`:
 * the library hashes through its TLS library, and the command links none. */
#ifndef RESUMESHIM_CMD_SHA256_H
#define RESUMESHIM_CMD_SHA256_H

#include <stdbool.h>
#include <stddef.h>

/* The seam's signature (struct tls_ops' sha256); never fails. */
bool sha256(const void *data, size_t len, unsigned char out[32]);

#endif
