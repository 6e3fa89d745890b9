/* util: small helpers several rooms need, written once. */
#ifndef RESUMESHIM_UTIL_H
#define RESUMESHIM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64 bits: identities of tickets held in small tables. */
uint64_t fnv1a64(const void *data, size_t len);
/* Lowercase hex of n bytes; out has room for 2 * n + 1. */
void hex_encode(const unsigned char *in, size_t n, char *out);
/* A whole decimal number from lo to hi, nothing else in s. */
bool parse_long(const char *s, long lo, long hi, long *out);
/* A run of lowercase hex digits. */
bool is_hex(const char *s, size_t len);
/* n bytes from 2 * n lowercase hex digits; false (out undefined) on any
 * other character. */
bool hex_decode(const char *s, size_t n, unsigned char *out);

/* The depth of TLS calls this thread is inside (hooks nest: libssl calls
 * its own exports, and a judge may run a handshake of its own): what the
 * library does while it is non-zero is its handshake's doing, not the
 * application's. */
extern _Thread_local int handshake_depth_;
static inline void handshake_enter(void)
{
    handshake_depth_++;
}
static inline void handshake_leave(void)
{
    handshake_depth_--;
}
static inline bool in_handshake(void)
{
    return handshake_depth_ != 0;
}

#endif
