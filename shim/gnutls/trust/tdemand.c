/* Credentials' trust loaded on demand (tdemand.h).
 *
 * Facts it rests on, GnuTLS 3.7.9 and 3.8.9 (Debian's source packages;
 * objdump -d of the libgnutls.so.30 each ships), gated as GNUTLS_DEMAND in
 * verified.def:
 *  - every CA load into credentials (a file, a directory, the system's
 *    trust, memory) reaches gnutls_x509_trust_list_add_trust_mem through
 *    GnuTLS's PLT, which parses with gnutls_x509_crt_list_import2(flags 0)
 *    and calls gnutls_x509_trust_list_add_cas (PLT) with
 *    tl_flags | GNUTLS_TL_NO_DUPLICATES (lib/x509/verify-high2.c): a
 *    certificate equal to one in its bucket replaces it in place and is
 *    counted, others are appended; the count is the parse's unless memory
 *    runs out. GNUTLS_TL_USE_IN_TLS adds each new one's name to the CA
 *    names a server sends (x509_rdn_sequence), which only a server's
 *    handshake reads (auth/cert.c, tls13/certificate_request.c) and
 *    gnutls_certificate_free_ca_names frees.
 *  - a list made with size 0 has 127 buckets; a certificate goes into
 *    hash_pjw_bare(raw subject) % 127 (lib/x509/verify-high.c).
 *  - gnutls_x509_trust_list_verify_crt2 (reached from verify_peers through
 *    the PLT, and so from the judgment) reads only the buckets of the
 *    issuers of the certificates it is given (get_issuer at each segment's
 *    end, shorten_clist, the last one's issuer) and of the last one's
 *    subject; retrieve_issuers asks only the list's issuer callback, which
 *    a program can set only on a list it was handed. get_issuer reads the
 *    certificate's issuer bucket, get_issuer_by_dn the name's. A bucket is
 *    that of the names the certificate was imported with (x509.c: raw_dn,
 *    raw_issuer_dn), which gnutls_x509_crt_get_raw_dn gives while it is
 *    unchanged: so only GnuTLS's own certificates (a peer's, as imported)
 *    are looked up here; gnutls_certificate_get_issuer, a program's
 *    certificate, loads the list whole first.
 *  - the client's check of a stapled OCSP response calls
 *    gnutls_ocsp_resp_verify with the credentials' list through the PLT
 *    (hooked: the list is loaded whole first).
 *  - add_cas and the lookups print through GnuTLS's log and audit
 *    functions (a non-CA certificate in the list): lists wait only while
 *    no such function is set and GNUTLS_DEBUG_LEVEL is not.
 * Every other way into a credentials' list loads it whole first (hooks.c):
 * the list handed out, a server session on the credentials, the CA names
 * freed, gnutls_certificate_get_issuer, CRLs, certificates added or
 * removed as objects, a PKCS #11 URL, key-id lookups, named certificates,
 * iteration, OCSP. */
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#include "fork.h"
#include "tdemand.h"
#include "tindex.h"
#include "trecord.h"
#include "verified.h"

struct op {
    const struct gcontent *c;
    unsigned flags, vflags;
};

struct dlist {
    UT_hash_handle hh;
    gnutls_x509_trust_list_t real;
    /* Kept until the credentials go, also once whole: a lookup on another
     * thread may still run on it. */
    gnutls_x509_trust_list_t shadow;
    bool whole; /* the real list is GnuTLS's */
    struct op *ops;
    size_t nops, cap;
    unsigned char in[TINDEX_BUCKETS]; /* buckets the shadow holds */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct dlist *lists;
static unsigned waiting; /* lists not whole, atomic */
static bool noisy;
static _Thread_local unsigned inside;

/* The flags a load may carry and still wait: the others change what
 * add_cas or add_trust_mem does in ways not followed here. */
#define TL_KNOWN (GNUTLS_TL_USE_IN_TLS | GNUTLS_TL_NO_DUPLICATES | GNUTLS_TL_NO_DUPLICATE_KEY)

void tdemand_init(void)
{
    fork_guard(&lock);
    if (getenv("GNUTLS_DEBUG_LEVEL") != NULL)
        noisy = true;
}

bool tdemand_inside(void)
{
    return inside != 0;
}

static struct dlist *find(gnutls_x509_trust_list_t list)
{
    struct dlist *d;
    HASH_FIND_PTR(lists, &list, d);
    return d;
}

static void drop(struct dlist *d)
{
    HASH_DEL(lists, d);
    if (!d->whole)
        __atomic_sub_fetch(&waiting, 1, __ATOMIC_RELEASE);
    if (d->shadow != NULL) {
        inside++;
        G(gnutls_x509_trust_list_deinit)(d->shadow, 1);
        inside--;
    }
    free(d->ops);
    free(d);
}

/* The recorded loads into the list, still empty, in order, with GnuTLS's
 * own call and the program's arguments: the list a full load leaves. */
static void make_whole(struct dlist *d)
{
    if (d->whole)
        return;
    d->whole = true;
    inside++;
    for (size_t i = 0; i < d->nops; i++) {
        gnutls_datum_t pem = {(unsigned char *)d->ops[i].c->bytes, (unsigned)d->ops[i].c->len};
        G(gnutls_x509_trust_list_add_trust_mem)(d->real, &pem, NULL, GNUTLS_X509_FMT_PEM,
                                               d->ops[i].flags, d->ops[i].vflags);
    }
    inside--;
    /* Only now: a lookup that finds no list waiting reads the real list
     * without the lock, which another thread's verification may be doing
     * this moment (credentials are shared read-only across threads). */
    __atomic_sub_fetch(&waiting, 1, __ATOMIC_RELEASE);
    free(d->ops);
    d->ops = NULL;
    d->nops = d->cap = 0;
}

static gnutls_x509_trust_list_t real_list(gnutls_certificate_credentials_t cred)
{
    gnutls_x509_trust_list_t l = NULL;
    G(gnutls_certificate_get_trust_list)(cred, &l);
    return greal_missing ? NULL : l;
}

void tdemand_cred_new(gnutls_certificate_credentials_t cred)
{
    if (!feature_on(FEATURE_GNUTLS_DEMAND))
        return;
    gnutls_x509_trust_list_t l = real_list(cred);
    struct dlist *d = l != NULL ? calloc(1, sizeof *d) : NULL;
    if (d == NULL)
        return;
    d->real = l;
    pthread_mutex_lock(&lock);
    struct dlist *old = find(l);
    if (old != NULL)
        drop(old); /* the list of credentials freed unseen, address reused */
    if (noisy)
        free(d);
    else {
        HASH_ADD_PTR(lists, real, d);
        if (d->hh.tbl == NULL)
            free(d); /* loaded as GnuTLS loads it, never waiting */
        else
            __atomic_add_fetch(&waiting, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

void tdemand_list_gone(gnutls_x509_trust_list_t list)
{
    if (list == NULL)
        return;
    pthread_mutex_lock(&lock);
    struct dlist *d = find(list);
    if (d != NULL)
        drop(d);
    pthread_mutex_unlock(&lock);
}

void tdemand_cred_gone(gnutls_certificate_credentials_t cred)
{
    if (cred != NULL)
        tdemand_list_gone(real_list(cred));
}

/* Entries of op i in bucket b (b < 0: in any bucket the shadow holds)
 * into the shadow, as add_trust_mem would add them there. */
static bool shadow_add(struct dlist *d, size_t i, int b)
{
    const struct gcontent *c = d->ops[i].c;
    unsigned flags = (d->ops[i].flags & ~(unsigned)GNUTLS_TL_USE_IN_TLS) | GNUTLS_TL_NO_DUPLICATES;
    for (unsigned j = 0; j < c->n; j++) {
        unsigned hb = c->e[j].bucket;
        if (b >= 0 ? hb != (unsigned)b : !d->in[hb])
            continue;
        gnutls_x509_crt_t crt = gindex_crt(c, j);
        if (crt == NULL)
            return false;
        if (G(gnutls_x509_trust_list_add_cas)(d->shadow, &crt, 1, flags) != 1) {
            G(gnutls_x509_crt_deinit)(crt);
            return false;
        }
    }
    return true;
}

/* Bucket b into the shadow: every recorded entry of it, in load order. */
static bool bring(struct dlist *d, unsigned b)
{
    if (d->in[b])
        return true;
    if (d->shadow == NULL && G(gnutls_x509_trust_list_init)(&d->shadow, 0) < 0) {
        d->shadow = NULL;
        return false;
    }
    d->in[b] = 1;
    for (size_t i = 0; i < d->nops; i++)
        if (!shadow_add(d, i, (int)b))
            return false;
    return true;
}

static bool bring_dn(struct dlist *d, int (*get)(gnutls_x509_crt_t, gnutls_datum_t *),
                     gnutls_x509_crt_t crt)
{
    gnutls_datum_t dn = {NULL, 0};
    if (get(crt, &dn) < 0 || greal_missing)
        return false;
    bool ok = bring(d, gindex_bucket(dn.data, dn.size));
    greal_free(dn.data);
    return ok;
}

bool tdemand_add_mem(gnutls_x509_trust_list_t list, const gnutls_datum_t *cas,
                     const gnutls_datum_t *crls, gnutls_x509_crt_fmt_t type, unsigned flags,
                     unsigned vflags, int *ret)
{
    if (__atomic_load_n(&waiting, __ATOMIC_ACQUIRE) == 0)
        return false;
    grecord_fetch();
    bool done = false;
    pthread_mutex_lock(&lock);
    struct dlist *d = find(list);
    if (d != NULL && !d->whole) {
        const struct gcontent *c = NULL;
        bool plain = type == GNUTLS_X509_FMT_PEM && (crls == NULL || crls->data == NULL) &&
                     cas != NULL && cas->data != NULL && (flags & ~TL_KNOWN) == 0;
        inside++;
        if (plain)
            c = gindex_of(cas);
        if (c != NULL && d->nops == d->cap) {
            size_t cap = d->cap ? 2 * d->cap : 8;
            struct op *ops = realloc(d->ops, cap * sizeof *ops);
            if (ops != NULL)
                d->ops = ops, d->cap = cap;
        }
        if (c != NULL && d->nops < d->cap) {
            d->ops[d->nops++] = (struct op){c, flags, vflags};
            /* Buckets the shadow holds take the new entries now, after
             * all earlier ones: complete, in order. */
            done = shadow_add(d, d->nops - 1, -1);
            if (done)
                *ret = (int)c->n;
            else
                d->nops--;
        }
        inside--;
        if (!done)
            make_whole(d);
    }
    pthread_mutex_unlock(&lock);
    return done;
}

void tdemand_whole(gnutls_x509_trust_list_t list)
{
    if (__atomic_load_n(&waiting, __ATOMIC_ACQUIRE) == 0 || inside)
        return;
    pthread_mutex_lock(&lock);
    struct dlist *d = find(list);
    if (d != NULL)
        make_whole(d);
    pthread_mutex_unlock(&lock);
}

void tdemand_whole_cred(gnutls_certificate_credentials_t cred)
{
    if (cred != NULL && __atomic_load_n(&waiting, __ATOMIC_ACQUIRE) != 0 && !inside)
        tdemand_whole(real_list(cred));
}

void tdemand_noisy(void)
{
    pthread_mutex_lock(&lock);
    noisy = true;
    struct dlist *d, *tmp;
    HASH_ITER(hh, lists, d, tmp)
        make_whole(d);
    pthread_mutex_unlock(&lock);
}

gnutls_x509_trust_list_t tdemand_lookup(gnutls_x509_trust_list_t list,
                                        const gnutls_x509_crt_t *crts, unsigned n,
                                        const gnutls_datum_t *dn)
{
    if (__atomic_load_n(&waiting, __ATOMIC_ACQUIRE) == 0 || inside)
        return list;
    unsigned char *rec = NULL;
    size_t rec_size = 0;
    pthread_mutex_lock(&lock);
    struct dlist *d = find(list);
    if (d != NULL && !d->whole) {
        bool ok = true;
        inside++;
        for (unsigned i = 0; ok && crts != NULL && i < n; i++)
            ok = crts[i] != NULL && bring_dn(d, G(gnutls_x509_crt_get_raw_dn), crts[i]) &&
                 bring_dn(d, G(gnutls_x509_crt_get_raw_issuer_dn), crts[i]);
        if (ok && dn != NULL)
            ok = dn->data != NULL && bring(d, gindex_bucket(dn->data, dn->size));
        /* Loads are typically done by the first verification: what this
         * process indexed goes to the store for the next. */
        if (ok && gindex_news())
            rec = grecord_build(&rec_size);
        inside--;
        if (ok)
            list = d->shadow != NULL ? d->shadow : list;
        else
            make_whole(d);
    }
    pthread_mutex_unlock(&lock);
    grecord_write(rec, rec_size);
    return list;
}

int tdemand_bounds(gnutls_x509_trust_list_t list, bool (*fn)(void *arg, time_t t), void *arg)
{
    if (__atomic_load_n(&waiting, __ATOMIC_ACQUIRE) == 0)
        return -1;
    int r = -1;
    pthread_mutex_lock(&lock);
    struct dlist *d = find(list);
    if (d != NULL && !d->whole) {
        r = 1;
        for (size_t i = 0; r == 1 && i < d->nops; i++)
            for (unsigned j = 0; r == 1 && j < d->ops[i].c->n; j++)
                if (!fn(arg, d->ops[i].c->e[j].not_before) ||
                    !fn(arg, d->ops[i].c->e[j].not_after))
                    r = 0;
    }
    pthread_mutex_unlock(&lock);
    return r;
}
