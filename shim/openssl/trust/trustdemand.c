/* Trust files a store takes on demand (trustdemand.h).
 *
 * The rule that keeps it exact: for each kind (certificate, CRL) and name,
 * either every waiting entry of that name is in the store, or the store
 * holds no object of that name at all. A search for a name that the store
 * lacks then always reaches a hook (which first brings that name's entries
 * in, in file order, before anything added later), and a search that
 * finds the name in the store finds all of it.
 *
 * The order of the store's stack is the program's to see too
 * (X509_STORE_get0_objects): OpenSSL sorts it (a stable sort: glibc's
 * merge sort) by kind and name at every search and appends at every add
 * (x509_store_add searches before it pushes), so after a full load it is
 * sorted but for the last object added, until the next search. The shim
 * follows that: a file is taken on demand only into an empty store, whose
 * last object after the load would be the entry the load adds last (the
 * last X509_INFO's CRL, else its certificate: tindex_last_added); that entry's
 * name is brought in at once, so that the stack is never empty while
 * anything waits and a search of any kind shows as a sorted stack; and
 * after each batch the stack is put back as the full load's would be now:
 * sorted, or sorted but for its last object.
 *
 * Only on 3.0 (verified.def): 3.5 searches a store past these hooks and
 * keeps its order otherwise (libresumeshim(7), VERSIONS).
 * Every way OpenSSL 3.0 reads a store's objects (crypto/x509/x509_lu.c,
 * by_dir.c, by_store.c, x509_vfy.c of Debian's 3.0.20 source; the calls
 * through the PLT seen with objdump -d in Debian's libcrypto.so.3 3.0.19):
 *  - X509_STORE_CTX_get_by_subject, which every verification's lookups
 *    reach: X509_STORE_CTX_get1_issuer (a chain's issuers), _get1_crls
 *    (CRLs) and _get_obj_by_subject call it first, through the PLT;
 *    hooked: the name comes in first.
 *  - X509_STORE_CTX_get1_certs (lookup_certs: a partial chain's, DANE's
 *    and check_trust's searches) reads the store first and calls
 *    X509_STORE_CTX_get_by_subject (PLT) only when the name is missing:
 *    by the rule, what it finds there is already whole.
 *  - X509_LOOKUP_by_subject(_ex), the lookups' own search: by_dir reads the
 *    store's objects directly after loading a directory's files; by_store
 *    calls X509_STORE_get0_objects and searches it by the same name;
 *    hooked, for a program calling them itself (get_by_subject already
 *    brought the name in otherwise).
 *  - X509_STORE_add_cert / _add_crl (x509_store_add searches the store for
 *    an equal object first): by X509_load_cert_crl_file_ex, by_dir, by_store
 *    and programs, all through the PLT; hooked: the name comes in before
 *    the object joins it, and again after, for a file deferred meanwhile;
 *    and the added object is the stack's last.
 *  - X509_STORE_get0_objects: the store's own stack; called through the PLT
 *    by by_store (searched by a name already in, above) and
 *    X509_STORE_get1_all_certs (hooked itself); any other caller
 *    (CPython's cert_store_stats and get_ca_certs, a program's verify
 *    callback) gets everything loaded first, and the store takes no more
 *    files on demand: the caller may keep the stack.
 *  - X509_STORE_get1_all_certs (X509_build_chain's and CMP's trusted
 *    certificates, X509_STORE_CTX_print_verify_cb): everything first.
 *  - A store shared by other contexts (SSL_CTX_set1_cert_store,
 *    SSL_CTX_set1_verify_cert_store, X509_STORE_up_ref): the waiting
 *    entries belong to the store, and every path above serves them all.
 *  - The key's fingerprint (trust.c): demand_fingerprint below.
 * X509_STORE_CTX_init itself reads no objects, so a verification on the
 * connection's store (a full handshake's, or a resumed one's judged again)
 * is served by the paths above. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"
#include "trustdemand.h"
#include "trustindex.h"
#include "trustrecord.h"
#include "store.h"

struct pend {
    struct tcontent *c;
    unsigned char *loaded; /* per entry */
    size_t left;
};

struct demand {
    int waiting;   /* atomic: npend != 0 */
    bool eager;    /* the program holds the objects: nothing waits */
    size_t npend;
    struct pend *pend;
    size_t deferred; /* files this store took on demand */
    const struct tcontent *first;
    size_t ours;   /* objects the shim put in the store */
    /* The full load's stack now: sorted, or sorted but for its last
     * object, which is in the store (tail) or waits (tail_entry of the
     * last file). */
    enum { SORTED, TAIL, TAIL_WAITS } order;
    X509_OBJECT *tail;
    const unsigned char *tail_flag;
};

#define SMALL_FILE 16384

static int demand_index = -1;
/* Set once any store has taken a file on demand: until then the hooks of
 * the searches have nothing to look at. */
static int demand_any;
/* One lock for every store's waiting entries; taken before a store's own
 * lock, never while holding it. */
static pthread_mutex_t demand_lock = PTHREAD_MUTEX_INITIALIZER;

/* The store whose lock a holder of demand_lock waits for, and the batch it
 * waits to put in: a caller of X509_STORE_get0_objects holding that store's
 * lock itself (CPython's cert_store_stats does) must not wait for
 * demand_lock then, and need not (demand_handed). */
struct batch;
static X509_STORE *blocked_on;
static struct batch *blocked_batch;

/* Under demand_lock. */
static bool lock_store(X509_STORE *store, struct batch *b)
{
    blocked_batch = b;
    __atomic_store_n(&blocked_on, store, __ATOMIC_SEQ_CST);
    int r = R(X509_STORE_lock)(store);
    __atomic_store_n(&blocked_on, NULL, __ATOMIC_SEQ_CST);
    return r == 1;
}

static void free_demand(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                        void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    struct demand *d = ptr;
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->npend; i++)
        free(d->pend[i].loaded);
    free(d->pend);
    free(d);
}

void demand_init(void)
{
    tindex_init();
    demand_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_X509_STORE, 0, NULL, NULL, NULL,
                                              free_demand);
    fork_guard(&demand_lock);
}

static struct demand *state(X509_STORE *store)
{
    return __atomic_load_n(&demand_any, __ATOMIC_ACQUIRE) && store != NULL
               ? R(X509_STORE_get_ex_data)(store, demand_index)
               : NULL;
}

/* Under demand_lock. */
static struct demand *state_new(X509_STORE *store)
{
    struct demand *d = demand_index >= 0 ? R(X509_STORE_get_ex_data)(store, demand_index) : NULL;
    if (d == NULL && demand_index >= 0 && (d = calloc(1, sizeof *d)) != NULL &&
        R(X509_STORE_set_ex_data)(store, demand_index, d) != 1) {
        free(d);
        d = NULL;
    }
    return d;
}

struct batch {
    X509_OBJECT **o;
    unsigned char **flag; /* the entry's loaded flag */
    size_t n, cap;
    bool done; /* put in by a caller holding the store's lock meanwhile */
};

static void batch_add(struct batch *b, const struct tcontent *c, size_t i, unsigned char *flag)
{
    X509 *x;
    X509_CRL *crl;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        X509_OBJECT **o = realloc(b->o, cap * sizeof *o);
        if (o != NULL)
            b->o = o;
        unsigned char **f = o != NULL ? realloc(b->flag, cap * sizeof *f) : NULL;
        if (f == NULL)
            return;
        b->flag = f;
        b->cap = cap;
    }
    /* A content parsed cleanly as a whole parses cleanly block by block:
     * nothing is raised here but on memory exhaustion, and the program's
     * error queue must not hear of it. */
    R(ERR_set_mark)();
    if (tindex_parse(c, i, &x, &crl)) {
        X509_OBJECT *o = R(X509_OBJECT_new)();
        if (o != NULL && (x != NULL ? R(X509_OBJECT_set1_X509)(o, x)
                                    : R(X509_OBJECT_set1_X509_CRL)(o, crl)) == 1) {
            b->flag[b->n] = flag;
            b->o[b->n++] = o;
            *flag = 1;
        } else {
            R(X509_OBJECT_free)(o);
        }
        R(X509_free)(x);
        R(X509_CRL_free)(crl);
    }
    R(ERR_pop_to_mark)();
}

/* Under the store's lock: the stack as the full load's would be now. */
static void reorder(struct demand *d, STACK_OF(X509_OBJECT) *objs)
{
    OPENSSL_STACK *sk = (OPENSSL_STACK *)objs;
    R(OPENSSL_sk_sort)(sk);
    if (d->order == TAIL && R(OPENSSL_sk_delete_ptr)(sk, d->tail) != NULL)
        R(OPENSSL_sk_push)(sk, d->tail); /* cannot fail: the room is there */
    else if (d->order == TAIL_WAITS)
        /* Unsorted again, the order unchanged: the next search shows. */
        R(OPENSSL_sk_set_cmp_func)(sk, R(OPENSSL_sk_set_cmp_func)(sk, NULL));
}

static void put_in(X509_STORE *store, struct demand *d, struct batch *b)
{
    STACK_OF(X509_OBJECT) *objs = R(X509_STORE_get0_objects)(store);
    /* Sorted now means searched since the stack was last put in order:
     * the full load's was searched too. */
    if (R(OPENSSL_sk_is_sorted)((const OPENSSL_STACK *)objs))
        d->order = SORTED;
    for (size_t i = 0; i < b->n; i++) {
        if (R(X509_OBJECT_retrieve_match)(objs, b->o[i]) != NULL)
            continue; /* as x509_store_add: an equal object is there */
        if (R(OPENSSL_sk_push)((OPENSSL_STACK *)objs, b->o[i]) > 0) {
            if (d->order == TAIL_WAITS && b->flag[i] == d->tail_flag) {
                d->order = TAIL;
                d->tail = b->o[i];
            }
            b->o[i] = NULL;
            d->ours++;
        } else {
            *b->flag[i] = 0;
        }
    }
    reorder(d, objs);
    b->done = true;
}

/* What x509_store_add does for each, but for all of them under one hold of
 * the store's lock: a thread searching the store meanwhile sees a name's
 * entries all or none. held: the caller may hold the store's lock itself
 * (CPython's cert_store_stats calls X509_STORE_get0_objects under it); a
 * second X509_STORE_lock then fails (EDEADLK), and the caller's hold is
 * the one that counts. When the objects cannot be put in, they wait on. */
static void batch_push(X509_STORE *store, struct demand *d, struct batch *b, bool held)
{
    bool locked = b->n > 0 && !held && lock_store(store, b);
    if (b->done) {
        /* put in meanwhile */
    } else if (locked || (b->n > 0 && held)) {
        put_in(store, d, b);
    } else {
        for (size_t i = 0; i < b->n; i++)
            *b->flag[i] = 0;
    }
    if (locked)
        R(X509_STORE_unlock)(store);
    for (size_t i = 0; i < b->n; i++)
        R(X509_OBJECT_free)(b->o[i]);
    free(b->o);
    free(b->flag);
}

static void settle(struct demand *d)
{
    size_t k = 0;
    for (size_t i = 0; i < d->npend; i++) {
        struct pend *w = &d->pend[i];
        w->left = 0;
        for (size_t j = 0; j < w->c->n; j++)
            w->left += !w->loaded[j];
        if (w->left == 0)
            free(w->loaded);
        else
            d->pend[k++] = *w;
    }
    d->npend = k;
    __atomic_store_n(&d->waiting, k != 0, __ATOMIC_RELEASE);
}

/* Under demand_lock: the entries of that kind and name, in load order.
 * name NULL: every entry. */
static void bring(X509_STORE *store, struct demand *d, bool crl, const X509_NAME *name,
                  bool held)
{
    struct batch b = {0};
    unsigned long h = 0;
    int hashed = 0;
    for (size_t p = 0; p < d->npend; p++) {
        struct pend *w = &d->pend[p];
        for (size_t i = 0; i < w->c->n && w->left > 0; i++) {
            struct tentry *e = &w->c->e[i];
            if (w->loaded[i] || (name != NULL && e->crl != crl))
                continue;
            /* A record's names are compared by hash first (trustrecord.c). */
            if (name != NULL && e->name == NULL && hashed == 0)
                h = R(X509_NAME_hash_ex)(name, NULL, NULL, &hashed) & 0xffffffffu,
                hashed = hashed == 1 ? 1 : -1;
            if (name != NULL && !tindex_is(e, name, hashed == 1 ? &h : NULL))
                continue;
            batch_add(&b, w->c, i, &w->loaded[i]);
        }
    }
    batch_push(store, d, &b, held);
    settle(d);
}

void demand_need(X509_STORE *store, X509_LOOKUP_TYPE type, const X509_NAME *name)
{
    struct demand *d = state(store);
    if (d == NULL || name == NULL || (type != X509_LU_X509 && type != X509_LU_CRL) ||
        !__atomic_load_n(&d->waiting, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&demand_lock);
    bring(store, d, type == X509_LU_CRL, name, false);
    pthread_mutex_unlock(&demand_lock);
}

bool demand_on(void)
{
    return __atomic_load_n(&demand_any, __ATOMIC_ACQUIRE) != 0;
}

void demand_added(X509_STORE *store)
{
    struct demand *d = state(store);
    if (d == NULL || !__atomic_load_n(&d->waiting, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&demand_lock);
    if (d->npend != 0 && lock_store(store, NULL)) {
        /* x509_store_add searched (sorting the stack) and pushed, unless
         * an equal object was there: then the stack is still sorted. */
        OPENSSL_STACK *sk = (OPENSSL_STACK *)R(X509_STORE_get0_objects)(store);
        int n = R(OPENSSL_sk_num)(sk);
        if (R(OPENSSL_sk_is_sorted)(sk) || n == 0) {
            d->order = SORTED;
        } else {
            d->order = TAIL;
            d->tail = R(OPENSSL_sk_value)(sk, n - 1);
        }
        R(X509_STORE_unlock)(store);
    }
    pthread_mutex_unlock(&demand_lock);
}

void demand_need_all(X509_STORE *store, bool holding)
{
    /* A store handed out is marked even before anything was deferred: its
     * holder may read the stack later, past any hook. */
    struct demand *d = state(store);
    if (d == NULL && (!holding || demand_index < 0 || store == NULL))
        return;
    pthread_mutex_lock(&demand_lock);
    if (holding)
        d = state_new(store);
    if (d != NULL) {
        if (d->npend != 0)
            bring(store, d, false, NULL, false);
        /* Only once nothing waits: what could not be put in is tried again
         * by the next search. */
        if (holding && d->npend == 0)
            d->eager = true;
    }
    pthread_mutex_unlock(&demand_lock);
}

void demand_handed(X509_STORE *store, const void *caller)
{
    static const void *crypto_base;
    if (demand_index < 0)
        return;
    struct demand *d = R(X509_STORE_get_ex_data)(store, demand_index);
    if (d != NULL && d->eager)
        return;
    const void *base = __atomic_load_n(&crypto_base, __ATOMIC_ACQUIRE);
    Dl_info in;
    if (base == NULL) {
        union {
            int (*f)(X509_STORE *);
            void *p;
        } lock = {R(X509_STORE_lock)};
        if (dladdr(lock.p, &in) != 0)
            __atomic_store_n(&crypto_base, base = in.dli_fbase, __ATOMIC_RELEASE);
    }
    /* libcrypto's own callers search the stack by a name already brought
     * in (by_store) or have brought everything in (get1_all_certs). */
    if (base != NULL && dladdr(caller, &in) != 0 && in.dli_fbase == base)
        return;
    if (R(X509_STORE_lock)(store) == 1) {
        R(X509_STORE_unlock)(store);
        demand_need_all(store, true);
        return;
    }
    if (d == NULL) {
        /* Nothing waits: only the mark, if it can be made without waiting. */
        if (pthread_mutex_trylock(&demand_lock) == 0) {
            if ((d = state_new(store)) != NULL)
                d->eager = true;
            pthread_mutex_unlock(&demand_lock);
        }
        return;
    }
    /* The caller holds the store's lock (X509_STORE_lock fails with
     * EDEADLK for its holder). Whoever holds demand_lock either finishes
     * without this store, or waits for its lock: then nothing else moves
     * in the trust room until the caller lets go, and this thread does
     * the waiting batch's work and the rest. */
    for (;;) {
        if (pthread_mutex_trylock(&demand_lock) == 0) {
            bring(store, d, false, NULL, true);
            if (d->npend == 0)
                d->eager = true;
            pthread_mutex_unlock(&demand_lock);
            return;
        }
        if (__atomic_load_n(&blocked_on, __ATOMIC_SEQ_CST) == store) {
            if (blocked_batch != NULL && !blocked_batch->done)
                put_in(store, d, blocked_batch);
            bring(store, d, false, NULL, true);
            if (d->npend == 0)
                d->eager = true;
            return;
        }
        sched_yield();
    }
}

/* Under demand_lock: a file of this content waits beside an empty store
 * (see the order, above). */
static bool defer(X509_STORE *store, struct demand *d, struct tcontent *c)
{
    if (d->npend != 0 || d->eager || c->n == 0 || !lock_store(store, NULL))
        return false;
    int n = R(OPENSSL_sk_num)((const OPENSSL_STACK *)R(X509_STORE_get0_objects)(store));
    R(X509_STORE_unlock)(store);
    struct pend *pend = n == 0 ? realloc(d->pend, sizeof *pend) : NULL;
    if (pend == NULL)
        return false;
    d->pend = pend;
    unsigned char *loaded = calloc(c->n, 1);
    if (loaded == NULL)
        return false;
    d->pend[d->npend++] = (struct pend){c, loaded, c->n};
    d->deferred++;
    if (d->first == NULL)
        d->first = c;
    /* The full load's last add pushed the entry it adds last, unless that
     * was equal to an earlier one: then it only searched. */
    size_t at = tindex_last_added(c);
    struct tentry *last = &c->e[at];
    d->order = last->dup ? SORTED : TAIL_WAITS;
    d->tail_flag = &loaded[at];
    __atomic_store_n(&d->waiting, 1, __ATOMIC_SEQ_CST);
    /* (A name that cannot be decoded: everything, at once.) */
    bring(store, d, last->crl, tindex_name(last), false);
    return true;
}

/* X509_load_cert_crl_file_ex's loop (crypto/x509/by_file.c): each
 * X509_INFO's certificate, then its CRL, counted as added. */
static int add_all(X509_STORE *store, STACK_OF(X509_INFO) *inf)
{
    int count = 0, n = R(OPENSSL_sk_num)((const OPENSSL_STACK *)inf);
    for (int i = 0; i < n; i++) {
        X509_INFO *xi = R(OPENSSL_sk_value)((const OPENSSL_STACK *)inf, i);
        /* As through the hooks of X509_STORE_add_cert and _add_crl. */
        if (xi->x509 != NULL) {
            demand_need(store, X509_LU_X509, R(X509_get_subject_name)(xi->x509));
            if (!R(X509_STORE_add_cert)(store, xi->x509))
                return count;
            demand_added(store);
            count++;
        }
        if (xi->crl != NULL) {
            demand_need(store, X509_LU_CRL, R(X509_CRL_get_issuer)(xi->crl));
            if (!R(X509_STORE_add_crl)(store, xi->crl))
                return count;
            demand_added(store);
            count++;
        }
    }
    return count;
}

static int objects_in(const STACK_OF(X509_INFO) *inf)
{
    int count = 0, n = R(OPENSSL_sk_num)((const OPENSSL_STACK *)inf);
    for (int i = 0; i < n; i++) {
        X509_INFO *xi = R(OPENSSL_sk_value)((const OPENSSL_STACK *)inf, i);
        count += (xi->x509 != NULL) + (xi->crl != NULL);
    }
    return count;
}

/* Only a PEM file, in the default library context without a property
 * query, while the error queue is empty (so that "nothing raised" can be
 * told), is the shim's to load, and only once its content has been seen:
 * the first load of a content is OpenSSL's own, the shim keeping a copy of
 * the bytes. Its bytes are read once, now: what loads later is what was
 * read at the call. A content this process has indexed waits beside an
 * empty store; any other is loaded now by the functions the real one
 * calls, on the same kind of BIO over those bytes, and when anything is
 * raised on the way the real function runs instead, to fail as it fails. */
bool demand_load_file(X509_LOOKUP *lu, const char *file, int type, OSSL_LIB_CTX *libctx,
                      const char *propq, int *ret)
{
    if (type != X509_FILETYPE_PEM || libctx != NULL || propq != NULL || file == NULL ||
        demand_index < 0)
        return false;
    unsigned char *b;
    size_t len;
    if (!tindex_read(file, &b, &len))
        return false;
    /* A file of a few certificates costs little to parse and would save
     * nothing: OpenSSL's own, always. */
    if (len < SMALL_FILE) {
        free(b);
        return false;
    }
    struct tcontent *c = tindex_find(b, len);
    if (c == NULL)
        c = trecord_load(b, len);
    if (c == NULL) {
        /* With the store on, the first load of a content indexes it for
         * the processes to come; without, it is OpenSSL's own. */
        c = tindex_seen(b, len);
        if (c == NULL || !store_on())
            return false;
    } else {
        free(b);
    }
    X509_STORE *store = R(X509_LOOKUP_get_store)(lu);
    if (store == NULL || R(ERR_peek_error)() != 0)
        return false;
    if (__atomic_load_n(&c->indexed, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&demand_lock);
        struct demand *d = state_new(store);
        bool done = d != NULL && defer(store, d, c);
        if (done)
            __atomic_store_n(&demand_any, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&demand_lock);
        if (done) {
            *ret = c->count;
            return true;
        }
    }
    /* by_file.c reads through BIO_new_file: a file BIO over a stdio
     * stream, here one over the bytes read. */
    FILE *fp = fmemopen(c->bytes, c->len, "r");
    BIO *bio = fp != NULL ? R(BIO_new_fp)(fp, BIO_NOCLOSE) : NULL;
    STACK_OF(X509_INFO) *inf = NULL;
    R(ERR_set_mark)();
    if (bio != NULL)
        inf = R(PEM_X509_INFO_read_bio_ex)(bio, NULL, NULL, "", NULL, NULL);
    R(BIO_free)(bio);
    if (fp != NULL)
        fclose(fp);
    bool clean = inf != NULL && R(ERR_peek_error)() == 0;
    R(ERR_pop_to_mark)();
    int count = clean ? objects_in(inf) : 0;
    if (count == 0) {
        if (inf != NULL)
            R(OPENSSL_sk_pop_free)((OPENSSL_STACK *)inf, tindex_free_info);
        return false;
    }
    *ret = add_all(store, inf);
    if (*ret == count && tindex_index(c, count, inf))
        trecord_save(c);
    R(OPENSSL_sk_pop_free)((OPENSSL_STACK *)inf, tindex_free_info);
    return true;
}

bool demand_fingerprint(X509_STORE *store, unsigned char md[32])
{
    struct demand *d = state(store);
    if (d == NULL || d->deferred == 0)
        return false;
    bool done = false;
    pthread_mutex_lock(&demand_lock);
    if (d->deferred == 1 && !d->eager && lock_store(store, NULL)) {
        int n = R(OPENSSL_sk_num)((const OPENSSL_STACK *)R(X509_STORE_get0_objects)(store));
        R(X509_STORE_unlock)(store);
        /* Nothing but what the one content put there. */
        if (n >= 0 && (size_t)n == d->ours) {
            memcpy(md, d->first->sighash, 32);
            done = true;
        }
    }
    if (!done && d->npend != 0)
        bring(store, d, false, NULL, false);
    pthread_mutex_unlock(&demand_lock);
    return done;
}
