/* The one interface between the TLS-neutral core (shim/core/) and a TLS
 * backend (shim/openssl/): the core keeps, counts, stores and hands out
 * sessions it cannot read. Each session travels with the table of
 * operations of the backend that made it, and a cache key of that backend
 * (core/key.h: its first byte names the backend), so no session ever
 * reaches a connection of another library.
 *
 * Ownership: a struct pooled owns one reference to its session and owns
 * its chain; whoever holds one frees it with pooled_free (core/session.h)
 * or hands it on. */
#ifndef RESUMESHIM_SEAM_H
#define RESUMESHIM_SEAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct tls_ops {
    const char *name;
    /* Drops one reference. May run the application's callbacks: never
     * called under a lock of the core's. */
    void (*free)(void *sess);
    /* Another reference to the same object. */
    bool (*up_ref)(void *sess);
    /* A private copy (NULL on failure): a TLS 1.2 session is handed out
     * many times, and a connection's fate must not become the pool's. */
    void *(*dup)(const void *sess);
    bool (*is_tls13)(const void *sess);
    /* Whether the library would still offer it. */
    bool (*resumable)(const void *sess);
    /* A TLS 1.3 ticket's identity: its bytes, hashed (a small ring of the
     * tickets the application owns), or compared whole. */
    uint64_t (*ticket_digest)(const void *sess);
    bool (*same_ticket)(const void *a, const void *b);
    /* The session as bytes (malloc'd; NULL on failure), and back. */
    unsigned char *(*encode)(const void *sess, size_t *len);
    void *(*decode)(const unsigned char *der, size_t len);
    /* The decoded form of a verified peer chain (struct chain). */
    void (*certs_free)(void *certs);
    void *(*certs_up_ref)(void *certs);
    /* The DER of every certificate, one after another (malloc'd). */
    unsigned char *(*certs_encode)(const void *certs, size_t *len);
    /* SHA-256, for the store's names (the process's default provider). */
    bool (*sha256)(const void *data, size_t len, unsigned char out[32]);
};

/* The peer chain verified by the full handshake behind a session, which a
 * library may keep in a live session but not in a serialized one: as the
 * backend's objects (certs, read with ops), or as DER (from the store),
 * decoded only when asked for. */
struct chain {
    const struct tls_ops *ops; /* reads certs */
    void *certs;
    unsigned char *der;
    size_t der_len;
    /* The OCSP response stapled to it (DER), for connections that ask for
     * one; NULL when none came. lost: a copy of it failed, and what the
     * judge saw can no longer be shown again. */
    unsigned char *staple;
    size_t staple_len;
    bool lost;
};

struct pooled {
    const struct tls_ops *ops; /* reads sess */
    void *sess;                /* a reference the holder owns */
    struct chain chain;        /* owned too */
    time_t born;               /* the full handshake that verified the server */
    time_t expires;            /* never offered at or after this moment */
    bool app;                  /* a TLS 1.3 ticket the application keeps */
};

#endif
