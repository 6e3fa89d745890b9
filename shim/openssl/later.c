/* What releases after 3.0 added that changes what a connection is
 * (later.h). Each function is looked up under the version that brought it,
 * once; a library without it has no such connections.
 *
 * QUIC (3.2 on; Debian 13's libssl 3.5.9 exports the methods under
 * OPENSSL_3.2.0 and, for the server's, 3.5.0): libssl runs a QUIC
 * connection's handshake on an inner TLS object of the same context
 * (ssl/quic/quic_impl.c, quic_tls.c of 3.5.7), calling SSL_do_handshake,
 * SSL_read, SSL_get_session and SSL_ctrl on it through the PLT while the
 * program holds the QUIC object: neither is the connection the hooks
 * expect.
 *
 * Raw public keys (3.2 on): a client that accepts the server's raw key
 * verifies it against the keys it expects (tls_post_process_server_rpk,
 * ssl/statem/statem_clnt.c of 3.5.7), not a chain, and may present one of
 * its own; the key holds neither. */
#include <pthread.h>

#include "later.h"

typedef int (*cert_type_get)(const SSL *s, unsigned char **t, size_t *len);

static const SSL_METHOD *(*quic[3])(void);
static cert_type_get server_types, client_types;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    /* Before 3.2 there is neither: no lookups, each of which would try
     * every library (a few thousand instructions at a process's first
     * connection). 3.x numbers itself 0xMNN00PP0. */
    if (R(OpenSSL_version_num)() < 0x30200000UL)
        return;
    quic[0] = (const SSL_METHOD *(*)(void))real_since("OSSL_QUIC_client_method", "OPENSSL_3.2.0");
    quic[1] = (const SSL_METHOD *(*)(void))real_since("OSSL_QUIC_client_thread_method",
                                                      "OPENSSL_3.2.0");
    quic[2] = (const SSL_METHOD *(*)(void))real_since("OSSL_QUIC_server_method", "OPENSSL_3.5.0");
    server_types = (cert_type_get)real_since("SSL_get0_server_cert_type", "OPENSSL_3.2.0");
    client_types = (cert_type_get)real_since("SSL_get0_client_cert_type", "OPENSSL_3.2.0");
}

bool later_quic(const SSL_METHOD *m)
{
    pthread_once(&once, resolve);
    for (int i = 0; i < 3; i++)
        if (quic[i] != NULL && quic[i]() == m)
            return true;
    return false;
}

static bool has_types(cert_type_get get, const SSL *s)
{
    unsigned char *t = NULL;
    size_t len = 0;
    return get != NULL && get(s, &t, &len) == 1 && t != NULL && len != 0;
}

bool later_cert_types(const SSL *s)
{
    pthread_once(&once, resolve);
    return has_types(server_types, s) || has_types(client_types, s);
}
