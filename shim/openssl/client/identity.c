/* A client connection's identity (identity.h).
 *
 * Certificates. A connection holds one slot per key type (RSA, RSA-PSS,
 * ECDSA, Ed25519, Ed448, and in 3.5 those of provider signature
 * algorithms), each a certificate, its key and its own chain. In TLS 1.3
 * OpenSSL sends the slot the server's signature algorithms take first,
 * whichever is current (find_sig_alg in ssl/t1_lib.c of 3.0.19 and 3.5.7);
 * in TLS 1.2 the current one only (tls_choose_sigalg: a client skips every
 * other slot). So the key holds each slot, with its chain, and which one is
 * current. Measured on 3.0.19 and 3.5.9 (tests/judge.bats, every
 * certificate slot): a client with ECDSA and RSA slots, the RSA one
 * current, sends the ECDSA one in TLS 1.3 and the RSA one in TLS 1.2.
 *
 * SSL_CERT_SET_FIRST/NEXT visit the slots that hold a certificate and a
 * key, making each current in turn (ssl_cert_set_current, ssl/ssl_cert.c
 * of both), and only those can be sent (ssl_has_cert). The current slot is
 * put back after. It cannot be put back where it holds nothing: but then
 * no slot holds anything, since the current slot moves only to a slot
 * being filled (ssl_set_cert, ssl_set_pkey in ssl/ssl_rsa.c) or to a
 * complete one, starts at an empty table (ssl_cert_new) and keeps its
 * place in a copy (ssl_cert_dup), and slots are emptied all at once
 * (ssl_cert_clear_certs). A current slot with a certificate and no key,
 * or a key and no certificate: the walk could not come back to it, and
 * such a configuration is left alone (no offer).
 *
 * A slot without a chain of its own sends the context's extra chain
 * certificates, or else one built from the chain store, or the context's
 * trust store unless SSL_MODE_NO_AUTO_CHAIN (ssl_add_cert_chain,
 * ssl/statem/statem_lib.c of both): each is in the key (the trust store already is). The
 * certificate flags (strict checking, Suite B) decide whether a slot is
 * fit to send.
 *
 * Which slot the server's algorithms take first is also limited by the
 * client's own (SSL_set1_sigalgs_list, and the client_sigalgs that take
 * their place where set: tls12_get_psigalgs, tls1_set_shared_sigalgs), in
 * the server's order: measured with ECDSA and RSA slots, a client limited
 * to RSA's algorithms sends the RSA one in TLS 1.3. They have no getter,
 * so a client with a certificate whose program set any (noted by the
 * hooks of SSL_ctrl and SSL_CTX_ctrl, settings.h) is offered nothing. The
 * system configuration (openssl.cnf) applied while a context is made is
 * not seen: it is the machine's, the same for every context.
 *
 * SRP. A client sends a user name when its connection has one, copied
 * from its context when the connection is made (ssl_srp_ctx_init_intern,
 * ssl/tls_srp.c of both), and proves the password in the key exchange,
 * which a resumed handshake does not run: a wrong password would resume
 * the right one's session. The password has no getter; the name has
 * (SSL_get_srp_username: the connection's, else its context's, readable
 * before the handshake): any name, no offer. The function is deprecated in
 * 3.0 and absent from a library built without SRP, which has no SRP
 * either: looked up once, by hand.
 *
 * PSK callbacks, the client-certificate callback and certificate
 * callbacks are told apart elsewhere (verdict.c, certcb.c). */
#include <stdint.h>

#include "identity.h"
#include "trust/trust.h"

typedef char *(*srp_user_fn)(SSL *s);

/* Looked up by hand, at set-up (a libssl built without SRP lacks it). */
static srp_user_fn srp_user;

void identity_init(void)
{
    srp_user = (srp_user_fn)real_lookup("SSL_get_srp_username");
}

static bool put_cert(struct key *k, char tag, X509 *x, const struct algs *algs)
{
    unsigned char md[SHA_DIGEST_LENGTH];
    unsigned len = 0;
    if (R(X509_digest)(x, algs->sha1, md, &len) != 1)
        return false;
    key_put(k, tag, md, len);
    return true;
}

static bool put_certs(struct key *k, char tag, const STACK_OF(X509) *sk, const struct algs *algs)
{
    int n = sk != NULL ? R(OPENSSL_sk_num)((const OPENSSL_STACK *)sk) : 0;
    key_put_num(k, tag, (uint64_t)n);
    for (int i = 0; i < n; i++)
        if (!put_cert(k, tag, R(OPENSSL_sk_value)((const OPENSSL_STACK *)sk, i), algs))
            return false;
    return true;
}

/* The private key, which only a full handshake proves (the client's
 * CertificateVerify): one whose public half is the certificate's and whose
 * secret is not fails there. A key that cannot be written out (on a
 * token) cannot be told from another: no resumption. */
static bool put_private(struct key *k, SSL *s, const struct algs *algs)
{
    unsigned char *der = NULL, md[32];
    int len = R(i2d_PrivateKey)(R(SSL_get_privatekey)(s), &der);
    bool ok = len > 0 && algs_sha256(algs, der, (size_t)len, md);
    if (len > 0)
        R(CRYPTO_clear_free)(der, (size_t)len, OPENSSL_FILE, OPENSSL_LINE);
    if (ok)
        key_put(k, 'p', md, sizeof md);
    return ok;
}

/* Each complete slot, its private key, its chain, and which is current;
 * false when one cannot be read or the current slot cannot be put back. */
static bool put_slots(struct key *k, SSL *s, X509 *current, bool which,
                      const struct algs *algs)
{
    bool ok = true;
    long at = 0;
    for (long op = SSL_CERT_SET_FIRST; R(SSL_ctrl)(s, SSL_CTRL_SET_CURRENT_CERT, op, NULL) == 1;
         op = SSL_CERT_SET_NEXT, at++) {
        X509 *x = R(SSL_get_certificate)(s);
        STACK_OF(X509) *chain = NULL;
        R(SSL_ctrl)(s, SSL_CTRL_GET_CHAIN_CERTS, 0, &chain);
        ok = ok && x != NULL && put_cert(k, 'k', x, algs) && put_private(k, s, algs) &&
             put_certs(k, 'h', chain, algs);
        if (which && x == current)
            key_put_num(k, '*', (uint64_t)at);
    }
    bool back = false;
    for (long op = SSL_CERT_SET_FIRST;
         !back && R(SSL_ctrl)(s, SSL_CTRL_SET_CURRENT_CERT, op, NULL) == 1;
         op = SSL_CERT_SET_NEXT)
        back = R(SSL_get_certificate)(s) == current;
    return ok && back;
}

static bool put_chain_sources(struct key *k, SSL *s, const struct algs *algs)
{
    STACK_OF(X509) *extra = NULL;
    R(SSL_CTX_ctrl)(R(SSL_get_SSL_CTX)(s), SSL_CTRL_GET_EXTRA_CHAIN_CERTS, 1, &extra);
    if (!put_certs(k, 'e', extra, algs))
        return false;
    /* mode |= 0: the mode as it is (3.5 hands it to the record layer
     * again, unchanged: ssl/ssl_lib.c of 3.5.7). */
    key_put_num(k, 'n', (uint64_t)(R(SSL_ctrl)(s, SSL_CTRL_MODE, 0, NULL) & SSL_MODE_NO_AUTO_CHAIN));
    /* cert_flags |= 0: the flags as they are. */
    key_put_num(k, 'F', (uint64_t)R(SSL_ctrl)(s, SSL_CTRL_CERT_FLAGS, 0, NULL));
    X509_STORE *chain_store = NULL;
    R(SSL_ctrl)(s, SSL_CTRL_GET_CHAIN_CERT_STORE, 0, &chain_store);
    unsigned char md[64];
    if (chain_store == NULL)
        return true;
    if (!trust_fingerprint(chain_store, algs, md))
        return false;
    key_put(k, 'H', md, sizeof md);
    return true;
}

/* A current slot with a certificate and no key, or a key and no
 * certificate (Tcl's tls package loads the first certificate of the
 * default CA file as its own, and no key), is never sent: OpenSSL sends a
 * slot only with both (ssl_has_cert). Where no slot is complete, the
 * client sends no certificate, as one with none: SSL_CERT_SET_FIRST finds
 * none and leaves the current slot as it was (ssl_cert_set_current, 3.0.19
 * and 3.5.7). Where one is, TLS 1.3 may send it and TLS 1.2 sends none: no
 * resumption, and the half slot is made current again as it was, by
 * setting its own certificate or key once more (ssl_set_cert and
 * ssl_set_pkey make the slot they fill current and change nothing else
 * when it is the same). */
static const char *half_slot(struct key *k, SSL *s, X509 *current, EVP_PKEY *key)
{
    if (R(SSL_ctrl)(s, SSL_CTRL_SET_CURRENT_CERT, SSL_CERT_SET_FIRST, NULL) != 1) {
        key_put(k, 'k', "", 0);
        return NULL;
    }
    if (current != NULL)
        R(SSL_use_certificate)(s, current);
    else
        R(SSL_use_PrivateKey)(s, key);
    return "a current certificate slot without its certificate or key, beside a complete one";
}

const char *identity_put(struct key *k, SSL *s, const struct algs *algs, bool sigalgs,
                         bool which)
{
    if (srp_user != NULL && srp_user(s) != NULL)
        return "an SRP user name";
    X509 *current = R(SSL_get_certificate)(s);
    EVP_PKEY *key = R(SSL_get_privatekey)(s);
    bool has_key = key != NULL;
    if (current == NULL && !has_key) {
        key_put(k, 'k', "", 0);
        return NULL;
    }
    if (current == NULL || !has_key)
        return half_slot(k, s, current, key);
    if (sigalgs)
        return "signature algorithms of the program's own, with a certificate";
    if (algs == NULL || !put_slots(k, s, current, which, algs) || !put_chain_sources(k, s, algs))
        return "a certificate that cannot be read";
    return NULL;
}
