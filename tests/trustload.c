/*
 * trustload: drives an X509_STORE through a script given as arguments and
 * prints what OpenSSL answers at each step, so that a run under the shim
 * can be compared line by line with a run without it.
 *
 *   new                  a new SSL_CTX; its store is the current one
 *   load FILE            SSL_CTX_load_verify_locations(ctx, FILE, NULL)
 *   loadfile FILE        X509_STORE_load_file(store, FILE)
 *   defaults             SSL_CTX_set_default_verify_paths
 *   add PEM              X509_STORE_add_cert of the file's first certificate
 *   addcrl PEM           X509_STORE_add_crl of the file's first CRL
 *   verify LEAF [CHAIN] [crl|sslserver|crl+sslserver]
 *                        X509_verify_cert: result, error, the chain built
 *   certs PEM            X509_STORE_CTX_get1_certs for the file's first
 *                        certificate's subject: the candidates, in order
 *   crls PEM             X509_STORE_CTX_get1_crls for its subject
 *   issuer PEM           X509_STORE_CTX_get1_issuer of that certificate
 *   list                 X509_STORE_get0_objects, in order
 *   all                  X509_STORE_get1_all_certs, in order
 *   copy SRC DST         replaces DST by SRC's bytes (rename)
 *   rm FILE              removes FILE
 *   threads N LEAF CHAIN N threads verify at once on the current store
 *   fork LEAF CHAIN      a child verifies and lists, then the parent does
 *
 * Every step prints its results and the error queue it left (which it
 * then clears), certificates by their subject and SHA-256 fingerprint.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

static void errors(const char *step)
{
    unsigned long e;
    const char *file, *func, *data;
    int line, flags;
    while ((e = ERR_get_error_all(&file, &line, &func, &data, &flags)) != 0)
        printf("  %s error: %s | %s:%d %s [%s]\n", step, ERR_error_string(e, NULL), file, line,
               func, flags & ERR_TXT_STRING ? data : "");
}

static void name_of(X509 *x)
{
    unsigned char md[32];
    unsigned int n = 0;
    char *s = X509_NAME_oneline(X509_get_subject_name(x), NULL, 0);
    X509_digest(x, EVP_sha256(), md, &n);
    printf("%s ", s);
    for (unsigned i = 0; i < 6 && i < n; i++)
        printf("%02x", md[i]);
    int trust = X509_check_trust(x, NID_server_auth, 0);
    printf(" trust=%d", trust);
    OPENSSL_free(s);
}

static X509 *read_cert(const char *f)
{
    FILE *fp = fopen(f, "r");
    X509 *x = fp ? PEM_read_X509_AUX(fp, NULL, NULL, NULL) : NULL;
    if (fp)
        fclose(fp);
    if (x == NULL) {
        fprintf(stderr, "trustload: no certificate in %s\n", f);
        exit(2);
    }
    return x;
}

static STACK_OF(X509) *read_chain(const char *f)
{
    STACK_OF(X509) *sk = sk_X509_new_null();
    FILE *fp = fopen(f, "r");
    X509 *x;
    while (fp && (x = PEM_read_X509(fp, NULL, NULL, NULL)) != NULL)
        sk_X509_push(sk, x);
    if (fp)
        fclose(fp);
    ERR_clear_error();
    return sk;
}

static X509_STORE *store;

static char *verify_line(const char *leaf_f, const char *chain_f, const char *how)
{
    X509 *leaf = read_cert(leaf_f);
    STACK_OF(X509) *chain = chain_f && strcmp(chain_f, "-") ? read_chain(chain_f) : NULL;
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, leaf, chain);
    if (how && strstr(how, "crl"))
        X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_CRL_CHECK);
    if (how && strstr(how, "sslserver"))
        X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
    int r = X509_verify_cert(ctx);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    fprintf(m, "verify %s: %d error %d depth %d chain", leaf_f, r, X509_STORE_CTX_get_error(ctx),
            X509_STORE_CTX_get_error_depth(ctx));
    STACK_OF(X509) *got = X509_STORE_CTX_get0_chain(ctx);
    for (int i = 0; i < sk_X509_num(got); i++) {
        unsigned char md[32];
        unsigned int n = 0;
        X509_digest(sk_X509_value(got, i), EVP_sha256(), md, &n);
        fprintf(m, " %02x%02x%02x", md[0], md[1], md[2]);
    }
    fclose(m);
    X509_STORE_CTX_free(ctx);
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    return buf;
}

static void list_objects(void)
{
    STACK_OF(X509_OBJECT) *objs = X509_STORE_get0_objects(store);
    printf("list: %d objects\n", sk_X509_OBJECT_num(objs));
    for (int i = 0; i < sk_X509_OBJECT_num(objs); i++) {
        X509_OBJECT *o = sk_X509_OBJECT_value(objs, i);
        if (X509_OBJECT_get_type(o) == X509_LU_X509) {
            printf("  cert ");
            name_of(X509_OBJECT_get0_X509(o));
            printf("\n");
        } else if (X509_OBJECT_get_type(o) == X509_LU_CRL) {
            char *s = X509_NAME_oneline(X509_CRL_get_issuer(X509_OBJECT_get0_X509_CRL(o)), NULL, 0);
            printf("  crl %s\n", s);
            OPENSSL_free(s);
        }
    }
}

struct job {
    const char *leaf, *chain;
    char *line;
};

static void *verify_thread(void *arg)
{
    struct job *j = arg;
    j->line = verify_line(j->leaf, j->chain, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    SSL_CTX *ctx = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        const char *cmd = argv[i];
        const char *a = i + 1 < argc ? argv[i + 1] : NULL;
        const char *b = i + 2 < argc ? argv[i + 2] : NULL;
        if (!strcmp(cmd, "new")) {
            ctx = SSL_CTX_new(TLS_client_method());
            store = SSL_CTX_get_cert_store(ctx);
            printf("new\n");
        } else if (!strcmp(cmd, "load")) {
            printf("load %s: %d\n", a, SSL_CTX_load_verify_locations(ctx, a, NULL));
            i++;
        } else if (!strcmp(cmd, "loadfile")) {
            printf("loadfile %s: %d\n", a, X509_STORE_load_file(store, a));
            i++;
        } else if (!strcmp(cmd, "defaults")) {
            printf("defaults: %d\n", SSL_CTX_set_default_verify_paths(ctx));
        } else if (!strcmp(cmd, "add")) {
            X509 *x = read_cert(a);
            printf("add %s: %d\n", a, X509_STORE_add_cert(store, x));
            X509_free(x);
            i++;
        } else if (!strcmp(cmd, "addcrl")) {
            FILE *fp = fopen(a, "r");
            X509_CRL *c = fp ? PEM_read_X509_CRL(fp, NULL, NULL, NULL) : NULL;
            if (fp)
                fclose(fp);
            printf("addcrl %s: %d\n", a, X509_STORE_add_crl(store, c));
            X509_CRL_free(c);
            i++;
        } else if (!strcmp(cmd, "verify")) {
            const char *how = i + 3 < argc && (!strcmp(argv[i + 3], "crl") ||
                                               !strcmp(argv[i + 3], "sslserver") ||
                                               !strcmp(argv[i + 3], "crl+sslserver"))
                                  ? argv[i + 3]
                                  : NULL;
            char *line = verify_line(a, b, how);
            printf("%s%s%s\n", line, how ? " " : "", how ? how : "");
            free(line);
            i += how ? 3 : 2;
        } else if (!strcmp(cmd, "certs") || !strcmp(cmd, "crls") || !strcmp(cmd, "issuer")) {
            X509 *x = read_cert(a);
            X509_STORE_CTX *sc = X509_STORE_CTX_new();
            X509_STORE_CTX_init(sc, store, x, NULL);
            if (!strcmp(cmd, "certs")) {
                STACK_OF(X509) *sk = X509_STORE_CTX_get1_certs(sc, X509_get_subject_name(x));
                printf("certs %s: %d\n", a, sk ? sk_X509_num(sk) : -1);
                for (int k = 0; k < sk_X509_num(sk); k++) {
                    printf("  ");
                    name_of(sk_X509_value(sk, k));
                    printf("\n");
                }
                sk_X509_pop_free(sk, X509_free);
            } else if (!strcmp(cmd, "crls")) {
                STACK_OF(X509_CRL) *sk = X509_STORE_CTX_get1_crls(sc, X509_get_subject_name(x));
                printf("crls %s: %d\n", a, sk ? sk_X509_CRL_num(sk) : -1);
                sk_X509_CRL_pop_free(sk, X509_CRL_free);
            } else {
                X509 *iss = NULL;
                int r = X509_STORE_CTX_get1_issuer(&iss, sc, x);
                printf("issuer %s: %d ", a, r);
                if (iss)
                    name_of(iss);
                printf("\n");
                X509_free(iss);
            }
            X509_STORE_CTX_free(sc);
            X509_free(x);
            i++;
        } else if (!strcmp(cmd, "list")) {
            list_objects();
        } else if (!strcmp(cmd, "all")) {
            STACK_OF(X509) *sk = X509_STORE_get1_all_certs(store);
            printf("all: %d\n", sk_X509_num(sk));
            for (int k = 0; k < sk_X509_num(sk); k++) {
                printf("  ");
                name_of(sk_X509_value(sk, k));
                printf("\n");
            }
            sk_X509_pop_free(sk, X509_free);
        } else if (!strcmp(cmd, "copy")) {
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.new", b);
            FILE *in = fopen(a, "rb"), *out = fopen(tmp, "wb");
            char buf[65536];
            size_t n;
            while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
                fwrite(buf, 1, n, out);
            if (in)
                fclose(in);
            if (out)
                fclose(out);
            printf("copy %s %s: %d\n", a, b, rename(tmp, b));
            i += 2;
        } else if (!strcmp(cmd, "rm")) {
            printf("rm %s: %d\n", a, unlink(a));
            i++;
        } else if (!strcmp(cmd, "threads")) {
            int n = atoi(a);
            struct job jobs[64];
            pthread_t t[64];
            for (int k = 0; k < n && k < 64; k++) {
                jobs[k] = (struct job){b, argv[i + 3], NULL};
                pthread_create(&t[k], NULL, verify_thread, &jobs[k]);
            }
            for (int k = 0; k < n && k < 64; k++) {
                pthread_join(t[k], NULL);
                printf("thread: %s\n", jobs[k].line);
                free(jobs[k].line);
            }
            i += 3;
        } else if (!strcmp(cmd, "fork")) {
            pid_t pid = fork();
            if (pid == 0) {
                char *line = verify_line(a, b, NULL);
                printf("child %s\n", line);
                free(line);
                list_objects();
                errors("child");
                fflush(stdout);
                _exit(0);
            }
            int st;
            waitpid(pid, &st, 0);
            char *line = verify_line(a, b, NULL);
            printf("parent %s\n", line);
            free(line);
            i += 2;
        } else {
            fprintf(stderr, "trustload: unknown step %s\n", cmd);
            return 2;
        }
        errors(cmd);
    }
    SSL_CTX_free(ctx);
    return 0;
}
