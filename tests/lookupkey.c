/* Whether a key the program's own X509_LOOKUP method makes and frees while
 * the store looks for an issuer is freed. The lookup is no store function
 * (X509_STORE_set_*), so the judge's verification of a resumed connection
 * could keep key facts around it; the lookup asks its key EVP_PKEY_is_a and
 * "decoded-from-explicit" there, frees it and counts the free by ex_data.
 *   lookupkey PORT CA [N [noask|share|purpose [PORT2]]]
 * N connections (default 3) made in one context, the CA given only by the
 * lookup (noask: the lookup asks its key nothing; share: instead of making
 * a key, the lookup makes a TLS 1.3 ffdhe2048 connection of its own and
 * counts that connection's key share, to PORT2, a server of its own;
 * purpose: no lookup, the CA loaded from its file, and the key made and
 * asked about by a check of the "SSL server" purpose put in place of
 * libcrypto's with X509_PURPOSE_add, which then runs libcrypto's). Prints
 * made=M freed=F resumed=R; exits 1 when F != M. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connect.h"

#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static int idx, made, freed, ask = 1, share, port;
static const char *cafile;
static X509 *ca;

static void on_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int i, long argl, void *argp)
{
    (void)parent, (void)ad, (void)i, (void)argl, (void)argp;
    if (ptr != NULL)
        freed++;
}

/* A connection of the lookup's own (TLS 1.3, ffdhe2048): its key share,
 * marked, counted as made. */
static void inner(void)
{
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    if (c == NULL || SSL_CTX_load_verify_locations(c, cafile, NULL) != 1 ||
        SSL_CTX_set1_groups_list(c, "ffdhe2048") != 1)
        return;
    SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION);
    SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
    int fd = tcp(port);
    if (fd < 0)
        return;
    SSL *s = SSL_new(c);
    SSL_set_fd(s, fd);
    SSL_set_tlsext_host_name(s, "localhost");
    EVP_PKEY *own = NULL;
    if (SSL_connect(s) == 1 && SSL_get_tmp_key(s, &own) == 1 && own != NULL) {
        static int mark = 1;
        EVP_PKEY_set_ex_data(own, idx, &mark);
        made++;
        EVP_PKEY_free(own);
    }
    SSL_shutdown(s);
    SSL_free(s);
    close(fd);
    SSL_CTX_free(c);
}

static void make_key(void)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (k != NULL) {
        static int mark = 1;
        EVP_PKEY_set_ex_data(k, idx, &mark);
        made++;
        int v = -1;
        if (ask) {
            EVP_PKEY_is_a(k, "EC");
            EVP_PKEY_get_int_param(k, OSSL_PKEY_PARAM_EC_DECODED_FROM_EXPLICIT_PARAMS, &v);
        }
        EVP_PKEY_free(k);
    }
}

static int by_subject(X509_LOOKUP *lu, X509_LOOKUP_TYPE type, const X509_NAME *name,
                      X509_OBJECT *ret)
{
    (void)lu;
    if (type != X509_LU_X509 || X509_NAME_cmp(name, X509_get_subject_name(ca)) != 0)
        return 0;
    if (share)
        inner();
    else
        make_key();
    return X509_OBJECT_set1_X509(ret, ca);
}

static int (*libcrypto_check)(const X509_PURPOSE *, const X509 *, int);

static int purpose_check(const X509_PURPOSE *p, const X509 *x, int is_ca)
{
    make_key();
    return libcrypto_check(p, x, is_ca);
}

/* The "SSL server" purpose's check replaced by purpose_check. */
static int own_purpose(void)
{
    int i = X509_PURPOSE_get_by_id(X509_PURPOSE_SSL_SERVER);
    X509_PURPOSE *p = i >= 0 ? X509_PURPOSE_get0(i) : NULL;
    if (p == NULL)
        return 0;
    libcrypto_check = p->check_purpose;
    return X509_PURPOSE_add(X509_PURPOSE_SSL_SERVER, p->trust, 0, purpose_check,
                            X509_PURPOSE_get0_name(p), X509_PURPOSE_get0_sname(p), NULL) == 1;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    int n = argc > 3 ? atoi(argv[3]) : 3, resumed = 0;
    ask = !(argc > 4 && strcmp(argv[4], "noask") == 0);
    share = argc > 4 && strcmp(argv[4], "share") == 0;
    int purpose = argc > 4 && strcmp(argv[4], "purpose") == 0;
    port = atoi(argc > 5 ? argv[5] : argv[1]);
    cafile = argv[2];
    idx = CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_EVP_PKEY, 0, NULL, NULL, NULL, on_free);
    FILE *f = fopen(argv[2], "r");
    if (f == NULL || (ca = PEM_read_X509(f, NULL, NULL, NULL)) == NULL)
        return 2;
    fclose(f);
    X509_LOOKUP_METHOD *m = X509_LOOKUP_meth_new("mine");
    X509_LOOKUP_meth_set_get_by_subject(m, by_subject);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (idx < 0 || ctx == NULL)
        return 2;
    if (purpose ? !own_purpose() || SSL_CTX_load_verify_locations(ctx, cafile, NULL) != 1
                : X509_STORE_add_lookup(SSL_CTX_get_cert_store(ctx), m) == NULL)
        return 2;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    for (int i = 0; i < n; i++) {
        int fd = tcp(atoi(argv[1]));
        if (fd < 0)
            return 2;
        SSL *s = SSL_new(ctx);
        SSL_set_fd(s, fd);
        SSL_set_tlsext_host_name(s, "localhost");
        SSL_set1_host(s, "localhost");
        int r = SSL_connect(s);
        if (r == 1) {
            char buf[1];
            SSL_write(s, "x", 1);
            SSL_read(s, buf, 1); /* tickets */
            resumed += SSL_session_reused(s);
        } else {
            printf("connect %d failed verify=%ld\n", i, SSL_get_verify_result(s));
        }
        SSL_shutdown(s);
        SSL_free(s);
        close(fd);
    }
    SSL_CTX_free(ctx);
    X509_free(ca);
    X509_LOOKUP_meth_free(m);
    printf("made=%d freed=%d resumed=%d\n", made, freed, resumed);
    return freed == made ? 0 : 1;
}
