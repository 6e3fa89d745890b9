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
 * is here, and copies of what the check read of the certificate: a program
 * may change a certificate object and sign it again (a verify callback
 * can), and X509_verify then checks the new parts, so an entry answers
 * only while the object's to-be-signed encoding, algorithm and signature
 * are those checked (view below). Only successes are kept (a failure
 * pushes errors, which a repeated call must push again). Checks
 * inside handshakes and judgments only: every other X509_verify of the
 * program goes straight through. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"
#include "sigcache.h"
#include "verified.h"

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
 * every time, as is a signature longer than any of RSA 16384 or ECDSA. */
#define DER_MAX 4096
#define SIG_MAX 2048

/* The parts of a certificate a signature check reads, as they are now. */
struct view {
    const unsigned char *tbs;
    int tbs_len;
    const ASN1_BIT_STRING *sig;
    const X509_ALGOR *alg;
};

struct slot {
    X509 *cert;
    EVP_PKEY *key;
    X509_ALGOR *alg;
    unsigned char *bytes; /* the to-be-signed encoding, then the signature */
    int tbs_len, sig_len, sig_type;
    long sig_flags;
    bool recent; /* answered since the hand last passed */
};

static struct slot slots[SLOTS];
static unsigned next_slot;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void sigcache_init(void)
{
    fork_guard(&lock);
}

/* What X509_verify(cert, ...) reads of cert now, into v (tbs the caller's
 * buffer), or false when it cannot be kept. X509_verify, the same in
 * OpenSSL 3.0.19 and 3.5.9 (crypto/x509/x_all.c), compares sig_alg with
 * the to-be-signed part's own algorithm (a failure is 0, never kept), then
 * gives ASN1_item_verify_ex the algorithm, the signature (its type, bits
 * left over, length and bytes: a_verify.c), ASN1_item_i2d of cert_info as
 * an X509_CINF, the distinguishing ID, the key and the library context.
 * cert_info is the first member of struct x509_st (include/crypto/x509.h,
 * 3.0.19; objdump -d of X509_verify in 3.0.19 and 3.5.9: the object's own
 * address goes to ASN1_item_verify_ex with X509_CINF_it; tests/
 * sigkeycheck.c compares the encodings on the running library), so
 * i2d_X509_CINF of the certificate is that encoding: X509_CINF keeps the
 * one it was decoded from until it is marked changed (X509_sign,
 * i2d_re_X509_tbs; in 3.5.9 also the name, key and version setters, not
 * in 3.0.19: objdump -d), then both encode anew, so this copies those bytes
 * where i2d_X509 walked the whole certificate's templates (11,000 of a
 * judgment's instructions, two links, callgrind, 3.0.19). The signature's
 * every field is kept (ASN1_STRING's, public), the flags whole.
 * A certificate with a distinguishing ID (SM2) is checked every time. */
static bool view(X509 *cert, unsigned char tbs[DER_MAX], struct view *v)
{
    if (R(X509_get0_distinguishing_id)(cert) != NULL)
        return false;
    const X509_CINF *cinf = (const X509_CINF *)cert;
    int len = R(i2d_X509_CINF)(cinf, NULL);
    unsigned char *p = tbs;
    if (len <= 0 || len > DER_MAX || R(i2d_X509_CINF)(cinf, &p) != len)
        return false;
    R(X509_get0_signature)(&v->sig, &v->alg, cert);
    if (v->sig == NULL || v->alg == NULL || v->sig->length < 0 || v->sig->length > SIG_MAX ||
        (v->sig->length > 0 && v->sig->data == NULL))
        return false;
    v->tbs = tbs;
    v->tbs_len = len;
    return true;
}

static void slot_free(struct slot *sl)
{
    if (sl->cert != NULL) {
        R(X509_free)(sl->cert);
        R(EVP_PKEY_free)(sl->key);
        R(X509_ALGOR_free)(sl->alg);
    }
    free(sl->bytes);
}

static bool same(const struct slot *sl, const X509 *cert, const EVP_PKEY *key,
                 const struct view *v)
{
    return sl->cert == cert && sl->key == key && sl->tbs_len == v->tbs_len &&
           sl->sig_len == v->sig->length && sl->sig_type == v->sig->type &&
           sl->sig_flags == v->sig->flags &&
           memcmp(sl->bytes, v->tbs, (size_t)v->tbs_len) == 0 &&
           (v->sig->length == 0 ||
            memcmp(sl->bytes + v->tbs_len, v->sig->data, (size_t)v->sig->length) == 0) &&
           R(X509_ALGOR_cmp)(sl->alg, v->alg) == 0;
}

static bool known(const X509 *cert, const EVP_PKEY *key, const struct view *v)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < SLOTS && !found; i++)
        if ((found = same(&slots[i], cert, key, v)))
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

/* Keeps a success: copies of what the check read (v), and a reference to
 * each object. */
static void note(X509 *cert, EVP_PKEY *key, const struct view *v)
{
    struct slot mine = {cert, key, NULL, NULL, v->tbs_len, v->sig->length, v->sig->type,
                        v->sig->flags, false};
    mine.bytes = malloc((size_t)v->tbs_len + (size_t)v->sig->length);
    if (mine.bytes == NULL)
        return;
    memcpy(mine.bytes, v->tbs, (size_t)v->tbs_len);
    if (v->sig->length > 0)
        memcpy(mine.bytes + v->tbs_len, v->sig->data, (size_t)v->sig->length);
    if ((mine.alg = R(X509_ALGOR_dup)(v->alg)) == NULL) {
        free(mine.bytes);
        return;
    }
    if (R(X509_up_ref)(cert) != 1) {
        R(X509_ALGOR_free)(mine.alg);
        free(mine.bytes);
        return;
    }
    if (R(EVP_PKEY_up_ref)(key) != 1) {
        R(X509_free)(cert);
        R(X509_ALGOR_free)(mine.alg);
        free(mine.bytes);
        return;
    }
    struct slot gone = mine;
    pthread_mutex_lock(&lock);
    bool there = false;
    for (unsigned i = 0; i < SLOTS && !there; i++)
        there = same(&slots[i], cert, key, v);
    if (!there) {
        unsigned n = victim();
        gone = slots[n];
        slots[n] = mine;
    }
    pthread_mutex_unlock(&lock);
    /* Freed outside the lock: a free may run the program's ex_data
     * callbacks. */
    slot_free(&gone);
}

int sigcache_verify(X509 *cert, EVP_PKEY *key, int (*verify)(X509 *, EVP_PKEY *))
{
    unsigned char tbs[DER_MAX];
    struct view v;
    bool kept = cert != NULL && key != NULL && feature_on(FEATURE_OPENSSL_SIGCACHE) &&
                view(cert, tbs, &v);
    /* X509_verify's first step: the two algorithms differ, 0 (no error
     * pushed, nothing kept). */
    if (kept && R(X509_ALGOR_cmp)(v.alg, R(X509_get0_tbs_sigalg)(cert)) == 0 &&
        known(cert, key, &v))
        return 1;
    int ok = verify(cert, key);
    if (ok > 0 && kept)
        note(cert, key, &v);
    return ok;
}
