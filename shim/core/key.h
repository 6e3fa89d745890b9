/* key: the cache key, what a session's verdict depended on, as bytes. The
 * backend decides what goes in (shim/openssl/client/verdict.c); this room only
 * encodes: each field tagged and length-prefixed so that no two
 * configurations encode alike, content never pointers, so that equal
 * configurations built twice share sessions. A session is offered only to
 * a connection whose key equals the one it was earned under. */
#ifndef RESUMESHIM_KEY_H
#define RESUMESHIM_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seam.h"

#define KEY_MAX 2048

/* The first byte: what the key is for. A key of one kind never equals a
 * key of another, so sessions never cross between backends. */
enum key_kind {
    KEY_OPENSSL_CLIENT = 1,
    KEY_OPENSSL_SERVER = 2, /* a server configuration's fingerprint */
    KEY_GNUTLS_CLIENT = 3,
};

struct key {
    size_t len; /* 0: this connection has no usable key, never resume it */
    unsigned char bytes[KEY_MAX];
    char server[300]; /* host:port, for the store's listing (never in clear) */
    unsigned hash;    /* of the bytes, for the pool's table (key_end) */
    const struct tls_ops *ops; /* reads the sessions kept under it */
    /* What the backend asks of the connections under this key (in the
     * bytes too): */
    bool staple;      /* it asks for a stapled OCSP response, kept with sessions */
    bool judge;       /* ...and judges it by a status callback */
};

void key_begin(struct key *k, const struct tls_ops *ops, enum key_kind kind);
/* A field; one that does not fit leaves the key empty (len 0). */
void key_put(struct key *k, char tag, const void *data, size_t len);
void key_put_num(struct key *k, char tag, uint64_t v);
void key_put_str(struct key *k, char tag, const char *s); /* NULL: nothing */
/* The key is unusable: no resumption under it. */
static inline void key_fail(struct key *k)
{
    k->len = 0;
}
/* Where the connection goes: the server name it asks for and the port,
 * or without a name the peer's address, of socket fd (-1, or no socket
 * with a peer: no key). listed: fill k->server for the store's listing. */
void key_put_peer(struct key *k, const char *sni, int fd, bool listed);
/* Done: the hash the pool's table looks the key up by. */
void key_end(struct key *k);
bool key_same(const struct key *a, const struct key *b);

#endif
