/* What the shim keeps of keys (shim/openssl/judge/keyfacts.c) only while
 * its judge verifies a chain with no code of the program's own; nothing of
 * the keys a handshake or a program asks about.
 *   keyfactcheck PORT CA NAMED.pem EXPLICIT.pem RSA.pem
 * First, from its verify callback inside a full handshake, the program
 * asks what a verification asks (EVP_PKEY_is_a, the explicit-parameters
 * flag) of keys freed and made again, which the allocator tends to place
 * where the last one was: an EC key of a named curve, one decoded from
 * explicit parameters, an RSA key, ROUNDS times each from their PEM files;
 * the answers must be libcrypto's own (asked before the handshake). Then a
 * TLS 1.3 connection with a finite-field group, whose handshake asks
 * EVP_PKEY_is_a(its own key share, "DH"): that private key, marked with
 * ex_data, must be freed with the connection. Prints what differs, the
 * counts and freed=1; exits 1 on any difference. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#define ROUNDS 200

static const char *files[3];
static const char *names[] = {"EC", "RSA", "id-ecPublicKey", "rsaEncryption"};
#define N_NAMES (sizeof names / sizeof names[0])

/* Each key's answers: is_a for each name, then the explicit flag and the
 * call's own result. */
struct answers {
    int is_a[N_NAMES];
    int explicit_ok, explicit;
};

static struct answers truth[3];
static int asked, differed, done, freed;

static void on_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    if (ptr != NULL)
        freed++;
}

static EVP_PKEY *load(const char *file)
{
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return NULL;
    EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    return k;
}

static int ask(int which, struct answers *a)
{
    EVP_PKEY *k = load(files[which]);
    if (k == NULL)
        return 0;
    for (size_t i = 0; i < N_NAMES; i++)
        a->is_a[i] = EVP_PKEY_is_a(k, names[i]);
    a->explicit = -1;
    a->explicit_ok =
        EVP_PKEY_get_int_param(k, OSSL_PKEY_PARAM_EC_DECODED_FROM_EXPLICIT_PARAMS, &a->explicit);
    EVP_PKEY_free(k);
    ERR_clear_error();
    return 1;
}

static int verify_cb(int ok, X509_STORE_CTX *xs)
{
    (void)xs;
    if (done)
        return ok;
    done = 1;
    for (int r = 0; r < ROUNDS; r++)
        for (int w = 0; w < 3; w++) {
            struct answers a;
            if (!ask(w, &a)) {
                printf("cannot read %s\n", files[w]);
                differed++;
                continue;
            }
            asked++;
            if (memcmp(&a, &truth[w], sizeof a) != 0) {
                if (differed++ < 5)
                    printf("round %d, %s: is_a %d%d%d%d explicit %d/%d, libcrypto %d%d%d%d %d/%d\n",
                           r, files[w], a.is_a[0], a.is_a[1], a.is_a[2], a.is_a[3],
                           a.explicit_ok, a.explicit, truth[w].is_a[0], truth[w].is_a[1],
                           truth[w].is_a[2], truth[w].is_a[3], truth[w].explicit_ok,
                           truth[w].explicit);
            }
        }
    return ok;
}

static int tcp(const char *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* One connection of ctx to PORT; with mark, its key share marked by ex_data
 * index idx. 1 when it connected. */
static int one(SSL_CTX *ctx, const char *port, int idx)
{
    int fd = tcp(port), ok = 0;
    SSL *s = fd >= 0 ? SSL_new(ctx) : NULL;
    if (s != NULL) {
        SSL_set_fd(s, fd);
        SSL_set_tlsext_host_name(s, "localhost");
        ok = SSL_connect(s) == 1;
        EVP_PKEY *own = NULL;
        static int mark = 1;
        if (ok && idx >= 0)
            ok = SSL_get_tmp_key(s, &own) == 1 && EVP_PKEY_set_ex_data(own, idx, &mark) == 1;
        EVP_PKEY_free(own);
        SSL_shutdown(s);
    }
    SSL_free(s);
    if (fd >= 0)
        close(fd);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: keyfactcheck PORT CA NAMED.pem EXPLICIT.pem RSA.pem\n");
        return 2;
    }
    for (int w = 0; w < 3; w++) {
        files[w] = argv[3 + w];
        memset(&truth[w], 0, sizeof truth[w]);
        if (!ask(w, &truth[w])) {
            printf("cannot read %s\n", files[w]);
            return 2;
        }
    }
    /* the three keys must tell the answers apart */
    if (truth[0].explicit != 0 || truth[1].explicit != 1 || truth[2].is_a[1] != 1 ||
        truth[0].is_a[0] != 1) {
        printf("the keys are not what they should be\n");
        return 2;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || SSL_CTX_load_verify_locations(ctx, argv[2], NULL) != 1)
        return 2;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_cb);
    int ok = one(ctx, argv[1], -1);
    SSL_CTX_free(ctx);
    if (!ok || !done) {
        printf("no handshake\n");
        return 2;
    }
    int idx = CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_EVP_PKEY, 0, NULL, NULL, NULL, on_free);
    ctx = SSL_CTX_new(TLS_client_method());
    if (idx < 0 || ctx == NULL || SSL_CTX_load_verify_locations(ctx, argv[2], NULL) != 1 ||
        SSL_CTX_set1_groups_list(ctx, "ffdhe2048") != 1 ||
        SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1)
        return 2;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    ok = one(ctx, argv[1], idx);
    SSL_CTX_free(ctx);
    if (!ok) {
        printf("no finite-field handshake\n");
        return 2;
    }
    printf("asked=%d differed=%d freed=%d\n", asked, differed, freed);
    return differed != 0 || freed != 1;
}
