/* Trust-store fingerprints (trust.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "exdata.h"
#include "fork.h"
#include "trust.h"
#include "verified.h"
#include "trustdemand.h"

static int store_index = -1;
static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;

/* Kept on each X509_STORE: the fingerprint of its objects (valid until the
 * application changes them) and a digest of the lookup locations it was
 * given (CA directories load lazily, so their objects say nothing at
 * first: two stores with different directories must still differ). */
struct fingerprint {
    bool valid;
    bool any_dirs;
    bool dirs_failed; /* a location could not be digested: no fingerprint */
    unsigned char md[32];
    unsigned char dirs[32];
};

void trust_init(void)
{
    store_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_X509_STORE, 0, NULL, NULL, NULL,
                                             exdata_free);
    fork_guard(&store_lock);
    /* Off elsewhere: its rule rests on every way a release reads a store
     * (trustdemand.c), and 3.5 reads some past any hook. */
    if (feature_on(FEATURE_OPENSSL_DEMAND))
        demand_init();
}

static int cmp_sig(const void *a, const void *b)
{
    const struct trust_sig *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->p, y->p, x->len);
}

bool trust_digest(struct trust_sig *sigs, size_t n, const struct algs *algs, unsigned char md[32])
{
    EVP_MD_CTX *mdctx = R(EVP_MD_CTX_new)();
    bool ok = mdctx != NULL && algs != NULL && R(EVP_DigestInit_ex)(mdctx, algs->sha256, NULL) == 1;
    if (ok)
        qsort(sigs, n, sizeof *sigs, cmp_sig);
    for (size_t i = 0; ok && i < n; i++) {
        uint32_t len = (uint32_t)sigs[i].len;
        ok = R(EVP_DigestUpdate)(mdctx, &len, sizeof len) == 1 &&
             R(EVP_DigestUpdate)(mdctx, sigs[i].p, sigs[i].len) == 1;
    }
    ok = ok && R(EVP_DigestFinal_ex)(mdctx, md, NULL) == 1;
    R(EVP_MD_CTX_free)(mdctx);
    return ok;
}

/* SHA-256 over the sorted signatures of the store's certificates and CRLs.
 * A signature names its object as surely as a digest of the whole DER (it
 * is made over everything else in it) and is already decoded: a system
 * bundle of 145 certificates is fingerprinted without re-encoding any. */
static bool fingerprint_objects(X509_STORE *store, const struct algs *algs, unsigned char md[32])
{
    /* A store that holds one trust file's content on demand and nothing
     * else: the same fingerprint, computed once for the content. */
    if (demand_fingerprint(store, md))
        return true;
    R(X509_STORE_lock)(store);
    const OPENSSL_STACK *objs = (const OPENSSL_STACK *)R(X509_STORE_get0_objects)(store);
    int n = objs != NULL ? R(OPENSSL_sk_num)(objs) : 0;
    struct trust_sig *sigs = malloc((size_t)(n > 0 ? n : 1) * sizeof *sigs);
    bool ok = sigs != NULL;
    size_t used = 0;
    for (int i = 0; ok && i < n; i++) {
        const X509_OBJECT *o = R(OPENSSL_sk_value)(objs, i);
        const ASN1_BIT_STRING *bits = NULL;
        if (R(X509_OBJECT_get_type)(o) == X509_LU_X509)
            R(X509_get0_signature)(&bits, NULL, R(X509_OBJECT_get0_X509)(o));
        else if (R(X509_OBJECT_get_type)(o) == X509_LU_CRL)
            R(X509_CRL_get0_signature)(R(X509_OBJECT_get0_X509_CRL)(o), &bits, NULL);
        if (bits != NULL)
            sigs[used++] = (struct trust_sig){R(ASN1_STRING_get0_data)(bits),
                                              (size_t)R(ASN1_STRING_length)(bits)};
    }
    /* Under the lock: the signatures are the store's objects'. */
    ok = ok && trust_digest(sigs, used, algs, md);
    R(X509_STORE_unlock)(store);
    free(sigs);
    return ok;
}

/* The trust store grows as verification loads certificates from lookup
 * directories, so a fingerprint taken at each handshake would change
 * between the first connection and the second. It is taken once, before
 * the store's first use by a connection we follow, and kept on the store
 * itself: a table keyed by the store's address would be fooled when a
 * freed store's address is reused. */
static struct fingerprint *store_state(X509_STORE *store)
{
    struct fingerprint *fp = R(X509_STORE_get_ex_data)(store, store_index);
    if (fp == NULL && (fp = calloc(1, sizeof *fp)) != NULL &&
        R(X509_STORE_set_ex_data)(store, store_index, fp) != 1) {
        free(fp);
        fp = NULL;
    }
    return fp;
}

bool trust_fingerprint(X509_STORE *store, const struct algs *algs, unsigned char md[64])
{
    bool ok = false;
    pthread_mutex_lock(&store_lock);
    struct fingerprint *fp = store_state(store);
    if (fp != NULL && !fp->valid)
        fp->valid = fingerprint_objects(store, algs, fp->md);
    if (fp != NULL && fp->valid && !fp->dirs_failed) {
        memcpy(md, fp->md, sizeof fp->md);
        memcpy(md + 32, fp->dirs, sizeof fp->dirs);
        ok = true;
    }
    pthread_mutex_unlock(&store_lock);
    return ok;
}

void trust_changed(X509_STORE *store)
{
    if (store_index < 0 || store == NULL)
        return;
    pthread_mutex_lock(&store_lock);
    struct fingerprint *fp = R(X509_STORE_get_ex_data)(store, store_index);
    if (fp != NULL)
        fp->valid = false;
    pthread_mutex_unlock(&store_lock);
}

void trust_lookup(X509_STORE *store, int cmd, const char *where)
{
    if (store_index < 0 || store == NULL)
        return;
    pthread_mutex_lock(&store_lock);
    struct fingerprint *fp = store_state(store);
    if (fp != NULL) {
        unsigned char buf[32 + sizeof cmd + 4096];
        size_t len = where != NULL ? strnlen(where, 4096) : 0;
        memcpy(buf, fp->dirs, 32);
        memcpy(buf + 32, &cmd, sizeof cmd);
        memcpy(buf + 32 + sizeof cmd, where != NULL ? where : "", len);
        /* No context is at hand here: the default library context's. */
        if (!algs_sha256(algs_default(), buf, 32 + sizeof cmd + len, fp->dirs))
            fp->dirs_failed = true;
        fp->any_dirs = true;
        fp->valid = false;
    }
    pthread_mutex_unlock(&store_lock);
}

/* Stores and contexts are not told apart (such programs are rare; a flag
 * needs no lock). */
static atomic_bool program_code;

void trust_program_code(void)
{
    atomic_store_explicit(&program_code, true, memory_order_release);
}

bool trust_program_code_seen(void)
{
    return atomic_load_explicit(&program_code, memory_order_acquire);
}

/* A store whose verification runs code of the program's own (any of the
 * functions X509_STORE_set_* puts in place of libcrypto's: revocation,
 * issuer lookup, CRL checks, policy, a verify callback): what it decides
 * by cannot be fingerprinted. */
bool trust_runs_code(X509_STORE *store)
{
    return store != NULL &&
           (R(X509_STORE_get_verify_cb)(store) != NULL || R(X509_STORE_get_verify)(store) != NULL ||
            R(X509_STORE_get_get_issuer)(store) != NULL ||
            R(X509_STORE_get_check_issued)(store) != NULL ||
            R(X509_STORE_get_check_revocation)(store) != NULL ||
            R(X509_STORE_get_get_crl)(store) != NULL || R(X509_STORE_get_check_crl)(store) != NULL ||
            R(X509_STORE_get_cert_crl)(store) != NULL ||
            R(X509_STORE_get_check_policy)(store) != NULL ||
            R(X509_STORE_get_lookup_certs)(store) != NULL ||
            R(X509_STORE_get_lookup_crls)(store) != NULL);
}
