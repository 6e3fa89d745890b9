/* ticketkeys: the keys a server configuration's tickets are made with in
 * one rotation period: a name (the period, then a tag of the
 * configuration), an AES-256 key and an HMAC key. */
#ifndef RESUMESHIM_TICKETKEYS_H
#define RESUMESHIM_TICKETKEYS_H

#include <stdbool.h>
#include <stdint.h>

struct algs;

struct ticket_key {
    unsigned char name[16];
    unsigned char aes[32], mac[32];
};

/* The keys of a configuration (its fingerprint) for a period: the current
 * one (its secret made when create), or the previous one. */
bool ticketkeys_get(const struct algs *algs, const unsigned char conf[32], int64_t epoch,
                    bool create, struct ticket_key *k);
/* The period a ticket's key name was made in. */
int64_t ticketkeys_epoch(const unsigned char name[16]);

#endif
