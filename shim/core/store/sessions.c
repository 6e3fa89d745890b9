/* The store's sessions (store.h): an entry, DIR/s-HEX, holds a server's
 * sessions for one client configuration, in record.c's format: at most the
 * pool's size of TLS 1.3 tickets, the newest, and one TLS 1.2 session. A
 * TLS 1.3 ticket taken leaves its entry and is marked spent (spent.c)
 * before it is offered. The directory (dir.c), its lock (lock.c) and the
 * entries' names (names.c) are the room's other files. The host's errno
 * is preserved across every call. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "pooled.h"
#include "store.h"
#include "store/dir.h"
#include "store/entry.h"
#include "store/lock.h"
#include "store/names.h"
#include "store/record.h"
#include "store/spent.h"

static int pool_size = 8;
static long max_hosts = 1024;

/* Makes room for one more server: drops the least recently used entries
 * beyond the limit. Runs only when an entry is created. */
static void evict(int dfd)
{
    for (long n = drop_oldest(dfd, entry_name, max_hosts - 1); n > 0; n--)
        stat_add(ST_EVICTED);
}

static bool alive(const struct record *r, time_t now)
{
    return now < r->expires && r->expires - r->born <= MAX_LIFETIME;
}

/* The entry's records, or none when it is missing, damaged, foreign, or
 * for another server (a hash collision would be needed, but the check is
 * free). -1: there is no entry; -2: it is refused. *buf holds the text
 * the records point into. */
static int load(int dfd, const struct stored *st, char **buf, struct record *recs)
{
    size_t len = 0;
    *buf = NULL;
    off_t size;
    int fd = open_file(dfd, st->name, O_RDONLY, &size);
    if (fd < 0)
        return errno == ENOENT ? -1 : -2;
    *buf = read_all(fd, size, FILE_MAX, &len);
    close(fd);
    char server[HEX_LEN + 1];
    int n = *buf != NULL ? record_parse(*buf, len, server, recs, RECORDS_MAX) : -1;
    if (n < 0 || strcmp(server, st->server) != 0) {
        LOG(LOG_DEBUG, "store entry %.12s is unreadable; rebuilding it", st->name + 2);
        return 0;
    }
    return n;
}

/* Writes the entry back: the sessions added (newest first), then the
 * records kept, in order. Sized to what it holds. */
static bool save(int dfd, const struct stored *st, const struct record *recs, const bool *keep,
                 int n, struct stored *const *adds, int nadds)
{
    size_t size = HEX_LEN + 64, len = 0;
    bool any = false;
    for (int i = 0; i < nadds; i++)
        size += adds[i]->len;
    for (int i = 0; i < n; i++)
        size += keep[i] ? record_line_len(&recs[i]) : 0;
    char *out = malloc(size);
    if (out == NULL)
        return false;
    len = record_header(out, st->server);
    for (int i = 0; i < nadds; i++)
        if (adds[i]->tls13) {
            memcpy(out + len, adds[i]->line, adds[i]->len);
            len += adds[i]->len;
            any = true;
        }
    for (int i = 0; i < n; i++)
        if (keep[i]) {
            len += record_line(out + len, &recs[i]);
            any = true;
        }
    for (int i = 0; i < nadds; i++)
        if (!adds[i]->tls13) {
            memcpy(out + len, adds[i]->line, adds[i]->len);
            len += adds[i]->len;
            any = true;
        }
    bool ok = replace(dfd, st->name, out, any ? len : 0);
    free(out);
    return ok;
}

/* Adds sessions to one entry (the lock is held): list holds them oldest
 * first, all of one name. At most the pool's size of TLS 1.3 tickets are
 * kept, the newest, and one TLS 1.2 session, the newest. */
static bool write_locked(int dfd, struct stored *const *list, int m, time_t now)
{
    struct record recs[RECORDS_MAX];
    bool keep[RECORDS_MAX];
    struct stored *adds[RECORDS_MAX];
    int nadds = 0, t13 = 0;
    bool t12 = false;
    for (int i = m - 1; i >= 0 && nadds < RECORDS_MAX; i--) {
        const struct stored *a = list[i];
        if (a->expires <= now || (a->tls13 ? t13 == pool_size : t12))
            continue;
        adds[nadds++] = list[i];
        t13 += a->tls13;
        t12 |= !a->tls13;
    }
    if (nadds == 0)
        return true;
    char *buf;
    int n = load(dfd, list[0], &buf, recs);
    if (n == -2)
        return false;
    if (n == -1) {
        evict(dfd);
        n = 0;
    }
    for (int i = 0; i < n; i++) {
        keep[i] = alive(&recs[i], now);
        if (!keep[i])
            stat_add(ST_EXPIRED);
        else if (recs[i].tls13 && t13 == pool_size)
            keep[i] = false; /* the oldest go first */
        else if (!recs[i].tls13 && t12)
            keep[i] = false; /* one TLS 1.2 session, the newest */
        t13 += keep[i] && recs[i].tls13;
    }
    bool ok = save(dfd, list[0], recs, keep, n, adds, nadds);
    free(buf);
    return ok;
}

static bool decode(const struct tls_ops *ops, const struct record *r, struct pooled *out)
{
    unsigned char *der = malloc(r->sess_len + r->chain_len + r->staple_len);
    size_t len, clen = 0, slen = 0;
    *out = (struct pooled){.ops = ops, .born = r->born, .expires = r->expires};
    out->sess = der != NULL && b64_decode(r->sess, r->sess_len, der, &len)
                    ? ops->decode(der, len)
                    : NULL;
    if (out->sess != NULL && r->chain_len > 0 &&
        b64_decode(r->chain, r->chain_len, der, &clen) && (out->chain.der = malloc(clen)) != NULL) {
        memcpy(out->chain.der, der, clen);
        out->chain.der_len = clen;
    }
    /* The staple is what a judge saw: a record whose staple cannot be
     * restored exactly is not offered. */
    if (out->sess != NULL && r->staple_len > 0 &&
        (!b64_decode(r->staple, r->staple_len, der, &slen) ||
         (out->chain.staple = malloc(slen)) == NULL)) {
        pooled_free(out);
    } else if (out->sess != NULL && r->staple_len > 0) {
        memcpy(out->chain.staple, der, slen);
        out->chain.staple_len = slen;
    }
    free(der);
    if (out->sess == NULL || ops->is_tls13(out->sess) != r->tls13 ||
        !ops->resumable(out->sess)) {
        pooled_free(out);
        return false;
    }
    return true;
}

void store_take(const struct key *k, time_t now, bool (*held)(uint64_t digest), struct pooled *out)
{
    int saved = errno;
    out->sess = NULL;
    struct stored st;
    struct op op;
    if (op_begin(&op) && name_entry(op.dfd, k, &st)) {
        struct record recs[RECORDS_MAX];
        bool keep[RECORDS_MAX];
        char *buf;
        int n = load(op.dfd, &st, &buf, recs);
        bool changed = n == 0 && buf != NULL;
        for (int i = 0; i < n; i++) {
            keep[i] = alive(&recs[i], now);
            if (!keep[i])
                stat_add(ST_EXPIRED);
            /* A TLS 1.3 ticket leaves the store when taken, and is marked
             * spent: one offered already (a copy another configuration
             * held, or the program's own) goes. A TLS 1.2 session stays
             * for others. One that cannot be decoded goes. */
            if (keep[i] && out->sess == NULL) {
                keep[i] = decode(k->ops, &recs[i], out) && !recs[i].tls13;
                uint64_t d = out->sess != NULL && recs[i].tls13 ? k->ops->ticket_digest(out->sess) : 0;
                /* One the taking process's program holds stays for the
                 * others, unmarked. */
                if (d != 0 && held != NULL && held(d)) {
                    pooled_free(out);
                    keep[i] = true;
                    continue;
                }
                if (d != 0 && spend(op.dfd, d, now, MARK_SHIM) != MARK_NONE)
                    pooled_free(out);
            }
            changed |= !keep[i];
        }
        /* A taken ticket must be gone for the others before it is offered:
         * if the entry cannot be rewritten (a full file system), it goes
         * whole, and if even that fails, nothing is offered. */
        if (changed && !save(op.dfd, &st, recs, keep, n > 0 ? n : 0, NULL, 0) &&
            unlinkat(op.dfd, st.name, 0) != 0 && errno != ENOENT && out->sess != NULL &&
            k->ops->is_tls13(out->sess))
            pooled_free(out);
        free(buf);
    }
    op_end(&op);
    errno = saved;
}

static bool unstore(const struct key *k, const void *sess, uint64_t digest, time_t now,
                    enum mark mark)
{
    int saved = errno;
    bool spent = false;
    struct stored st;
    struct op op;
    if (op_begin(&op) && name_entry(op.dfd, k, &st)) {
        spent = spend(op.dfd, digest, now, mark) == MARK_SHIM;
        struct record recs[RECORDS_MAX];
        bool keep[RECORDS_MAX];
        char *buf;
        int n = load(op.dfd, &st, &buf, recs);
        bool changed = false;
        for (int i = 0; i < n; i++) {
            struct pooled p;
            keep[i] = true;
            if (!recs[i].tls13 || !alive(&recs[i], now) || !decode(k->ops, &recs[i], &p))
                continue;
            keep[i] = !k->ops->same_ticket(p.sess, sess);
            changed |= !keep[i];
            pooled_free(&p);
        }
        if (changed)
            save(op.dfd, &st, recs, keep, n, NULL, 0);
        free(buf);
    }
    op_end(&op);
    errno = saved;
    return spent;
}

bool store_claim(const struct key *k, const void *sess, uint64_t digest, time_t now)
{
    return unstore(k, sess, digest, now, MARK_PROGRAM);
}

static struct stored *encode(const struct pooled *p)
{
    if (p->born < 0 || p->expires <= time(NULL))
        return NULL; /* nothing to keep (a certificate dated before 1970 too) */
    size_t slen;
    unsigned char *der = p->ops->encode(p->sess, &slen);
    size_t clen;
    unsigned char *chain = chain_encode(&p->chain, &clen);
    if (clen > RECORD_MAX_B64 / 4 * 3)
        clen = 0; /* a chain too big to keep: the session alone */
    if (p->chain.lost || p->chain.staple_len > RECORD_MAX_B64 / 4 * 3) {
        free(chain);
        free(der);
        return NULL; /* a staple not kept exact: the session is not kept */
    }
    struct stored *st = NULL;
    char *b64 = NULL;
    size_t sb = 4 * ((slen + 2) / 3), cb = 4 * ((clen + 2) / 3);
    size_t ob = 4 * ((p->chain.staple_len + 2) / 3);
    struct record r = {.born = p->born, .expires = p->expires, .sess_len = sb, .chain_len = cb,
                       .staple_len = ob};
    size_t line = record_line_len(&r);
    if (der != NULL && slen > 0 && slen <= RECORD_MAX_B64 / 4 * 3 &&
        (st = malloc(sizeof *st + line)) != NULL && (b64 = malloc(sb + cb + ob + 1)) != NULL) {
        r.tls13 = p->ops->is_tls13(p->sess);
        r.sess = b64;
        r.chain = b64 + sb;
        r.sess_len = b64_encode(der, slen, b64);
        r.chain_len = b64_encode(chain, clen, b64 + sb);
        r.staple = b64 + sb + cb;
        r.staple_len = b64_encode(p->chain.staple, p->chain.staple_len, b64 + sb + cb);
        st->tls13 = r.tls13;
        st->expires = r.expires;
        st->len = record_line(st->line, &r);
    } else {
        free(st);
        st = NULL;
    }
    free(chain);
    free(der);
    free(b64);
    return st;
}

void store_forget(const struct key *k)
{
    int saved = errno;
    struct stored st;
    struct op op;
    if (op_begin(&op) && name_entry(op.dfd, k, &st))
        unlinkat(op.dfd, st.name, 0);
    op_end(&op);
    errno = saved;
}

/* Named with the salt last seen, without touching the store: a program
 * encodes a ticket on every connection. store_write checks that salt is
 * still the store's. */
struct stored *store_encode(const struct key *k, const struct pooled *p)
{
    int saved = errno;
    struct stored *st = encode(p);
    if (st != NULL)
        names_salt_seen(st->salt);
    struct op op = {-1, -1, false};
    bool ok = st != NULL && st->salt[0] != '\0' ? name_with(k, st)
              : st != NULL && op_begin(&op) && name_entry(op.dfd, k, st);
    op_end(&op);
    if (!ok) {
        free(st);
        st = NULL;
    }
    errno = saved;
    return st;
}

/* By entry, then in the order given. */
static int by_name(const void *a, const void *b)
{
    const struct stored *x = *(struct stored *const *)a, *y = *(struct stored *const *)b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* May run at exit, perhaps after the TLS library has been cleaned up:
 * everything that needed it was done by store_encode. One lock for all, so that a
 * busy store costs one wait, and one rewrite per entry. The list is sorted
 * in place. */
void store_write(struct stored **list, unsigned n)
{
    int saved = errno;
    char salt[HEX_LEN + 1];
    struct op op = {-1, -1, false};
    for (unsigned i = 0; i < n; i++)
        list[i]->seq = i;
    qsort(list, n, sizeof *list, by_name);
    if (n > 0 && op_begin(&op) && get_salt(op.dfd, false, salt)) {
        time_t now = time(NULL);
        for (unsigned i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && strcmp(list[j]->name, list[i]->name) == 0; j++)
                ;
            /* Named under a salt the store no longer has: never found. */
            if (strcmp(salt, list[i]->salt) == 0)
                write_locked(op.dfd, list + i, (int)(j - i), now);
        }
    }
    op_end(&op);
    errno = saved;
}

/* Once: the limits the sessions keep to, the fork handlers of the room's
 * mutexes (the lock's first, as they are taken), and the directory. */
void store_init(const struct config *cfg)
{
    const char *path = cfg->store;
    pool_size = cfg->pool_size;
    max_hosts = cfg->max_hosts;
    if (path == NULL || *path == '\0')
        return;
    lock_init();
    names_init();
    dir_init(path);
}
