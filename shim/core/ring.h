/* ring: the server mode's ticket secrets, one per rotation period, shared
 * by a server's workers (a shared mapping made at load time) and, with a
 * store, by its independent processes (the store's key file). Only
 * secrets: the keys a configuration's tickets use are derived from them by
 * the backend (shim/openssl/server/ticketkeys.c). */
#ifndef RESUMESHIM_RING_H
#define RESUMESHIM_RING_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Made at load time, before a server forks its workers. */
void ring_prepare(void);
/* Set-up: the rotation period in seconds. True when the ring exists. */
bool ring_ready(long rotate);
long ring_period(void);
int64_t ring_epoch(time_t now);
/* Changes whenever a secret does: what was derived before is stale. */
uint64_t ring_generation(void);
/* The secret of a period: the current one (made when create), or the
 * previous one (decryption only). */
bool ring_secret(int64_t epoch, bool create, unsigned char out[32]);

#endif
