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
 * is here; only successes are kept (a failure pushes errors, which a
 * repeated call must push again). A certificate is never changed once
 * parsed here: the chains are the shim's, and a trust store's certificates
 * are in use. Checks inside handshakes and judgments only: every other
 * X509_verify of the program goes straight through. */
#include <pthread.h>

#include "fork.h"
#include "sigcache.h"

#define SLOTS 32

struct slot {
    X509 *cert;
    EVP_PKEY *key;
};

static struct slot slots[SLOTS];
static unsigned next_slot;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void sigcache_init(void)
{
    fork_guard(&lock);
}

bool sigcache_known(const X509 *cert, const EVP_PKEY *key)
{
    bool known = false;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < SLOTS && !known; i++)
        known = slots[i].cert == cert && slots[i].key == key && cert != NULL;
    pthread_mutex_unlock(&lock);
    return known;
}

void sigcache_note(X509 *cert, EVP_PKEY *key)
{
    if (cert == NULL || key == NULL || R(X509_up_ref)(cert) != 1)
        return;
    if (R(EVP_PKEY_up_ref)(key) != 1) {
        R(X509_free)(cert);
        return;
    }
    pthread_mutex_lock(&lock);
    struct slot gone = {cert, key};
    bool there = false;
    for (unsigned i = 0; i < SLOTS && !there; i++)
        there = slots[i].cert == cert && slots[i].key == key;
    if (!there) {
        gone = slots[next_slot];
        slots[next_slot] = (struct slot){cert, key};
        next_slot = (next_slot + 1) % SLOTS;
    }
    pthread_mutex_unlock(&lock);
    /* Freed outside the lock: a free may run the program's ex_data
     * callbacks. */
    if (gone.cert != NULL) {
        R(X509_free)(gone.cert);
        R(EVP_PKEY_free)(gone.key);
    }
}
