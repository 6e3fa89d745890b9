/* psk: the client's identity in PSK credentials, recorded by the hooks as
 * the program sets it (GnuTLS has no getter): a digest of the username,
 * the key and its format, or that a function supplies them. Kept by
 * address from allocation to free, as cred.c keeps certificate
 * credentials. A resumption skips the PSK's proof, and no judgment of the
 * server can catch a session offered under another identity: the identity
 * is in the key, and a function's never is. */
#ifndef RESUMESHIM_GNUTLS_PSK_H
#define RESUMESHIM_GNUTLS_PSK_H

#include <stdbool.h>
#include <stddef.h>

struct psk_view {
    bool set;           /* a username and key were given */
    bool callback;      /* a function gives them */
    bool unknown;       /* given, but not digested (out of memory) */
    unsigned char identity[32];
};

void psk_init(void);
void psk_new(const void *cred);
void psk_gone(const void *cred);
void psk_set(const void *cred, const void *user, size_t user_len, const void *key, size_t key_len,
             unsigned flags);
void psk_callback(const void *cred, bool set);
/* False for credentials the shim never saw allocated. */
bool psk_view(const void *cred, struct psk_view *out);

#endif
