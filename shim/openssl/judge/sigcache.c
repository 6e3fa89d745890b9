/* Signatures already checked (sigcache.h).
 *
 * Nearly all of a judgment is the check of each certificate's signature by
 * its issuer's key: X509_verify takes 0.88 M of the 0.93 M instructions of
 * X509_verify_cert for a one-link ECDSA P-256 chain (callgrind, against a
 * resumed TLS 1.3 connection's 2.38 M). In one process the judge verifies
 * the very objects the full handshake verified: a session shares its peer
 * certificates with the copies made of it (SSL_SESSION_dup up-refs them),
 * and the issuer's key is the same object of the trust store. X509_verify
 * reads only the certificate (its algorithms, signature, to-be-signed part,
 * library context) and the key, so for the same two objects it answers as
 * it answered before. Entries are those two objects, held by a reference
 * each so that neither address can be reused by another object while it
 * is here, and the certificate's encoding as it was checked: a program may
 * change a certificate object and sign it again (a verify callback can),
 * and X509_verify then checks the new encoding, so an entry answers only
 * while the object encodes to the same bytes. Only successes are kept (a
 * failure pushes errors, which a repeated call must push again). Checks
 * inside handshakes and judgments only: every other X509_verify of the
 * program goes straight through. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"
#include "sigcache.h"

/* Every full handshake decodes its own copies of the server's chain, and
 * the sessions it leaves (and the tickets that follow them) share those
 * copies: each such family of sessions still in use needs its own entries,
 * a chain's length of them. 64 concurrent connections to one server make
 * some 30 families in their first burst (callgrind, TLS 1.3, a two-link
 * chain): 32 slots taken in turn left 0.9 M instructions of signature
 * checks in nearly every judgment. So there are more slots, and a slot
 * answered since the hand last passed it is passed over once (the clock
 * algorithm): entries of sessions still in use stay, those of sessions gone
 * make room. */
#define SLOTS 256
/* A chain's certificates are 400 to 2,000 bytes; a larger one is checked
 * every time. */
#define DER_MAX 4096

struct slot {
    X509 *cert;
    EVP_PKEY *key;
    unsigned char *der;
    int der_len;
    bool recent; /* answered since the hand last passed */
};

static struct slot slots[SLOTS];
static unsigned next_slot;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void sigcache_init(void)
{
    fork_guard(&lock);
}

/* The certificate's encoding now, into buf; its length, or 0. */
static int encode(const X509 *cert, unsigned char buf[DER_MAX])
{
    int len = R(i2d_X509)(cert, NULL);
    unsigned char *p = buf;
    return len > 0 && len <= DER_MAX && R(i2d_X509)(cert, &p) == len ? len : 0;
}

static bool same(const struct slot *sl, const X509 *cert, const EVP_PKEY *key,
                 const unsigned char *der, int len)
{
    return sl->cert == cert && sl->key == key && sl->der_len == len &&
           memcmp(sl->der, der, (size_t)len) == 0;
}

static void slot_free(struct slot *sl)
{
    if (sl->cert != NULL) {
        R(X509_free)(sl->cert);
        R(EVP_PKEY_free)(sl->key);
    }
    free(sl->der);
}

static bool known(const X509 *cert, const EVP_PKEY *key, const unsigned char *der, int len)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < SLOTS && !found; i++)
        if ((found = same(&slots[i], cert, key, der, len)))
            slots[i].recent = true;
    pthread_mutex_unlock(&lock);
    return found;
}

/* Under the lock: the slot the next entry takes. */
static unsigned victim(void)
{
    for (unsigned n = 0; n < SLOTS && slots[next_slot].recent; n++) {
        slots[next_slot].recent = false;
        next_slot = (next_slot + 1) % SLOTS;
    }
    unsigned v = next_slot;
    next_slot = (next_slot + 1) % SLOTS;
    return v;
}

/* Keeps a success: the certificate's encoding as checked (len bytes of
 * buf), and a reference to each object. */
static void note(X509 *cert, EVP_PKEY *key, const unsigned char *buf, int len)
{
    unsigned char *der = malloc((size_t)len);
    if (der == NULL)
        return;
    memcpy(der, buf, (size_t)len);
    if (R(X509_up_ref)(cert) != 1) {
        free(der);
        return;
    }
    if (R(EVP_PKEY_up_ref)(key) != 1) {
        R(X509_free)(cert);
        free(der);
        return;
    }
    struct slot mine = {cert, key, der, len, false}, gone = mine;
    pthread_mutex_lock(&lock);
    bool there = false;
    for (unsigned i = 0; i < SLOTS && !there; i++)
        there = same(&slots[i], cert, key, der, len);
    if (!there) {
        unsigned v = victim();
        gone = slots[v];
        slots[v] = mine;
    }
    pthread_mutex_unlock(&lock);
    /* Freed outside the lock: a free may run the program's ex_data
     * callbacks. */
    slot_free(&gone);
}

int sigcache_verify(X509 *cert, EVP_PKEY *key, int (*verify)(X509 *, EVP_PKEY *))
{
    unsigned char der[DER_MAX];
    int len = cert != NULL && key != NULL ? encode(cert, der) : 0;
    if (len > 0 && known(cert, key, der, len))
        return 1;
    int ok = verify(cert, key);
    if (ok > 0 && len > 0)
        note(cert, key, der, len);
    return ok;
}
