/* cred: what the shim knows of certificate credentials, recorded by the
 * hooks as the program builds them: a digest of the trust it was given
 * (each input's content, or for a file the file's identity), and whether
 * anything decides by callback. Kept by address, made anew when
 * credentials are allocated and dropped when they are freed, so a reused
 * address starts clean. */
#ifndef RESUMESHIM_GNUTLS_CRED_H
#define RESUMESHIM_GNUTLS_CRED_H

#include <stdbool.h>
#include <stddef.h>

struct cred_view {
    unsigned char trust[32];
    /* The digest does not pin the trust's content (a directory, whose
     * files may change without it; objects): enough to tell trust sets
     * apart, not to stand in for a check a resumption skips. */
    bool trust_inexact;
    bool callback;      /* a verify or client-certificate callback */
    unsigned max_bits, max_depth;
};

void cred_init(void);
void cred_new(const void *cred);
void cred_gone(const void *cred);
/* Trust (or CRLs) given: kind says how, and data is its content. */
void cred_trust(const void *cred, char kind, const void *data, size_t len);
/* Trust given as a file: its name and identity (device, inode, size,
 * modification time), which change whenever its content does. */
void cred_trust_file(const void *cred, char kind, const char *path);
void cred_trust_inexact(const void *cred);
enum cred_cb { CB_VERIFY, CB_RETRIEVE };
void cred_callback(const void *cred, enum cred_cb which, bool set);
void cred_limits(const void *cred, unsigned max_bits, unsigned max_depth);
/* False for credentials the shim never saw allocated. */
bool cred_view(const void *cred, struct cred_view *out);

#endif
