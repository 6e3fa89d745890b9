/* The cache key: everything the verdict of a full handshake depended on.
 *
 * A resumed handshake does not verify the server again; OpenSSL copies the
 * stored verify result (measured: a session from a test.example connection
 * resumed under SSL_set1_host("other.example") and under a context with no
 * CA store). So a session may only be offered to a connection that would
 * have judged the server exactly as the one that earned it did. Each field
 * is tagged and length-prefixed so that no two configurations encode alike.
 * Content, not pointers: a program that builds a fresh SSL_CTX for every
 * connection (Python's urllib) still finds its sessions. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "shim.h"

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

void key_init(void)
{
    store_index = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_X509_STORE, 0, NULL, NULL, NULL,
                                             exdata_free);
}

static void put(struct key *k, char tag, const void *data, size_t len)
{
    if (k->len == 0 || len > 0xffff || k->len + 3 + len > KEY_MAX) {
        k->len = 0; /* too much to tell apart: no key, no resumption */
        return;
    }
    k->bytes[k->len++] = (unsigned char)tag;
    k->bytes[k->len++] = (unsigned char)(len >> 8);
    k->bytes[k->len++] = (unsigned char)len;
    memcpy(k->bytes + k->len, data, len);
    k->len += len;
}

/* The most frequent field, written in place (put's memcpy of a variable
 * length is a call). */
static void put_num(struct key *k, char tag, uint64_t v)
{
    if (k->len == 0 || k->len + 3 + sizeof v > KEY_MAX) {
        k->len = 0;
        return;
    }
    unsigned char *p = k->bytes + k->len;
    p[0] = (unsigned char)tag;
    p[1] = 0;
    p[2] = sizeof v;
    memcpy(p + 3, &v, sizeof v);
    k->len += 3 + sizeof v;
}

static void put_str(struct key *k, char tag, const char *s)
{
    if (s != NULL)
        put(k, tag, s, strlen(s));
}

struct sig {
    const unsigned char *p;
    size_t len;
};

static int cmp_sig(const void *a, const void *b)
{
    const struct sig *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->p, y->p, x->len);
}

/* SHA-256 over the sorted signatures of the store's certificates and CRLs.
 * A signature names its object as surely as a digest of the whole DER (it
 * is made over everything else in it) and is already decoded: a system
 * bundle of 145 certificates is fingerprinted without re-encoding any. */
static bool fingerprint_objects(X509_STORE *store, const struct algs *algs, unsigned char md[32])
{
    R(X509_STORE_lock)(store);
    const OPENSSL_STACK *objs = (const OPENSSL_STACK *)R(X509_STORE_get0_objects)(store);
    int n = objs != NULL ? R(OPENSSL_sk_num)(objs) : 0;
    struct sig *sigs = malloc((size_t)(n > 0 ? n : 1) * sizeof *sigs);
    EVP_MD_CTX *mdctx = R(EVP_MD_CTX_new)();
    bool ok = sigs != NULL && mdctx != NULL && algs != NULL &&
              R(EVP_DigestInit_ex)(mdctx, algs->sha256, NULL) == 1;
    size_t used = 0;
    for (int i = 0; ok && i < n; i++) {
        const X509_OBJECT *o = R(OPENSSL_sk_value)(objs, i);
        const ASN1_BIT_STRING *bits = NULL;
        if (R(X509_OBJECT_get_type)(o) == X509_LU_X509)
            R(X509_get0_signature)(&bits, NULL, R(X509_OBJECT_get0_X509)(o));
        else if (R(X509_OBJECT_get_type)(o) == X509_LU_CRL)
            R(X509_CRL_get0_signature)(R(X509_OBJECT_get0_X509_CRL)(o), &bits, NULL);
        if (bits != NULL)
            sigs[used++] = (struct sig){R(ASN1_STRING_get0_data)(bits),
                                        (size_t)R(ASN1_STRING_length)(bits)};
    }
    if (ok)
        qsort(sigs, used, sizeof *sigs, cmp_sig);
    for (size_t i = 0; ok && i < used; i++) {
        uint32_t len = (uint32_t)sigs[i].len;
        ok = R(EVP_DigestUpdate)(mdctx, &len, sizeof len) == 1 &&
             R(EVP_DigestUpdate)(mdctx, sigs[i].p, sigs[i].len) == 1;
    }
    ok = ok && R(EVP_DigestFinal_ex)(mdctx, md, NULL) == 1;
    R(X509_STORE_unlock)(store);
    R(EVP_MD_CTX_free)(mdctx);
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

static bool store_fingerprint(X509_STORE *store, const struct algs *algs, unsigned char md[64])
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

void record_sid(struct recorded *r, const unsigned char *sid, unsigned len)
{
    if (r != NULL && len <= sizeof r->sid) {
        memcpy(r->sid, sid, len);
        r->sid_len = len;
        r->sid_set = true;
    }
}

void record_int(struct recorded *r, enum setting which, int value)
{
    if (r == NULL)
        return;
    if (which == SET_PURPOSE) {
        r->purpose = value;
        r->purpose_set = true;
    } else {
        r->trust = value;
        r->trust_set = true;
    }
}

void key_store_changed(X509_STORE *store)
{
    if (store_index < 0 || store == NULL)
        return;
    pthread_mutex_lock(&store_lock);
    struct fingerprint *fp = R(X509_STORE_get_ex_data)(store, store_index);
    if (fp != NULL)
        fp->valid = false;
    pthread_mutex_unlock(&store_lock);
}

void key_store_lookup(X509_STORE *store, int cmd, const char *where)
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

void key_atfork_prepare(void)
{
    pthread_mutex_lock(&store_lock);
}

void key_atfork_parent(void)
{
    pthread_mutex_unlock(&store_lock);
}

void key_atfork_child(void)
{
    pthread_mutex_init(&store_lock, NULL);
}

static void put_store(struct key *k, char tag, X509_STORE *store, const struct algs *algs)
{
    unsigned char md[64];
    if (store == NULL)
        put(k, tag, "", 0);
    else if (store_fingerprint(store, algs, md))
        put(k, tag, md, sizeof md);
    else
        k->len = 0;
    if (store == NULL)
        return;
    /* The store's own parameters join every verification it makes. */
    X509_VERIFY_PARAM *vp = R(X509_STORE_get0_param)(store);
    put_num(k, tag, R(X509_VERIFY_PARAM_get_flags)(vp));
    put_num(k, tag, (uint64_t)(int64_t)R(X509_VERIFY_PARAM_get_depth)(vp));
    put_num(k, tag, R(X509_VERIFY_PARAM_get_hostflags)(vp));
    if (R(X509_STORE_get_verify_cb)(store) != NULL || R(X509_STORE_get_verify)(store) != NULL)
        k->len = 0;
}

/* Where the connection goes: the server name it asks for (SNI) and the
 * port, or, without a name, the peer's address. A memory BIO (Python's
 * asyncio) has no socket: the name alone then, and no key without one. */
static void put_peer(struct key *k, SSL *s)
{
    const char *sni = R(SSL_get_servername)(s, TLSEXT_NAMETYPE_host_name);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd = R(SSL_get_fd)(s);
    bool have = fd >= 0 && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0;
    uint16_t port = 0;
    const void *addr = NULL;
    size_t alen = 0;
    if (have && ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
        port = ntohs(in->sin_port);
        addr = &in->sin_addr;
        alen = sizeof in->sin_addr;
    } else if (have && ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
        port = ntohs(in6->sin6_port);
        addr = &in6->sin6_addr;
        alen = sizeof in6->sin6_addr;
    } else if (have && ss.ss_family == AF_UNIX) {
        addr = ((const struct sockaddr_un *)&ss)->sun_path;
        alen = strnlen(addr, sl - offsetof(struct sockaddr_un, sun_path));
    }
    if (sni != NULL)
        put_str(k, 'n', sni);
    else if (addr != NULL)
        put(k, 'a', addr, alen);
    else
        k->len = 0;
    put_num(k, 'p', port);
    /* The name the store lists the server under, once salted and hashed;
     * without a store, nothing reads it (its formatting cost 2,700
     * instructions a connection). */
    char text[INET6_ADDRSTRLEN] = "";
    if (!store_on())
        k->server[0] = '\0';
    else if (sni != NULL)
        snprintf(k->server, sizeof k->server, "%s:%u", sni, (unsigned)port);
    else if (alen > 0 && ss.ss_family == AF_UNIX)
        snprintf(k->server, sizeof k->server, "%.*s", (int)alen, (const char *)addr);
    else if (addr != NULL && inet_ntop(ss.ss_family, addr, text, sizeof text) != NULL)
        snprintf(k->server, sizeof k->server, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
                 text, (unsigned)port);
    else
        k->server[0] = '\0';
}

static void put_verify_param(struct key *k, SSL *s)
{
    X509_VERIFY_PARAM *vp = R(SSL_get0_param)(s);
    put_num(k, 'f', R(X509_VERIFY_PARAM_get_flags)(vp));
    put_num(k, 'F', R(X509_VERIFY_PARAM_get_hostflags)(vp));
    put_num(k, 'd', (uint64_t)(int64_t)R(X509_VERIFY_PARAM_get_depth)(vp));
    put_num(k, 'l', (uint64_t)(int64_t)R(X509_VERIFY_PARAM_get_auth_level)(vp));
    /* OpenSSL verifies at the connection's security level when the
     * parameters name none. */
    put_num(k, 'L', (uint64_t)(int64_t)R(SSL_get_security_level)(s));
    const char *host;
    for (int i = 0; (host = R(X509_VERIFY_PARAM_get0_host)(vp, i)) != NULL; i++)
        put_str(k, 'h', host);
    put_str(k, 'e', R(X509_VERIFY_PARAM_get0_email)(vp));
    char *ip = R(X509_VERIFY_PARAM_get1_ip_asc)(vp);
    put_str(k, 'i', ip);
    R(CRYPTO_free)(ip, __FILE__, __LINE__);
}

static void put_ciphers(struct key *k, SSL *s)
{
    uint32_t ids[256];
    const OPENSSL_STACK *sk = (const OPENSSL_STACK *)R(SSL_get_ciphers)(s);
    int n = sk != NULL ? R(OPENSSL_sk_num)(sk) : 0;
    if (n > 256) {
        k->len = 0;
        return;
    }
    for (int i = 0; i < n; i++)
        ids[i] = (uint32_t)R(SSL_CIPHER_get_id)(R(OPENSSL_sk_value)(sk, i));
    put(k, 'c', ids, (size_t)n * sizeof *ids);
}

static void put_own_cert(struct key *k, SSL *s, const struct algs *algs)
{
    X509 *cert = R(SSL_get_certificate)(s);
    unsigned char md[SHA_DIGEST_LENGTH];
    unsigned len = 0;
    if (cert == NULL)
        put(k, 'k', "", 0);
    else if (algs != NULL && R(X509_digest)(cert, algs->sha1, md, &len) == 1)
        put(k, 'k', md, len);
    else
        k->len = 0;
}

/* A connection's own setting wins over its context's, as in OpenSSL.
 * Either may be missing (NULL). */
static const struct recorded none;

const struct recorded *recorded_sid(const struct recorded *conn, const struct recorded *ctx)
{
    return conn != NULL && conn->sid_set ? conn : ctx != NULL ? ctx : &none;
}

static void put_usage(struct key *k, const struct recorded *conn, const struct recorded *ctx)
{
    if (ctx == NULL)
        ctx = &none;
    put_num(k, 'u', (uint64_t)(int64_t)(conn != NULL && conn->purpose_set ? conn->purpose
                                                                         : ctx->purpose));
    put_num(k, 't', (uint64_t)(int64_t)(conn != NULL && conn->trust_set ? conn->trust
                                                                       : ctx->trust));
}

static void put_recorded(struct key *k, const struct recorded *conn, const struct recorded *ctx)
{
    const struct recorded *sid = recorded_sid(conn, ctx);
    put(k, 'x', sid->sid, sid->sid_len);
    put_usage(k, conn, ctx);
}

void key_build(SSL *s, const struct recorded *conn, const struct recorded *ctx_rec, struct key *k)
{
    k->len = 1;
    k->reverify = false;
    k->staple = k->judge = false;
    k->bytes[0] = 1; /* format version */
    put_peer(k, s);
    put_num(k, 'v', (uint64_t)R(SSL_version)(s));
    put_num(k, '<', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_MIN_PROTO_VERSION, 0, NULL));
    put_num(k, '>', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_MAX_PROTO_VERSION, 0, NULL));
    put_num(k, 'o', R(SSL_get_options)(s));
    put_num(k, 'm', (uint64_t)R(SSL_get_verify_mode)(s));
    put_num(k, 'D', (uint64_t)(int64_t)R(SSL_get_verify_depth)(s));
    /* A verify callback or a certificate-verify callback can judge by
     * anything (a pinned key, a language runtime's own procedure behind
     * one C trampoline, as in Ruby and Perl): no key can tell two of them
     * apart, so they are not in it. Such a connection is offered a session
     * only after its callbacks accepted the session's server again
     * (reverify.c). A client certificate chosen by callback is unknown
     * until the server asks for one, so such connections never resume.
     * A connection that asks for a stapled OCSP response is shown, on
     * resumption, the staple its session's full handshake received, and
     * its status callback judges that again (ocsp.c); whether it asks is
     * in the key, since a session earned without asking holds no staple.
     * A status callback the shim does not stand in for (one it did not
     * see set) cannot be shown it: no resumption. */
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    enum ocsp_judge judge = ocsp_judge_of(s);
    if (R(SSL_CTX_get_client_cert_cb)(ctx) != NULL || judge == OCSP_UNKNOWN) {
        LOG(LOG_DEBUG, "no resumption: %s callback",
            judge == OCSP_UNKNOWN ? "an unknown OCSP status" : "a client-certificate");
        k->len = 0;
        return;
    }
    k->staple = judge != OCSP_NONE;
    k->judge = judge == OCSP_JUDGED;
    if (k->staple)
        put_num(k, 'O', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_TLSEXT_STATUS_REQ_TYPE, 0, NULL));
    /* Pools of connections whose callbacks are asked again keep the peer
     * chain for them; the others need not. */
    k->reverify = reverify_needed(s, ctx_rec);
    put_num(k, 'J', k->reverify);
    put_verify_param(k, s);
    const struct algs *algs = ctx_algs(ctx);
    put_store(k, 's', R(SSL_CTX_get_cert_store)(ctx), algs);
    X509_STORE *own = NULL;
    R(SSL_ctrl)(s, SSL_CTRL_GET_VERIFY_CERT_STORE, 0, &own);
    put_store(k, 'S', own, algs);
    put_own_cert(k, s, algs);
    put_recorded(k, conn, ctx_rec);
    put_ciphers(k, s);
    k->hash = pool_key_hash(k->bytes, k->len);
}

/* Every certificate the connection can present. OpenSSL picks one per
 * handshake (by the client's signature algorithms) after it decrypted the
 * client's ticket, so the current one alone would differ between issuing
 * a ticket and accepting it. Walking them moves the connection's own
 * current-certificate pointer, which is put back. */
static void put_server_certs(struct key *k, SSL *s, const struct algs *algs)
{
    X509 *current = R(SSL_get_certificate)(s);
    if (current == NULL || R(SSL_get_privatekey)(s) == NULL) {
        put_own_cert(k, s, algs);
        return;
    }
    for (long op = SSL_CERT_SET_FIRST; R(SSL_ctrl)(s, SSL_CTRL_SET_CURRENT_CERT, op, NULL) == 1;
         op = SSL_CERT_SET_NEXT)
        put_own_cert(k, s, algs);
    bool back = false;
    for (long op = SSL_CERT_SET_FIRST;
         !back && R(SSL_ctrl)(s, SSL_CTRL_SET_CURRENT_CERT, op, NULL) == 1;
         op = SSL_CERT_SET_NEXT)
        back = R(SSL_get_certificate)(s) == current;
    if (!back)
        k->len = 0;
}

bool key_server_conf(SSL *s, const struct recorded *conn, const struct recorded *ctx_rec,
                     unsigned char conf[32])
{
    struct key k = {.len = 1};
    k.bytes[0] = 2; /* a server configuration, never equal to a client key */
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    const struct algs *algs = ctx_algs(ctx);
    put_server_certs(&k, s, algs);
    put_num(&k, '<', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_MIN_PROTO_VERSION, 0, NULL));
    put_num(&k, '>', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_MAX_PROTO_VERSION, 0, NULL));
    /* OpenSSL fails a TLS 1.2 resumption outright when the session's
     * extended master secret and the connection's setting disagree. */
    put_num(&k, 'o', R(SSL_get_options)(s) & SSL_OP_NO_EXTENDED_MASTER_SECRET);
    /* It checks a resumed session's cipher against the client's list only. */
    put_ciphers(&k, s);
    const struct recorded *rec = recorded_sid(conn, ctx_rec);
    put(&k, 'x', rec->sid, rec->sid_len);
    int mode = R(SSL_get_verify_mode)(s);
    put_num(&k, 'm', (uint64_t)mode);
    if (mode & SSL_VERIFY_PEER) {
        /* OpenSSL fails a resumption with client verification and no
         * session id context outright, rather than fall back to a full
         * handshake: such a configuration gets no tickets from us. */
        if (rec->sid_len == 0)
            return false;
        /* Whom the server accepts as a client. */
        put_num(&k, 'D', (uint64_t)(int64_t)R(SSL_get_verify_depth)(s));
        put_verify_param(&k, s);
        put_store(&k, 's', R(SSL_CTX_get_cert_store)(ctx), algs);
        X509_STORE *own = NULL;
        R(SSL_ctrl)(s, SSL_CTRL_GET_VERIFY_CERT_STORE, 0, &own);
        put_store(&k, 'S', own, algs);
        put_usage(&k, conn, ctx_rec);
        /* A callback may decide by anything: its argument, the context's
         * app data (tests/policyserver.c). Its context's tickets are its
         * own (struct recorded). */
        if (R(SSL_get_verify_callback)(s) != NULL ||
            (ctx_rec != NULL && ctx_rec->cert_verify_cb != NULL)) {
            if (ctx_rec == NULL)
                return false;
            put(&k, 'I', ctx_rec->identity, sizeof ctx_rec->identity);
        }
    }
    return k.len != 0 && algs_sha256(algs, k.bytes, k.len, conf);
}
