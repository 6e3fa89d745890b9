/* cred: what the shim knows of certificate credentials, recorded by the
 * hooks as the program builds them: a digest of the trust it was given
 * (each input's content, or for a file the file's identity), the verify
 * function GnuTLS would call, whether a function picks the client's
 * certificate, and the client's own identity in them. Kept by address,
 * made anew when credentials are allocated and dropped when they are
 * freed, so a reused address starts clean. */
#ifndef RESUMESHIM_GNUTLS_CRED_H
#define RESUMESHIM_GNUTLS_CRED_H

#include <stdbool.h>
#include <stddef.h>

#include <gnutls/gnutls.h>

struct cred_view {
    /* Tells trust sets apart, for choosing which session to offer: the
     * judgment of a resumed connection (judge/judge.c) reads the trust itself. */
    unsigned char trust[32];
    gnutls_certificate_verify_function *verify_fn; /* NULL: none */
    bool retrieve;      /* a function picks the client's certificate */
    unsigned max_bits, max_depth;
    /* Every certificate of every key the credentials hold, and each key,
     * by content; false when a key cannot be read (a token's). */
    bool identity_ok;
    unsigned char identity[32];
};

/* The trust as the shim saw it change, for the verdict memo (vmemo.c):
 * these credentials (serial: one per allocation), the generation of their
 * trust (two steps per change: one before, one after), changes under way,
 * and whether the trust can change where the shim cannot see it (the list
 * handed out or the program's own, a PKCS #11 token) or depends on more
 * than the certificates' times (CRLs). */
struct cred_trust_state {
    unsigned long serial, gen;
    unsigned busy;
    bool open;
    unsigned max_bits, max_depth;
};

void cred_init(void);
void cred_new(const void *cred);
void cred_gone(const void *cred);
/* Trust (or CRLs) given: kind says how, and data is its content. */
void cred_trust(const void *cred, char kind, const void *data, size_t len);
/* Trust given as a file: its name and identity (device, inode, size,
 * modification time). */
void cred_trust_file(const void *cred, char kind, const char *path);
void cred_verify_function(const void *cred, gnutls_certificate_verify_function *fn);
void cred_retrieve(const void *cred, bool set);
void cred_limits(const void *cred, unsigned max_bits, unsigned max_depth);
/* The program dropped the credentials' keys (gnutls_certificate_free_keys). */
void cred_keys_gone(const void *cred);
/* False for credentials the shim never saw allocated. */
bool cred_view(const void *cred, struct cred_view *out);
void cred_changing(const void *cred);
void cred_changed(const void *cred, bool open);
/* False for credentials never seen. */
bool cred_trust_now(const void *cred, struct cred_trust_state *out);
/* Only the credentials' verify function (false: credentials never seen). */
bool cred_verify_fn(const void *cred, gnutls_certificate_verify_function **fn);

#endif
