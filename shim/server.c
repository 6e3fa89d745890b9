/* The server mode (RESUMESHIM_SERVER=1). OpenSSL keeps a server's ticket
 * key in its SSL_CTX, made at random when the context is: a server that
 * makes a context per connection (gunicorn's workers call ssl.wrap_socket
 * for each) or per worker can never decrypt its own tickets. The shim
 * gives every server context a ticket-key callback backed by the shared
 * ring (ring.c) from the moment it is made, since the handshake may start
 * inside the first read. A context whose application sets ticket keys or a
 * ticket-key callback of its own is handed back to it (ctx.c, hooks.c).
 *
 * Any failure here is a full handshake: OpenSSL treats 0 as "no ticket"
 * when issuing and "not mine" when accepting. The callback is never made
 * to return -1, which would fail the connection. */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>

#include "shim.h"

static bool keys_into(struct ticket_key *k, unsigned char *iv, EVP_CIPHER_CTX *cipher,
                      EVP_MAC_CTX *mac, bool enc)
{
    static char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, k->mac, sizeof k->mac),
        OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, sizeof digest - 1),
        OSSL_PARAM_END,
    };
    int ok = enc ? R(EVP_EncryptInit_ex)(cipher, R(EVP_aes_256_cbc)(), NULL, k->aes, iv)
                 : R(EVP_DecryptInit_ex)(cipher, R(EVP_aes_256_cbc)(), NULL, k->aes, iv);
    return ok == 1 && R(EVP_MAC_CTX_set_params)(mac, params) == 1;
}

static int issue(const unsigned char conf[32], unsigned char name[16], unsigned char *iv,
                 EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac, struct ticket_key *k)
{
    if (!ring_keys(conf, ring_epoch(time(NULL)), true, k) || R(RAND_bytes)(iv, 16) != 1)
        return 0;
    memcpy(name, k->name, sizeof k->name);
    return keys_into(k, iv, cipher, mac, true) ? 1 : 0;
}

/* 2: accepted, and the client is sent a fresh ticket. A client that uses
 * each ticket once (as the shim's client side does) would otherwise resume
 * only every other connection: OpenSSL sends none after a TLS 1.3
 * resumption that was not asked to renew. */
static int accept_ticket(const unsigned char conf[32], const unsigned char name[16],
                         unsigned char *iv, EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac,
                         struct ticket_key *k)
{
    if (!ring_keys(conf, ring_name_epoch(name), false, k) ||
        memcmp(name, k->name, sizeof k->name) != 0)
        return 0;
    return keys_into(k, iv, cipher, mac, false) ? 2 : 0;
}

static int ticket_key(SSL *s, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *cipher,
                      EVP_MAC_CTX *mac, int enc)
{
    int saved = errno, r = 0;
    unsigned char conf[32];
    struct ticket_key k;
    R(ERR_set_mark)();
    if (key_server_conf(s, conn_recorded_peek(s), ctx_recorded(R(SSL_get_SSL_CTX)(s)), conf))
        r = enc ? issue(conf, name, iv, cipher, mac, &k)
                : accept_ticket(conf, name, iv, cipher, mac, &k);
    if (!enc || r)
        stat_add(enc ? ST_SERVER_ISSUED : r ? ST_SERVER_ACCEPTED : ST_SERVER_REFUSED);
    LOG(LOG_DEBUG, "server: ticket %s", enc ? (r ? "issued" : "not issued")
                                            : (r ? "accepted" : "not accepted"));
    explicit_bzero(&k, sizeof k);
    R(ERR_pop_to_mark)();
    errno = saved;
    return r;
}

void server_install(SSL_CTX *ctx)
{
    ring_prepare();
    R(SSL_CTX_set_tlsext_ticket_key_evp_cb)(ctx, ticket_key);
}

void server_remove(SSL_CTX *ctx)
{
    R(SSL_CTX_set_tlsext_ticket_key_evp_cb)(ctx, NULL);
}
