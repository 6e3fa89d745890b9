/* record: the store's file format, a header and one line a session, with
 * the base64 both use. Nothing else: tested and fuzzed alone
 * (tests/fuzzstore.c). */
#ifndef RESUMESHIM_RECORD_H
#define RESUMESHIM_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define STORE_MAGIC "resumeshim-store 1"
#define HEX_LEN 64                 /* a SHA-256 in lowercase hex */
#define RECORD_MAX_B64 (64 * 1024) /* one session, or one peer chain */
#define RECORD_MAX_LINE (7 + 2 * 20 + 3 * RECORD_MAX_B64 + 5)
#define RECORDS_MAX (POOL_MAX + 1) /* the largest pool and a TLS 1.2 session */

/* One session in a store file. sess, chain and staple point into the text
 * they were parsed from: base64 of the session's DER, of the peer's
 * certificates' DER one after another (chain_len 0: none), and of the OCSP
 * response stapled in the full handshake behind it (staple_len 0: none). */
struct record {
    bool tls13;
    int64_t born, expires;
    const char *sess, *chain, *staple;
    size_t sess_len, chain_len, staple_len;
};

/* The records of a store file, in order; -1 when the text is not a whole,
 * well-formed file of this format with at most max records. */
int record_parse(const char *buf, size_t len, char server[HEX_LEN + 1], struct record *out,
                 int max);
/* Write the file's first lines / one record line; out must have room
 * (HEX_LEN + 40, RECORD_MAX_LINE). Return the bytes written. */
size_t record_header(char *out, const char server[HEX_LEN + 1]);
size_t record_line(char *out, const struct record *r);
/* The bytes record_line writes for r. */
size_t record_line_len(const struct record *r);

/* out needs 4 * ((len + 2) / 3) bytes; decoding needs 3 * len / 4. */
size_t b64_encode(const unsigned char *in, size_t len, char *out);
bool b64_decode(const char *in, size_t len, unsigned char *out, size_t *outlen);

#endif
