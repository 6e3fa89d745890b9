/* The trust files this process has loaded, by content (trustindex.h).
 *
 * Indexing costs a full parse (the names and signatures come from the
 * parsed objects), so it is done with the second load of a content, whose
 * parse the load needs anyway: a program that loads a file once (curl) is
 * left to OpenSSL and pays a read of its bytes; one that loads it for
 * every context (CPython's create_default_context, urllib3, PHP, Perl,
 * Ruby) parses it twice and then only what its verifications look up. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "algs.h"
#include "fork.h"
#include "trust.h"
#include "trustindex.h"
#include "util.h"

/* Beyond these a content is loaded as OpenSSL loads it, every time: the
 * copies are kept for the life of the process (stores point into them). */
#define FILE_MAX (8u << 20)
#define KEPT_MAX (16u << 20)
#define CONTENTS_MAX 32

static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tcontent *contents;
static size_t kept, ncontents;

void tindex_init(void)
{
    fork_guard(&index_lock);
}

bool tindex_read(const char *file, unsigned char **bytes, size_t *len)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return false;
    struct stat st;
    unsigned char *b = NULL;
    size_t got = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= FILE_MAX && (b = malloc((size_t)st.st_size + 1)) != NULL) {
        /* One more byte than the size: a file that grew is read in full or
         * not at all. */
        size_t want = (size_t)st.st_size + 1;
        ssize_t r;
        while (got < want && (r = read(fd, b + got, want - got)) != 0) {
            if (r < 0)
                break;
            got += (size_t)r;
        }
        if (got != (size_t)st.st_size || memchr(b, 0, got) != NULL) {
            free(b);
            b = NULL;
        }
    }
    close(fd);
    if (b == NULL)
        return false;
    *bytes = b;
    *len = got;
    return true;
}

/* Sampled: the whole is compared byte for byte on a match. */
static uint64_t content_hash(const unsigned char *b, size_t len)
{
    size_t edge = len < 4096 ? len : 4096;
    uint64_t h = fnv1a64(b, edge) ^ fnv1a64(b + len - edge, edge);
    return h ^ (uint64_t)len * 0x9e3779b97f4a7c15u;
}

static struct tcontent *find_locked(const unsigned char *b, size_t len, uint64_t h)
{
    for (struct tcontent *c = contents; c != NULL; c = c->next)
        if (c->hash == h && c->len == len && memcmp(c->bytes, b, len) == 0)
            return c;
    return NULL;
}

struct tcontent *tindex_find(const unsigned char *bytes, size_t len)
{
    uint64_t h = content_hash(bytes, len);
    pthread_mutex_lock(&index_lock);
    struct tcontent *c = find_locked(bytes, len, h);
    pthread_mutex_unlock(&index_lock);
    return c;
}

bool tindex_signature(X509 *x, X509_CRL *crl, const unsigned char **sig, size_t *len)
{
    const ASN1_BIT_STRING *bits = NULL;
    if (x != NULL)
        R(X509_get0_signature)(&bits, NULL, x);
    else if (crl != NULL)
        R(X509_CRL_get0_signature)(crl, &bits, NULL);
    if (bits == NULL)
        return false;
    *sig = R(ASN1_STRING_get0_data)(bits);
    *len = (size_t)R(ASN1_STRING_length)(bits);
    return true;
}

static bool is_cert_block(const char *name)
{
    return strcmp(name, "CERTIFICATE") == 0 || strcmp(name, "X509 CERTIFICATE") == 0 ||
           strcmp(name, "TRUSTED CERTIFICATE") == 0;
}

/* Where each PEM block lies: PEM_read_bio itself finds them, in the same
 * bytes, so the blocks are those the whole load read. Only certificates
 * and CRLs without PEM headers: any other block (a key, an encrypted one)
 * would make the file's X509_INFO grouping matter. */
static bool find_blocks(const struct tcontent *c, struct tentry *e, size_t n)
{
    BIO *bio = R(BIO_new_mem_buf)(c->bytes, (int)c->len);
    if (bio == NULL)
        return false;
    bool ok = true;
    size_t i = 0;
    long prev = 0;
    R(ERR_set_mark)();
    while (ok) {
        char *name = NULL, *header = NULL;
        unsigned char *data = NULL;
        long dlen = 0;
        if (!R(PEM_read_bio)(bio, &name, &header, &data, &dlen))
            break; /* the end (or a failure, which the count below catches) */
        long pos = R(BIO_ctrl)(bio, BIO_C_FILE_TELL, 0, NULL);
        bool cert = is_cert_block(name), crl = strcmp(name, "X509 CRL") == 0;
        ok = i < n && (cert || crl) && header[0] == '\0' && pos > prev;
        if (ok)
            e[i++] = (struct tentry){.off = (size_t)prev, .len = (size_t)(pos - prev), .crl = crl};
        prev = pos;
        R(CRYPTO_free)(name, __FILE__, __LINE__);
        R(CRYPTO_free)(header, __FILE__, __LINE__);
        R(CRYPTO_free)(data, __FILE__, __LINE__);
    }
    R(ERR_pop_to_mark)();
    R(BIO_free)(bio);
    return ok && i == n;
}

/* X509_load_cert_crl_file_ex adds each X509_INFO's certificate, then its
 * CRL (crypto/x509/by_file.c of 3.0.19), whatever their order in the file;
 * the grouping is index_from's, below. */
size_t tindex_last_added(const struct tcontent *c)
{
    size_t start = 0;
    bool has_x = false, has_crl = false;
    for (size_t i = 0; i < c->n; i++) {
        if ((c->e[i].crl && has_crl) || (!c->e[i].crl && has_x)) {
            start = i;
            has_x = has_crl = false;
        }
        has_x |= !c->e[i].crl;
        has_crl |= c->e[i].crl;
    }
    for (size_t i = start; i < c->n; i++)
        if (c->e[i].crl)
            return i;
    return c->n - 1;
}

/* Each block's object, as PEM_X509_INFO_read_bio_ex grouped them: a
 * certificate opens a new X509_INFO when the current one has one already,
 * a CRL likewise (crypto/pem/pem_info.c). */
static bool index_from(struct tcontent *c, const STACK_OF(X509_INFO) *inf)
{
    size_t n = (size_t)c->count;
    struct tentry *e = calloc(n, sizeof *e);
    void **objs = calloc(n, sizeof *objs);
    struct trust_sig *sigs = calloc(n, sizeof *sigs);
    bool ok = e != NULL && objs != NULL && sigs != NULL && find_blocks(c, e, n);
    int info = 0, infos = R(OPENSSL_sk_num)((const OPENSSL_STACK *)inf);
    bool has_x = false, has_crl = false;
    size_t nsig = 0;
    for (size_t i = 0; ok && i < n; i++) {
        if ((e[i].crl && has_crl) || (!e[i].crl && has_x)) {
            info++;
            has_x = has_crl = false;
        }
        X509_INFO *xi = info < infos ? R(OPENSSL_sk_value)((const OPENSSL_STACK *)inf, info) : NULL;
        X509 *x = xi != NULL && !e[i].crl ? xi->x509 : NULL;
        X509_CRL *crl = xi != NULL && e[i].crl ? xi->crl : NULL;
        has_x |= !e[i].crl;
        has_crl |= e[i].crl;
        objs[i] = x != NULL ? (void *)x : (void *)crl;
        const unsigned char *sig;
        size_t siglen;
        ok = objs[i] != NULL && tindex_signature(x, crl, &sig, &siglen) &&
             (e[i].name = R(X509_NAME_dup)(x != NULL ? R(X509_get_subject_name)(x)
                                                     : R(X509_CRL_get_issuer)(crl))) != NULL &&
             (e[i].sig = malloc(siglen ? siglen : 1)) != NULL;
        if (!ok)
            break;
        memcpy((unsigned char *)e[i].sig, sig, siglen);
        e[i].siglen = siglen;
        /* A store keeps one of equal objects (x509_store_add, through
         * X509_OBJECT_retrieve_match): the fingerprint counts it once. */
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++)
            dup = e[j].crl == e[i].crl && R(X509_NAME_cmp)(e[j].name, e[i].name) == 0 &&
                  (e[i].crl ? R(X509_CRL_match)(objs[j], objs[i]) == 0
                            : R(X509_cmp)(objs[j], objs[i]) == 0);
        e[i].dup = dup;
        if (!dup)
            sigs[nsig++] = (struct trust_sig){e[i].sig, siglen};
    }
    /* trust.c's fingerprint of a store holding just these objects. */
    ok = ok && info + 1 == infos && trust_digest(sigs, nsig, algs_default(), c->sighash);
    if (!ok && e != NULL) {
        for (size_t i = 0; i < n; i++) {
            R(X509_NAME_free)(e[i].name);
            free((void *)e[i].sig);
        }
        free(e);
        e = NULL;
    }
    free(objs);
    free(sigs);
    if (ok) {
        c->e = e;
        c->n = n;
    }
    return ok;
}

void tindex_record_name(const unsigned char *bytes, size_t len, char out[19])
{
    uint64_t h = content_hash(bytes, len);
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(h >> (56 - 8 * i));
    memcpy(out, "t-", 2);
    hex_encode(b, 8, out + 2);
}

struct tcontent *tindex_adopt(struct tcontent *c)
{
    c->hash = content_hash(c->bytes, c->len);
    pthread_mutex_lock(&index_lock);
    struct tcontent *have = find_locked(c->bytes, c->len, c->hash);
    bool keep = have == NULL && kept + c->len <= KEPT_MAX && ncontents < CONTENTS_MAX;
    if (keep) {
        c->next = contents;
        contents = c;
        kept += c->len;
        ncontents++;
    }
    pthread_mutex_unlock(&index_lock);
    return keep ? c : have;
}

const X509_NAME *tindex_name(struct tentry *e)
{
    if (e->name == NULL && e->der != NULL) {
        const unsigned char *p = e->der;
        e->name = R(d2i_X509_NAME)(NULL, &p, (long)e->derlen);
    }
    return e->name;
}

bool tindex_is(struct tentry *e, const X509_NAME *name, const unsigned long *h)
{
    if (e->name == NULL && h != NULL && *h != e->hash)
        return false;
    const X509_NAME *mine = tindex_name(e);
    return mine != NULL && R(X509_NAME_cmp)(mine, name) == 0;
}

struct tcontent *tindex_seen(unsigned char *bytes, size_t len)
{
    uint64_t h = content_hash(bytes, len);
    pthread_mutex_lock(&index_lock);
    struct tcontent *c = NULL;
    if (find_locked(bytes, len, h) == NULL && kept + len <= KEPT_MAX &&
        ncontents < CONTENTS_MAX && (c = calloc(1, sizeof *c)) != NULL) {
        *c = (struct tcontent){.bytes = bytes, .len = len, .hash = h, .next = contents};
        contents = c;
        kept += len;
        ncontents++;
    }
    pthread_mutex_unlock(&index_lock);
    if (c == NULL)
        free(bytes);
    return c;
}

bool tindex_index(struct tcontent *c, int count, const STACK_OF(X509_INFO) *inf)
{
    bool made = false;
    pthread_mutex_lock(&index_lock);
    if (!c->tried) {
        c->tried = true;
        c->count = count;
        made = index_from(c, inf);
        /* Published last: readers take the index without the lock. */
        __atomic_store_n(&c->indexed, made, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&index_lock);
    return made;
}

void tindex_free_info(void *xi)
{
    R(X509_INFO_free)(xi);
}

bool tindex_parse(const struct tcontent *c, size_t i, X509 **x, X509_CRL **crl)
{
    *x = NULL;
    *crl = NULL;
    BIO *bio = R(BIO_new_mem_buf)(c->bytes + c->e[i].off, (int)c->e[i].len);
    if (bio == NULL)
        return false;
    /* The same function on the same bytes as the whole load: the same
     * object, TRUSTED CERTIFICATE trust settings included. */
    STACK_OF(X509_INFO) *inf = R(PEM_X509_INFO_read_bio_ex)(bio, NULL, NULL, "", NULL, NULL);
    R(BIO_free)(bio);
    if (inf == NULL)
        return false;
    if (R(OPENSSL_sk_num)((const OPENSSL_STACK *)inf) == 1) {
        X509_INFO *xi = R(OPENSSL_sk_value)((const OPENSSL_STACK *)inf, 0);
        if (!c->e[i].crl && xi->x509 != NULL && xi->crl == NULL) {
            *x = xi->x509;
            xi->x509 = NULL;
        } else if (c->e[i].crl && xi->crl != NULL && xi->x509 == NULL) {
            *crl = xi->crl;
            xi->crl = NULL;
        }
    }
    R(OPENSSL_sk_pop_free)((OPENSSL_STACK *)inf, tindex_free_info);
    return *x != NULL || *crl != NULL;
}
