/* What a verification asks of keys, asked inside a handshake (where the
 * shim keeps the answers: shim/openssl/judge/keyfacts.c) of keys freed
 * and made again, which the allocator tends to place where the last one
 * was: an EC key of a named curve, one decoded from explicit parameters,
 * an RSA key, ROUNDS times each from their PEM files.
 *   keyfactcheck PORT CA NAMED.pem EXPLICIT.pem RSA.pem
 * connects to 127.0.0.1:PORT trusting CA, asks from the verify callback,
 * and prints the answers that differ from libcrypto's own (asked before
 * the handshake, with no memory of them) and a count; exits 1 on any. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/core_names.h>
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
static int asked, differed, done;

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
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        return 2;
    SSL *s = SSL_new(ctx);
    SSL_set_fd(s, fd);
    SSL_set_tlsext_host_name(s, "localhost");
    int ok = SSL_connect(s) == 1;
    SSL_shutdown(s);
    SSL_free(s);
    close(fd);
    SSL_CTX_free(ctx);
    if (!ok || !done) {
        printf("no handshake\n");
        return 2;
    }
    printf("asked=%d differed=%d\n", asked, differed);
    return differed != 0;
}
