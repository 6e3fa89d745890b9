/* Verdicts kept (vmemo.h).
 *
 * After a resumed handshake the judgment runs the check the resumption
 * skipped; for gnutls_session_set_verify_cert(2) that is GnuTLS's
 * auto_verify_cb, which calls gnutls_certificate_verify_peers through
 * GnuTLS's PLT (lib/auto-verify.c; binary 3.7.9 and 3.8.9: "call
 * verify_peers@plt", and verify_peers2/3 reach it the same way), and a
 * program's verify function usually calls one of them too. Each call
 * imports the chain again, looks up its issuers, checks names, times and
 * every signature: 1.8 M instructions per resumed connection (callgrind,
 * GnuTLS 3.7.9, a two-certificate ECDSA chain, signatures already from
 * sigmemo.c), when a native TLS 1.2 resumption does no certificate work.
 *
 * _gnutls_x509_cert_verify_peers (lib/cert-session.c; the same code in
 * 3.7.9 and 3.8.9, compared after one formatting) reads: the session's
 * authentication type, the server's certificates (the session's raw
 * chain) and its certificate type, the credentials' trust list, verify
 * flags and limits, the session's additional verify flags (priorities and
 * set_verify_cert(2), merged in call order), the typed data it is given,
 * the stapled OCSP responses, whether a status was requested (only for a
 * certificate that demands one), the system configuration's minimum
 * profile (read at each verification, set when a priority initialisation
 * reloads the file), the clock (gnutls_time) and a program's path printer.
 * The memo's key is all of them, byte for byte, where the shim can name
 * them exactly; where it cannot, nothing is kept:
 * - the trust list: these credentials (address and allocation serial) at
 *   a generation of their trust that changes around every hooked change;
 *   a list handed out or set by the program, CRLs, or a PKCS #11 token
 *   make it unkeyable (cred.c);
 * - the additional flags: the priority string applied once, at most one
 *   set_verify_cert(2) call, its kind, flags and order; any other history
 *   keeps nothing;
 * - OCSP: a chain with a stapled response, or a certificate that demands
 *   one (TLS feature extension), keeps nothing;
 * - the system configuration: only while the file is absent, as seen
 *   around every priority initialisation and every gnutls_global_init
 *   (both load it) and at the first judgment;
 * - the clock: only passes are kept, each with the open interval of time
 *   around the verification in which no notBefore or notAfter of the chain
 *   or of any certificate of the trust list falls: without CRLs and OCSP
 *   these are the only times GnuTLS compares the clock with (x509/verify.c:
 *   check_time_status, check_ca_sanity, find_issuer), so inside it every
 *   comparison, and the verdict, is the same; a verdict is answered again
 *   only inside its interval;
 * - a clock function or a path printer of the program's: nothing kept.
 * A verdict is kept the second time the same key passes (memo_again), so
 * a process that judges once does not pay for reading the trust list's
 * times; the verdicts are core/memo.c's book MEMO_VERDICTS. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cred/cred.h"
#include "memo.h"
#include "prio.h"
#include "verified.h"
#include "trust/tdemand.h"
#include "vmemo.h"

static bool off;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static _Thread_local struct {
    gnutls_session_t s;
    const struct gsettings *set;
} judged;

void vmemo_off(void)
{
    __atomic_store_n(&off, true, __ATOMIC_RELEASE);
}

/* Once off, the memo stays off: the file need not be looked at again. */
bool vmemo_config_absent(void)
{
    if (__atomic_load_n(&off, __ATOMIC_ACQUIRE))
        return false;
    int saved = errno;
    struct stat st;
    bool absent = stat(prio_config_path(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
    errno = saved;
    return absent;
}

/* Absent before and after: GnuTLS found none in between. */
void vmemo_config_read(bool absent_before)
{
    if (!absent_before || !vmemo_config_absent())
        vmemo_off();
}

/* GnuTLS read the file when it was loaded, before the shim's first
 * judgment. */
static void init(void)
{
    if (!vmemo_config_absent())
        vmemo_off();
}

void vmemo_judge_begin(gnutls_session_t s, const struct gsettings *set)
{
    judged.s = s;
    judged.set = set;
}

void vmemo_judge_end(void)
{
    judged.s = NULL;
    judged.set = NULL;
}

bool vmemo_judging(gnutls_session_t s)
{
    return judged.s != NULL && judged.s == s;
}

struct buf {
    unsigned char *p;
    size_t len, cap;
    bool bad;
};

static void put(struct buf *b, const void *d, size_t n)
{
    if (b->bad)
        return;
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 2048;
        while (cap - b->len < n)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->bad = true;
            return;
        }
        b->p = p, b->cap = cap;
    }
    if (n != 0)
        memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void put_num(struct buf *b, uint64_t v)
{
    put(b, &v, sizeof v);
}

static void put_bytes(struct buf *b, const void *d, size_t n)
{
    put_num(b, n);
    put(b, d, n);
}

/* The key; false: something the verdict depends on cannot be keyed. */
static bool key_of(struct buf *k, gnutls_session_t s, const gnutls_typed_vdata_st *data,
                   unsigned elements, void **cred, struct cred_trust_state *t)
{
    const struct gsettings *set = judged.set;
    if (set == NULL || set->prio == NULL || set->prio_applied != 1 || set->vcert_calls > 1)
        return false;
    *cred = NULL;
    if (G(gnutls_credentials_get)(s, GNUTLS_CRD_CERTIFICATE, cred) != 0 || *cred == NULL ||
        !cred_trust_now(*cred, t) || t->open || t->busy != 0)
        return false;
    if (G(gnutls_auth_get_type)(s) != GNUTLS_CRD_CERTIFICATE ||
        G(gnutls_certificate_type_get2)(s, GNUTLS_CTYPE_PEERS) != GNUTLS_CRT_X509)
        return false;
    unsigned n = 0;
    const gnutls_datum_t *chain = G(gnutls_certificate_get_peers)(s, &n);
    if (chain == NULL || n == 0)
        return false;
    for (unsigned i = 0; i < n; i++) {
        gnutls_datum_t resp;
        if (G(gnutls_ocsp_status_request_get2)(s, i, &resp) >= 0)
            return false;
    }
    put(k, "gnutls verify_peers", 20);
    put(k, cred, sizeof *cred);
    put_num(k, t->serial);
    put_num(k, t->gen);
    put_num(k, t->max_bits);
    put_num(k, t->max_depth);
    put_num(k, G(gnutls_certificate_get_verify_flags)(*cred));
    put_num(k, set->flags);
    put_bytes(k, set->prio, strlen(set->prio));
    put_num(k, set->vcert_calls);
    put_num(k, set->vcert2);
    put_num(k, set->vcert_after_prio);
    put_num(k, set->vcert_calls != 0 ? set->verify_flags : 0);
    put_num(k, data != NULL ? elements : 0);
    for (unsigned i = 0; data != NULL && i < elements; i++) {
        put_num(k, data[i].type);
        put_num(k, data[i].size);
        /* A name, an e-mail address or a purpose is read as the string it
         * points to, whatever its size says (x509/verify-high.c,
         * gnutls_x509_trust_list_verify_crt2: check_hostname2, check_email
         * and the purpose take the pointer alone; the size only bounds the
         * name looked up among named certificates; 3.7.9 and 3.8.9): a
         * name of size 9 that reads "localhostx" is checked as
         * "localhostx". Other data (an address) are their bytes. */
        gnutls_vdata_types_t type = data[i].type;
        if ((type == GNUTLS_DT_DNS_HOSTNAME || type == GNUTLS_DT_RFC822NAME ||
             type == GNUTLS_DT_KEY_PURPOSE_OID) &&
            data[i].data != NULL)
            put_bytes(k, data[i].data, strlen((const char *)data[i].data));
        else
            put_bytes(k, data[i].data, data[i].size);
    }
    put_num(k, n);
    for (unsigned i = 0; i < n; i++)
        put_bytes(k, chain[i].data, chain[i].size);
    return !k->bad;
}

/* The interval [t0, t1] the verification ran in, widened to the open
 * interval (lo, hi) between the nearest boundaries of crt's validity;
 * false: a boundary inside [t0, t1], or no times to read. */
struct window {
    time_t t0, t1, lo, hi;
};

static bool bound(struct window *w, time_t b)
{
    if (b >= w->t0 && b <= w->t1)
        return false;
    if (b < w->t0 && b > w->lo)
        w->lo = b;
    if (b > w->t1 && b < w->hi)
        w->hi = b;
    return true;
}

static bool crt_bounds(struct window *w, gnutls_x509_crt_t crt)
{
    return bound(w, G(gnutls_x509_crt_get_activation_time)(crt)) &&
           bound(w, G(gnutls_x509_crt_get_expiration_time)(crt));
}

/* The chain's certificates: their times, and no TLS feature extension
 * (a certificate that demands a stapled status is judged by whether the
 * handshake asked for one, which the key does not hold). */
static bool chain_bounds(struct window *w, gnutls_session_t s)
{
    unsigned n = 0;
    const gnutls_datum_t *chain = G(gnutls_certificate_get_peers)(s, &n);
    bool ok = chain != NULL && n != 0;
    for (unsigned i = 0; ok && i < n; i++) {
        gnutls_x509_crt_t crt = NULL;
        gnutls_x509_tlsfeatures_t f = NULL;
        ok = G(gnutls_x509_crt_init)(&crt) == 0 &&
             G(gnutls_x509_crt_import)(crt, &chain[i], GNUTLS_X509_FMT_DER) == 0 &&
             G(gnutls_x509_tlsfeatures_init)(&f) == 0 &&
             G(gnutls_x509_crt_get_tlsfeatures)(crt, f, 0, NULL) ==
                 GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE &&
             crt_bounds(w, crt);
        if (f != NULL)
            G(gnutls_x509_tlsfeatures_deinit)(f);
        if (crt != NULL)
            G(gnutls_x509_crt_deinit)(crt);
    }
    return ok;
}

/* Every certificate of the credentials' trust list (its iterator copies
 * each out). */
static bool time_bound(void *w, time_t t)
{
    return bound(w, t);
}

/* The certificates the credentials trust; for a list that waits, those its
 * loads would have put in it (trust/tdemand.h), without loading them. */
static bool trust_bounds(struct window *w, void *cred)
{
    gnutls_x509_trust_list_t tl = NULL;
    G(gnutls_certificate_get_trust_list)(cred, &tl);
    if (tl == NULL)
        return false;
    int waits = tdemand_bounds(tl, time_bound, w);
    if (waits >= 0)
        return waits == 1;
    gnutls_x509_trust_list_iter_t it = NULL;
    gnutls_x509_crt_t crt;
    bool ok = true;
    int r;
    while (ok && (r = G(gnutls_x509_trust_list_iter_get_ca)(tl, &it, &crt)) == 0) {
        ok = crt_bounds(w, crt);
        G(gnutls_x509_crt_deinit)(crt);
    }
    if (it != NULL)
        G(gnutls_x509_trust_list_iter_deinit)(it);
    return ok && r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE;
}

int vmemo_verify_peers(__typeof__(gnutls_certificate_verify_peers) *real, gnutls_session_t s,
                       gnutls_typed_vdata_st *data, unsigned elements, unsigned *status)
{
    pthread_once(&once, init);
    if (status == NULL || __atomic_load_n(&off, __ATOMIC_ACQUIRE) ||
        !feature_on(FEATURE_GNUTLS_VMEMO))
        return real(s, data, elements, status);
    struct buf k = {0};
    void *cred = NULL;
    struct cred_trust_state t0, t1;
    if (!key_of(&k, s, data, elements, &cred, &t0)) {
        free(k.p);
        return real(s, data, elements, status);
    }
    struct window w = {time(NULL), 0, 0, 0};
    if (memo_known(MEMO_VERDICTS, k.p, k.len, w.t0)) {
        free(k.p);
        *status = 0;
        return 0;
    }
    int r = real(s, data, elements, status);
    w.t1 = time(NULL);
    w.lo = MEMO_EVER_LO;
    w.hi = MEMO_EVER_HI;
    /* Kept: a pass, under trust that did not change meanwhile, within the
     * times read. */
    if (r == 0 && *status == 0 && cred_trust_now(cred, &t1) && t1.serial == t0.serial &&
        t1.gen == t0.gen && t1.busy == 0 && !t1.open && !__atomic_load_n(&off, __ATOMIC_ACQUIRE) &&
        memo_again(MEMO_VERDICTS, k.p, k.len) && chain_bounds(&w, s) && trust_bounds(&w, cred))
        memo_keep(MEMO_VERDICTS, k.p, k.len, w.lo, w.hi);
    free(k.p);
    return r;
}
