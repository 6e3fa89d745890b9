/*
 * pskserver: a small TLS test server for the session-resumption shim tests.
 *
 * Tests judge a client by what the server saw. For every connection this
 * server logs one line with the resumption identities the client offered in
 * its ClientHello (TLS 1.3 PSK identities, TLS 1.2 session tickets, TLS 1.2
 * session ids, each as 16 hex chars of SHA-256) and whether the handshake
 * resumed:
 *   conn=N status=ok|fail version=TLSv1.3|TLSv1.2|- resumed=0|1 offered=h1,h2|-
 * Flags can make it refuse resumption (--no-resume, --refuse) so tests can
 * check how a client copes. --staple FILE staples the DER OCSP response in
 * FILE (read at each handshake) for a client that asks for one.
 * --psk HEXKEY takes PSK key exchanges (TLS 1.2 PSK and ECDHE-PSK suites,
 * TLS 1.3 external PSKs) from any identity with that key, and logs the
 * identity the session stands for (psk=NAME, after status). --client-ca
 * FILE requires a client certificate issued by a CA in FILE (whose names
 * it sends) and logs its subject's common name (client=CN). --srp
 * USER:PASS takes TLS 1.2 SRP key exchanges of that one user and password
 * and logs the user the session stands for (srp=NAME).
 * --ticket-keys SEED encrypts tickets with keys made from SEED: servers
 * given one SEED take each other's tickets, across restarts too.
 * Single-threaded; listens on 127.0.0.1 only.
 */
/* SRP's functions are deprecated from 3.0 on, and still there. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include "libctx.h"
#include "listen.h"

#define REQ_MAX (16 * 1024)

/* Identities offered in the ClientHello of one connection. */
struct offered {
    char buf[4096];
    size_t len;
};

static unsigned char tk_name[16], tk_aes[32], tk_hmac[32];
static const char *ticket_seed;

static void add_identity(struct offered *o, const char *prefix,
                         const unsigned char *data, size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char item[32];
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen < 8)
        return;
    int n = snprintf(item, sizeof item, "%s%s", o->len ? "," : "", prefix);
    for (int i = 0; i < 8; i++)
        n += snprintf(item + n, sizeof item - n, "%02x", md[i]);
    if (o->len + (size_t)n < sizeof o->buf) {
        memcpy(o->buf + o->len, item, (size_t)n + 1);
        o->len += (size_t)n;
    }
}

static unsigned get16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

static int client_hello_cb(SSL *s, int *al, void *arg)
{
    (void)al; (void)arg;
    struct offered *o = SSL_get_app_data(s);
    const unsigned char *p, *sid;
    size_t len;
    int has_psk = 0;
    if (!o)
        return SSL_CLIENT_HELLO_SUCCESS;
    /* After a HelloRetryRequest the callback runs again: keep the latest. */
    o->len = 0;
    o->buf[0] = '\0';

    /* TLS 1.3 OfferedPsks: identities<7..2^16-1> { identity<1..2^16-1>, uint32 age } */
    if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_psk, &p, &len) == 1) {
        has_psk = 1;
        if (len >= 2) {
            size_t ilen = get16(p), off = 2;
            if (ilen > len - 2)
                ilen = len - 2;
            while (off + 2 <= 2 + ilen) {
                size_t idlen = get16(p + off);
                off += 2;
                if (idlen > 2 + ilen - off || 2 + ilen - off - idlen < 4)
                    break;
                add_identity(o, "", p + off, idlen);
                off += idlen + 4; /* identity + obfuscated_ticket_age */
            }
        }
    }
    int has_ticket = 0;
    if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_session_ticket, &p, &len) == 1
        && len > 0) {
        has_ticket = 1;
        add_identity(o, "t:", p, len);
    }
    /* A client able to speak TLS 1.3 sends a random legacy session id for
     * middlebox compatibility: only a TLS 1.2-only hello without a ticket
     * resumes by session id. */
    int tls13 = 0;
    if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_supported_versions, &p, &len) == 1
        && len >= 1) {
        size_t end = (size_t)p[0] < len - 1 ? (size_t)p[0] : len - 1;
        for (size_t i = 1; i + 1 <= end; i += 2)
            if (p[i] == 0x03 && p[i + 1] == 0x04)
                tls13 = 1;
    }
    len = SSL_client_hello_get0_session_id(s, &sid);
    if (len > 0 && !has_psk && !has_ticket && !tls13)
        add_identity(o, "s:", sid, len);
    return SSL_CLIENT_HELLO_SUCCESS;
}

/* --refuse: encrypt new tickets with a fixed key, never accept one back. */
static int ticket_key_cb(SSL *s, unsigned char key_name[16],
                         unsigned char iv[EVP_MAX_IV_LENGTH],
                         EVP_CIPHER_CTX *ctx, EVP_MAC_CTX *hctx, int enc)
{
    (void)s;
    if (!enc)
        return 0; /* "ticket not found": do a full handshake */
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, tk_hmac, sizeof tk_hmac),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    memcpy(key_name, tk_name, sizeof tk_name);
    if (RAND_bytes(iv, 16) != 1
        || !EVP_EncryptInit_ex(ctx, EVP_aes_256_cbc(), NULL, tk_aes, iv)
        || !EVP_MAC_CTX_set_params(hctx, params))
        return -1;
    return 1;
}

/* --big-tickets N: N bytes of application data sealed into every ticket,
 * as a hostile or careless server might; accepted back as usual. */
static size_t appdata_len;

static int ticket_gen_cb(SSL *s, void *arg)
{
    (void)arg;
    static unsigned char junk[65000];
    return SSL_SESSION_set1_ticket_appdata(SSL_get_session(s), junk, appdata_len);
}

static SSL_TICKET_RETURN ticket_dec_cb(SSL *s, SSL_SESSION *ss, const unsigned char *keyname,
                                       size_t keyname_len, SSL_TICKET_STATUS status, void *arg)
{
    (void)s, (void)ss, (void)keyname, (void)keyname_len, (void)arg;
    if (status == SSL_TICKET_SUCCESS || status == SSL_TICKET_SUCCESS_RENEW)
        return SSL_TICKET_RETURN_USE_RENEW;
    return SSL_TICKET_RETURN_IGNORE_RENEW;
}

static void usage(void)
{
    fprintf(stderr, "usage: pskserver --cert FILE --key FILE [--port N] [--port-file FILE]\n"
            "  [--log FILE] [--tls12|--tls13] [--tickets N] [--no-resume|--refuse]\n"
            "  [--lifetime N] [--big-tickets N] [--max N] [--ctx-per-conn]\n"
            "  [--verify] [--no-sid] [--no-ems] [--libctx] [--staple FILE]\n"
            "  [--psk HEXKEY] [--client-ca FILE] [--ticket-keys SEED]\n");
    exit(2);
}

static long num_arg(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0' || v < 0)
        usage();
    return v;
}

static void who(SSL *s, char *out, size_t size);

static void handle(SSL_CTX *ctx, int fd, long seq, FILE *log)
{
    struct offered o = { .len = 0 };
    struct timeval tv = { .tv_sec = 5, .tv_usec = 0 };
    static char req[REQ_MAX];
    static const char resp[] = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
                               "Content-Length: 3\r\nConnection: close\r\n\r\nok\n";
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    SSL *s = SSL_new(ctx);
    if (!s) {
        fprintf(log, "conn=%ld status=fail version=- resumed=0 offered=-\n", seq);
        fflush(log);
        close(fd);
        return;
    }
    SSL_set_app_data(s, &o);
    SSL_set_fd(s, fd);
    if (SSL_accept(s) != 1) {
        fprintf(log, "conn=%ld status=fail version=- resumed=0 offered=%s\n",
                seq, o.len ? o.buf : "-");
        fflush(log);
        ERR_clear_error();
        SSL_free(s);
        close(fd);
        return;
    }
    char seen[600];
    who(s, seen, sizeof seen);
    fprintf(log, "conn=%ld status=ok version=%s resumed=%d%s offered=%s\n", seq,
            SSL_get_version(s), SSL_session_reused(s) ? 1 : 0, seen, o.len ? o.buf : "-");
    fflush(log);

    size_t got = 0;
    int fatal = 0;
    while (got < sizeof req) {
        int n = SSL_read(s, req + got, (int)(sizeof req - got));
        if (n <= 0) {
            int err = SSL_get_error(s, n);
            fatal = err == SSL_ERROR_SYSCALL || err == SSL_ERROR_SSL;
            break;
        }
        got += (size_t)n;
        if (memmem(req, got, "\r\n\r\n", 4))
            break;
    }
    /* What reached the server after the handshake: a client that refused
     * it sends nothing. */
    fprintf(log, "data conn=%ld bytes=%zu\n", seq, got);
    fflush(log);
    if (!fatal) {
        SSL_write(s, resp, (int)(sizeof resp - 1));
        SSL_shutdown(s);
    }
    ERR_clear_error();
    SSL_free(s);
    close(fd);
}

static const char *cert, *key, *staple_file;
static OSSL_LIB_CTX *libctx; /* --libctx */

/* Staples what the file holds now, or nothing when it is missing. */
static int staple_cb(SSL *s, void *arg)
{
    (void)arg;
    FILE *f = fopen(staple_file, "rb");
    unsigned char *der = OPENSSL_malloc(REQ_MAX);
    size_t len = f != NULL && der != NULL ? fread(der, 1, REQ_MAX, f) : 0;
    if (f != NULL)
        fclose(f);
    if (len == 0 || SSL_set_tlsext_status_ocsp_resp(s, der, (long)len) != 1) {
        OPENSSL_free(der);
        return SSL_TLSEXT_ERR_NOACK;
    }
    return SSL_TLSEXT_ERR_OK;
}
static long tickets = -1, lifetime = -1;
static int version, no_resume, refuse, verify, no_sid, no_ems;
static const char *client_ca;
static char *srp_user, *srp_pass;

static int srp_cb(SSL *s, int *ad, void *arg)
{
    (void)arg;
    const char *name = SSL_get_srp_username(s);
    if (name == NULL || strcmp(name, srp_user) != 0 ||
        SSL_set_srp_server_param_pw(s, srp_user, srp_pass, "2048") != 1) {
        *ad = SSL_AD_UNKNOWN_PSK_IDENTITY;
        return SSL3_AL_FATAL;
    }
    return SSL_ERROR_NONE;
}
static unsigned char psk_key[64];
static long psk_len = -1;

/* Any identity of a few printable characters (a TLS 1.3 ticket is a long
 * binary one, and goes its own way), with the one key. */
static unsigned psk_cb(SSL *s, const char *identity, unsigned char *psk, unsigned max)
{
    (void)s;
    size_t n = strlen(identity);
    if (psk_len < 0 || (unsigned long)psk_len > max || n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (identity[i] < 0x21 || identity[i] > 0x7e)
            return 0;
    memcpy(psk, psk_key, (size_t)psk_len);
    return (unsigned)psk_len;
}

/* What the session says of the client: " psk=NAME" and " client=CN". */
static void who(SSL *s, char *out, size_t size)
{
    out[0] = '\0';
    size_t n = 0;
    if (psk_len >= 0) {
        const char *id = SSL_get_psk_identity(s);
        n += (size_t)snprintf(out + n, size - n, " psk=%s", id ? id : "-");
    }
    if (client_ca) {
        char cn[256] = "-";
        X509 *peer = SSL_get0_peer_certificate(s);
        if (peer)
            X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof cn);
        n += (size_t)snprintf(out + n, size - n, " client=%s", cn);
    }
    if (srp_user) {
        const char *name = SSL_get_srp_username(s);
        snprintf(out + n, size - n, " srp=%s", name ? name : "-");
    }
}

/* The server's context, as configured by the options; NULL on failure. */
static SSL_CTX *make_ctx(void)
{
    SSL_CTX *ctx = SSL_CTX_new_ex(libctx, NULL, TLS_server_method());
    if (!ctx
        || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1
        || SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1
        || SSL_CTX_check_private_key(ctx) != 1) {
        ERR_print_errors_fp(stderr);
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, version ? version : TLS1_2_VERSION);
    SSL_CTX_set_max_proto_version(ctx, version ? version : TLS1_3_VERSION);
    if (!no_sid)
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"pskserver", 9);
    /* asks for a client certificate, and takes a connection without one */
    if (verify)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (client_ca) {
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(client_ca);
        if (!names || SSL_CTX_load_verify_locations(ctx, client_ca, NULL) != 1) {
            ERR_print_errors_fp(stderr);
            SSL_CTX_free(ctx);
            return NULL;
        }
        SSL_CTX_set_client_CA_list(ctx, names);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    if (psk_len >= 0) {
        SSL_CTX_set_psk_server_callback(ctx, psk_cb);
        SSL_CTX_set_cipher_list(ctx, "ECDHE-PSK-AES128-CBC-SHA256:PSK-AES128-GCM-SHA256:"
                                     "PSK-AES256-GCM-SHA384:DEFAULT");
    }
    if (srp_user) {
        SSL_CTX_set_srp_username_callback(ctx, srp_cb);
        SSL_CTX_set_cipher_list(ctx, "SRP:DEFAULT:@SECLEVEL=0");
    }
    if (no_ems)
        SSL_CTX_set_options(ctx, SSL_OP_NO_EXTENDED_MASTER_SECRET);
    SSL_CTX_set_client_hello_cb(ctx, client_hello_cb, NULL);
    if (staple_file)
        SSL_CTX_set_tlsext_status_cb(ctx, staple_cb);
    if (tickets >= 0)
        SSL_CTX_set_num_tickets(ctx, (size_t)tickets);
    if (lifetime >= 0)
        SSL_CTX_set_timeout(ctx, lifetime);
    if (ticket_seed) {
        /* name, HMAC key and AES key: 16 + 32 + 32 bytes */
        unsigned char keys[96];
        if (!EVP_Digest(ticket_seed, strlen(ticket_seed), keys, NULL, EVP_sha512(), NULL)
            || !EVP_Digest(keys, 64, keys + 64, NULL, EVP_sha256(), NULL)
            || SSL_CTX_set_tlsext_ticket_keys(ctx, keys, 80) != 1) {
            ERR_print_errors_fp(stderr);
            SSL_CTX_free(ctx);
            return NULL;
        }
    }
    if (appdata_len > 0)
        SSL_CTX_set_session_ticket_cb(ctx, ticket_gen_cb, ticket_dec_cb, NULL);
    if (no_resume) {
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_num_tickets(ctx, 0);
    } else if (refuse) {
        SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    return ctx;
}

int main(int argc, char **argv)
{
    const char *port_file = NULL, *log_file = NULL;
    long port = 0, max = 0;
    int ctx_per_conn = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--cert") && v) cert = v;
        else if (!strcmp(a, "--key") && v) key = v;
        else if (!strcmp(a, "--port") && v) port = num_arg(v);
        else if (!strcmp(a, "--port-file") && v) port_file = v;
        else if (!strcmp(a, "--log") && v) log_file = v;
        else if (!strcmp(a, "--tickets") && v) tickets = num_arg(v);
        else if (!strcmp(a, "--lifetime") && v) lifetime = num_arg(v);
        else if (!strcmp(a, "--max") && v) max = num_arg(v);
        else if (!strcmp(a, "--big-tickets") && v) appdata_len = (size_t)num_arg(v);
        else if (!strcmp(a, "--staple") && v) staple_file = v;
        else if (!strcmp(a, "--client-ca") && v) client_ca = v;
        else if (!strcmp(a, "--srp") && v && strchr(v, ':')) {
            srp_user = strdup(v);
            srp_pass = strchr(srp_user, ':');
            *srp_pass++ = '\0';
        }
        else if (!strcmp(a, "--ticket-keys") && v) ticket_seed = v;
        else if (!strcmp(a, "--psk") && v) {
            size_t n;
            if (!OPENSSL_hexstr2buf_ex(psk_key, sizeof psk_key, &n, v, '\0'))
                usage();
            psk_len = (long)n;
        }
        else {
            takes = 0;
            if (!strcmp(a, "--tls12")) version = TLS1_2_VERSION;
            else if (!strcmp(a, "--tls13")) version = TLS1_3_VERSION;
            else if (!strcmp(a, "--no-resume")) no_resume = 1;
            else if (!strcmp(a, "--refuse")) refuse = 1;
            else if (!strcmp(a, "--ctx-per-conn")) ctx_per_conn = 1;
            else if (!strcmp(a, "--verify")) verify = 1;
            else if (!strcmp(a, "--no-sid")) no_sid = 1;
            else if (!strcmp(a, "--no-ems")) no_ems = 1;
            else if (!strcmp(a, "--libctx")) {
                if ((libctx = own_libctx()) == NULL)
                    return 1;
            }
            else usage();
        }
        i += takes;
    }
    if (!cert || !key || port > 65535)
        usage();
    signal(SIGPIPE, SIG_IGN);

    FILE *log = stdout;
    if (log_file && !(log = fopen(log_file, "a"))) {
        perror(log_file);
        return 1;
    }

    if (appdata_len > 65000)
        usage();
    if (refuse && (RAND_bytes(tk_name, sizeof tk_name) != 1
                   || RAND_bytes(tk_aes, sizeof tk_aes) != 1
                   || RAND_bytes(tk_hmac, sizeof tk_hmac) != 1)) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    /* --ctx-per-conn: a new context for every connection, as servers that
     * wrap each accepted socket on its own do. */
    SSL_CTX *ctx = make_ctx();
    if (!ctx)
        return 1;

    unsigned bound;
    int ls = listen_loopback((unsigned)port, 256, port_file, &bound);
    if (ls < 0)
        return 1;

    for (long seq = 1; max == 0 || seq <= max; seq++) {
        int fd;
        while ((fd = accept(ls, NULL, NULL)) < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                usleep(10000);
        }
        if (ctx_per_conn) {
            SSL_CTX_free(ctx);
            if (!(ctx = make_ctx()))
                return 1;
        }
        handle(ctx, fd, seq, log);
    }
    SSL_CTX_free(ctx);
    close(ls);
    if (log != stdout)
        fclose(log);
    return 0;
}
