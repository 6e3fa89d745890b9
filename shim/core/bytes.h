/* bytes: big-endian numbers in the records the store keeps beside its
 * sessions (the trust indexes), written in place and read with every
 * length checked against the record's end. */
#ifndef RESUMESHIM_BYTES_H
#define RESUMESHIM_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The n low bytes of v at *p, most significant first; *p moves past them. */
static inline void be_put(unsigned char **p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--)
        *(*p)++ = (unsigned char)(v >> (8 * i));
}

/* A record being read: ok turns false, for good, at the first read past
 * its end. */
struct be_reader {
    const unsigned char *p, *end;
    bool ok;
};

static inline uint64_t be_get(struct be_reader *r, int n)
{
    uint64_t v = 0;
    if (r->end - r->p < n) {
        r->ok = false;
        return 0;
    }
    for (int i = 0; i < n; i++)
        v = v << 8 | *r->p++;
    return v;
}

/* The next n bytes, in place; NULL past the end. */
static inline const unsigned char *be_take(struct be_reader *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->ok = false;
        return NULL;
    }
    const unsigned char *q = r->p;
    r->p += n;
    return q;
}

#endif
