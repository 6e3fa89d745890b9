/* The cache key's contents, read off OpenSSL objects (verdict.h). Content,
 * not pointers: a program that builds a fresh SSL_CTX for every connection
 * (Python's urllib) still finds its sessions. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "ctx.h"
#include "endpoint.h"
#include "identity.h"
#include "log.h"
#include "judge/ocsp.h"
#include "session.h"
#include "trust/trust.h"
#include "verdict.h"
#include "later.h"
#include "verified.h"

/* Whether any verify parameters of the process were given an address to
 * check. X509_VERIFY_PARAM_set1_ip and _set1_ip_asc are the only ways an
 * address gets into parameters (a copy of parameters copies one that one
 * of them set: crypto/x509/x509_vpm.c of OpenSSL 3.0.20 and 3.5.7), and
 * libssl's SSL_set1_host and SSL_add1_host call them through its PLT
 * (objdump -d of 3.0.19 and 3.5.9). Until one is called, no parameters
 * hold an address, and asking (X509_VERIFY_PARAM_get1_ip_asc raises an
 * error where there is none: 1,100 instructions, twice a connection) is
 * left out; the key is the same. */
static atomic_bool ip_given;

void verdict_ip_given(void)
{
    atomic_store_explicit(&ip_given, true, memory_order_release);
}

static char *ip_of(X509_VERIFY_PARAM *vp)
{
    if (!atomic_load_explicit(&ip_given, memory_order_acquire) &&
        feature_on(FEATURE_OPENSSL_IP_SET))
        return NULL;
    return R(X509_VERIFY_PARAM_get1_ip_asc)(vp);
}

static void put_param(struct key *k, char tag, X509_VERIFY_PARAM *vp)
{
    key_put_num(k, tag, R(X509_VERIFY_PARAM_get_flags)(vp));
    key_put_num(k, tag, R(X509_VERIFY_PARAM_get_hostflags)(vp));
    key_put_num(k, tag, (uint64_t)(int64_t)R(X509_VERIFY_PARAM_get_depth)(vp));
    key_put_num(k, tag, (uint64_t)(int64_t)R(X509_VERIFY_PARAM_get_auth_level)(vp));
    const char *host;
    for (int i = 0; (host = R(X509_VERIFY_PARAM_get0_host)(vp, i)) != NULL; i++)
        key_put_str(k, tag, host);
    key_put_str(k, tag, R(X509_VERIFY_PARAM_get0_email)(vp));
    char *ip = ip_of(vp);
    key_put_str(k, tag, ip);
    R(CRYPTO_free)(ip, __FILE__, __LINE__);
    if (R(X509_VERIFY_PARAM_get_flags)(vp) & X509_V_FLAG_USE_CHECK_TIME)
        key_put_num(k, tag, (uint64_t)(int64_t)R(X509_VERIFY_PARAM_get_time)(vp));
}

static void put_store(struct key *k, char tag, X509_STORE *store, const struct algs *algs)
{
    unsigned char md[64];
    if (store == NULL)
        key_put(k, tag, "", 0);
    else if (trust_fingerprint(store, algs, md))
        key_put(k, tag, md, sizeof md);
    else
        key_fail(k);
    if (store == NULL)
        return;
    /* The store's own parameters join every verification it makes. */
    put_param(k, tag, R(X509_STORE_get0_param)(store));
    if (R(X509_STORE_get_verify_cb)(store) != NULL || R(X509_STORE_get_verify)(store) != NULL)
        key_fail(k);
}

static void put_verify_param(struct key *k, SSL *s)
{
    put_param(k, 'p', R(SSL_get0_param)(s));
    /* OpenSSL verifies at the connection's security level when the
     * parameters name none. */
    key_put_num(k, 'L', (uint64_t)(int64_t)R(SSL_get_security_level)(s));
}

static void put_ciphers(struct key *k, SSL *s)
{
    uint32_t ids[256];
    const OPENSSL_STACK *sk = (const OPENSSL_STACK *)R(SSL_get_ciphers)(s);
    int n = sk != NULL ? R(OPENSSL_sk_num)(sk) : 0;
    if (n > 256) {
        key_fail(k);
        return;
    }
    /* (looked up once for the list's 60 entries, not twice an entry) */
    __typeof__(ossl_OPENSSL_sk_value) value = R(OPENSSL_sk_value);
    __typeof__(ossl_SSL_CIPHER_get_id) id = R(SSL_CIPHER_get_id);
    for (int i = 0; i < n; i++)
        ids[i] = (uint32_t)id(value(sk, i));
    key_put(k, 'c', ids, (size_t)n * sizeof *ids);
}

static void put_own_cert(struct key *k, SSL *s, const struct algs *algs)
{
    X509 *cert = R(SSL_get_certificate)(s);
    unsigned char md[SHA_DIGEST_LENGTH];
    unsigned len = 0;
    if (cert == NULL)
        key_put(k, 'k', "", 0);
    else if (algs != NULL && R(X509_digest)(cert, algs->sha1, md, &len) == 1)
        key_put(k, 'k', md, len);
    else
        key_fail(k);
}

/* A connection's own setting wins over its context's, as in OpenSSL.
 * Either may be missing (NULL). */
static void put_usage(struct key *k, const struct recorded *conn, const struct recorded *ctx)
{
    static const struct recorded none;
    if (ctx == NULL)
        ctx = &none;
    key_put_num(k, 'u', (uint64_t)(int64_t)(conn != NULL && conn->purpose_set ? conn->purpose
                                                                         : ctx->purpose));
    key_put_num(k, 't', (uint64_t)(int64_t)(conn != NULL && conn->trust_set ? conn->trust
                                                                       : ctx->trust));
}

static void put_recorded(struct key *k, const struct recorded *conn, const struct recorded *ctx)
{
    const struct recorded *sid = recorded_sid(conn, ctx);
    key_put(k, 'x', sid->sid, sid->sid_len);
    put_usage(k, conn, ctx);
    /* Sessions of connections whose certificate callback is watched hold
     * no client certificate (connkeep.c keeps none earned where it ran), and
     * are offered only to such connections: elsewhere a session may hold
     * one. */
    key_put_num(k, 'b', conn != NULL && conn->cert_fn != NULL);
}

/* What the judge cannot run again on a resumed connection, or cannot see
 * in the key. Certificate Transparency: libssl validates SCTs only with
 * the chain it verified in this handshake (ssl_validate_ct, ssl/ssl_lib.c,
 * returns early without one), and a resumed connection has neither that
 * chain nor the SCTs of the TLS extension or the staple. A callback that
 * chooses the client's PSK: no judgment of the server can tell whom the
 * client would have been (the server saw the first connection's
 * identity), and a PSK authenticates the server by a key the program
 * chooses, which no chain stands for. A security callback other than
 * OpenSSL's own answers checks a resumed handshake never makes (the
 * client's own leaf key, SSL_SECOP_EE_KEY; the server's signature
 * algorithm, SSL_SECOP_SIGALG_CHECK) by anything it likes, so no key holds
 * it; a NULL one is called unchecked by ssl_security (ssl/ssl_cert.c of
 * 3.0.19 and 3.5.7), and its full handshake fails as without the shim. */
static const char *unjudgeable(SSL *s, const struct recorded *conn, const struct recorded *ctx)
{
    if (R(SSL_ct_is_enabled)(s))
        return "Certificate Transparency";
    if (R(SSL_get_security_callback)(s) != ctx_default_sec_cb())
        return "a security callback";
    if ((conn != NULL && conn->identity_cb) || (ctx != NULL && ctx->identity_cb))
        return "a callback choosing the client's PSK";
    return NULL;
}

void verdict_key(SSL *s, const struct recorded *conn, const struct ctx_parts *parts, bool listed,
                 struct key *k)
{
    const struct recorded *ctx_rec = parts->rec;
    const struct algs *algs = parts->algs;
    key_begin(k, &ossl_ops, KEY_OPENSSL_CLIENT);
    /* SSL_get_fd finds a descriptor BIO anywhere in the read BIO's chain
     * (BIO_find_type, ssl/ssl_lib.c of 3.0 and 3.5); a BIO of the
     * program's own hides it (endpoint.c). */
    int fd = R(SSL_get_fd)(s);
    key_put_peer(k, R(SSL_get_servername)(s, TLSEXT_NAMETYPE_host_name),
                 fd >= 0 ? fd : endpoint_fresh_socket(), listed);
    key_put_num(k, 'v', (uint64_t)R(SSL_version)(s));
    key_put_num(k, '<', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_MIN_PROTO_VERSION, 0, NULL));
    key_put_num(k, '>', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_MAX_PROTO_VERSION, 0, NULL));
    key_put_num(k, 'o', R(SSL_get_options)(s));
    key_put_num(k, 'm', (uint64_t)R(SSL_get_verify_mode)(s));
    key_put_num(k, 'D', (uint64_t)(int64_t)R(SSL_get_verify_depth)(s));
    /* A verify callback or a certificate-verify callback can judge by
     * anything (a pinned key, a language runtime's own procedure behind
     * one C trampoline, as in Ruby and Perl): no key can tell two of them
     * apart, so they are not in it; the judge asks them again at the end
     * of every resumed handshake (judge.c), as a full handshake would. A
     * certificate callback runs only when the server asks for a
     * certificate (certcb.c): sessions are kept only where it did not run.
     * The older client-certificate callback is not watched: no resumption;
     * nor is a client-certificate engine, which libssl asks first.
     * A connection that asks for a stapled OCSP response is shown, on
     * resumption, the staple its session's full handshake received, and
     * its status callback judges that again (ocsp.c); whether it asks is
     * in the key, since a session earned without asking holds no staple.
     * A status callback the shim does not stand in for (one it did not
     * see set) cannot be shown it: no resumption. Nor can a raw public
     * key's verdict or identity, where the connection names certificate
     * types (later.c). */
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    enum ocsp_judge judge = ocsp_judge_of(s);
    const char *unjudged = R(SSL_CTX_get_client_cert_cb)(ctx) != NULL ? "a client-certificate callback"
                           : ctx_rec != NULL && ctx_rec->engine      ? "a client-certificate engine"
                           : judge == OCSP_UNKNOWN                   ? "an unknown OCSP status callback"
                           : later_cert_types(s)                     ? "raw public keys"
                                                                     : unjudgeable(s, conn, ctx_rec);
    if (unjudged != NULL) {
        LOG(LOG_DEBUG, "no resumption: %s", unjudged);
        key_fail(k);
        return;
    }
    k->staple = judge != OCSP_NONE;
    k->judge = judge == OCSP_JUDGED;
    if (k->staple)
        key_put_num(k, 'O', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_TLSEXT_STATUS_REQ_TYPE, 0, NULL));
    put_verify_param(k, s);
    /* X509_verify checks a certificate in the library context the
     * certificate was made in, and a kept chain's were made in the earning
     * connection's: a session earned in one library context is not offered
     * in another. A library context has no content to name it by, so an
     * application's own is named by its address (memory only, in effect;
     * the judge decodes the chain again in it). */
    if (algs != NULL && (algs->libctx != NULL || algs->propq != NULL)) {
        key_put(k, 'C', &algs->libctx, sizeof algs->libctx);
        key_put_str(k, 'q', algs->propq);
    }
    put_store(k, 's', R(SSL_CTX_get_cert_store)(ctx), algs);
    X509_STORE *own = NULL;
    R(SSL_ctrl)(s, SSL_CTRL_GET_VERIFY_CERT_STORE, 0, &own);
    put_store(k, 'S', own, algs);
    const char *unknown = identity_put(k, s, algs,
                                       (conn != NULL && conn->sigalgs) ||
                                           (ctx_rec != NULL && ctx_rec->sigalgs),
                                       true);
    if (unknown != NULL) {
        LOG(LOG_DEBUG, "no resumption: %s", unknown);
        key_fail(k);
        return;
    }
    put_recorded(k, conn, ctx_rec);
    put_ciphers(k, s);
    key_end(k);
}

bool verdict_identity(SSL *s, const struct ctx_parts *ctx, unsigned char out[32])
{
    /* (a key only as a buffer: 2 kB on the stack) */
    struct key k;
    key_begin(&k, &ossl_ops, KEY_OPENSSL_CLIENT);
    if (identity_put(&k, s, ctx->algs, false, false) != NULL || k.len == 0)
        return false;
    /* A client without a certificate is a few bytes, kept as they are
     * (its length first): a digest would cost more than the rest. */
    if (k.len < 32) {
        memset(out, 0, 32);
        out[0] = (unsigned char)k.len;
        memcpy(out + 1, k.bytes, k.len);
        return true;
    }
    return algs_sha256(ctx->algs, k.bytes, k.len, out);
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
        key_fail(k);
}

bool verdict_server_conf(SSL *s, const struct recorded *conn, const struct ctx_parts *parts,
                         unsigned char conf[32])
{
    struct key k;
    key_begin(&k, &ossl_ops, KEY_OPENSSL_SERVER);
    SSL_CTX *ctx = R(SSL_get_SSL_CTX)(s);
    const struct recorded *ctx_rec = parts->rec;
    const struct algs *algs = parts->algs;
    put_server_certs(&k, s, algs);
    key_put_num(&k, '<', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_MIN_PROTO_VERSION, 0, NULL));
    key_put_num(&k, '>', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_GET_MAX_PROTO_VERSION, 0, NULL));
    /* OpenSSL fails a TLS 1.2 resumption outright when the session's
     * extended master secret and the connection's setting disagree. */
    key_put_num(&k, 'o', R(SSL_get_options)(s) & SSL_OP_NO_EXTENDED_MASTER_SECRET);
    /* It checks a resumed session's cipher against the client's list only. */
    put_ciphers(&k, s);
    const struct recorded *rec = recorded_sid(conn, ctx_rec);
    key_put(&k, 'x', rec->sid, rec->sid_len);
    int mode = R(SSL_get_verify_mode)(s);
    key_put_num(&k, 'm', (uint64_t)mode);
    /* A name callback may move the connection to another context, whose
     * client verification then decides; which one depends on code the
     * shim cannot read (a table per listener, the local port), and it runs
     * after the ticket is decrypted, while this fingerprint is taken where
     * the handshake starts. Such a context's tickets are its own, as with
     * OpenSSL's per-context keys: two listeners alike at the start no
     * longer share them (tests/policyserver.c --switch name). A ClientHello
     * callback runs before the ticket is decrypted: the context it leaves
     * the connection on judges the ticket's client then (server.c). */
    /* A certificate callback runs in a full handshake only, and may
     * change the connection's client verification in ways no getter shows
     * (SSL_set_verify with a callback, a verify store, a host to check):
     * its context's tickets are its own too. */
    bool by_name = ctx_rec != NULL &&
                   (ctx_rec->name_cb || ctx_rec->identity_cb ||
                    (conn != NULL && (conn->identity_cb || conn->cert_fn != NULL)));
    if (by_name)
        key_put(&k, 'I', ctx_rec->identity, sizeof ctx_rec->identity);
    if (mode & SSL_VERIFY_PEER) {
        /* OpenSSL fails a resumption with client verification and no
         * session id context outright, rather than fall back to a full
         * handshake: such a configuration gets no tickets from us. */
        if (rec->sid_len == 0)
            return false;
        /* Whom the server accepts as a client. */
        key_put_num(&k, 'D', (uint64_t)(int64_t)R(SSL_get_verify_depth)(s));
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
            (ctx_rec != NULL && ctx_rec->cert_verify_cb != NULL) ||
            trust_runs_code(R(SSL_CTX_get_cert_store)(ctx)) || trust_runs_code(own)) {
            if (ctx_rec == NULL)
                return false;
            if (!by_name)
                key_put(&k, 'I', ctx_rec->identity, sizeof ctx_rec->identity);
        }
    }
    return k.len != 0 && algs_sha256(algs, k.bytes, k.len, conf);
}
