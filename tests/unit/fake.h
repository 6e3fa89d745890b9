/* A backend without a TLS library, for the unit tier: sessions are plain
 * refcounted structs the tests make and inspect, so the core's rules
 * (single use, private copies, who frees what) can be checked directly. */
#ifndef RESUMESHIM_FAKE_H
#define RESUMESHIM_FAKE_H

#include <stdbool.h>
#include <stddef.h>

#include "seam.h"

#define FAKE_TICKET_MAX 64

struct fake_sess {
    unsigned magic;   /* FAKE_LIVE, or FAKE_DEAD once its last reference went */
    int refs;
    bool tls13;
    bool resumable;
    unsigned id;      /* which session this is, copies included */
    unsigned copy_of; /* 0: an original; else the id it was dup'd from */
    size_t ticket_len;
    unsigned char ticket[FAKE_TICKET_MAX];
    struct fake_sess *next_dead; /* kept until fake_reset, to catch double frees */
};

extern const struct tls_ops fake_ops;

/* A new session with one reference (the caller's). The ticket is a string. */
struct fake_sess *fake_new(bool tls13, const char *ticket);
/* Objects whose last reference has not gone yet. */
long fake_live(void);
long fake_certs_live(void);
/* Frees or references an object that was not live: counted, never fatal, so
 * a test can report it. */
long fake_errors(void);
/* A chain as the backend's objects (refcounted like sessions). */
void *fake_certs_new(const char *der);
/* Forgets the dead, after a test has checked the counters. */
void fake_reset(void);

/* SHA-256 (FIPS 180-4), small and unoptimised. */
void fake_sha256(const void *data, size_t len, unsigned char out[32]);

#endif
