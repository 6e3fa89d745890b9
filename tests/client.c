/* An unmodified TLS client, as most programs are: a new SSL per connection
 * and no session handling of its own, unless asked (--native, --app-cb).
 * The shim is judged by what the server logs, not by this program; it only
 * prints, per connection, whether OpenSSL reports the session reused.
 *
 * usage: client [options] PORT
 *   --host ADDR       server address (127.0.0.1)
 *   --sni NAME        server name sent and, with --verify, checked
 *   --n N             connections per thread (1)
 *   --threads T       threads connecting at once (1)
 *   --mode M          connect | handshake | write | write2 | bio | bio-io | nonblock
 *                     (how the handshake starts: SSL_connect, SSL_do_handshake,
 *                     implicitly in the first SSL_write, or in the first
 *                     SSL_write_ex2 (OpenSSL 3.3 and later; elsewhere the
 *                     client says so and exits 2), BIO_do_handshake on
 *                     a BIO_f_ssl, in the first BIO_write on one (bio-io:
 *                     then BIO_read, never SSL_read or SSL_write), or
 *                     SSL_connect on a non-blocking socket,
 *                     retried under poll on WANT_READ/WANT_WRITE, as event
 *                     loops do; reads and writes then poll too; prints how
 *                     many times it polled)
 *   --fresh-ctx       a new SSL_CTX for every connection (as Python's urllib)
 *   --tls12 | --tls13 pin the protocol version
 *   --cafile F        trust F and verify the server (SSL_VERIFY_PEER)
 *   --verify-host H   expected host name (SSL_set1_host)
 *   --no-shutdown     SSL_free without SSL_shutdown
 *   --no-shutdown-later  the same, but for the first connection
 *   --no-free         never SSL_shutdown, SSL_free or close a connection that
 *                     worked: the process exits with them (as wget does)
 *   --linger          SSL_shutdown a connection that worked, and close its
 *                     socket, but never SSL_free it: the process exits with
 *                     them (as Node.js 20 and Ruby leave them to a garbage
 *                     collector)
 *   --exit-now        end with _exit: no exit handler runs (as apt's https
 *                     method ends, from its SIGINT handler)
 *   --reconnect K     after a connection's request, SSL_shutdown it, and K
 *                     times put the same SSL back in connect state on a new
 *                     socket (SSL_set_connect_state, as openssl s_client
 *                     -reconnect does) for another request
 *   --no-read         never read: send the request and close (warm-up
 *                     connections still read, to collect tickets)
 *   --native          resume natively: keep the last session, offer it next
 *   --native-first    resume natively from one saved session, the first
 *                     connection's, offered on every later one; print
 *                     whether it is still resumable at the end
 *   --app-cb          set SSL_SESS_CACHE_CLIENT and a new-session callback of
 *                     its own; print how many sessions it saw
 *   --keep            a new-session callback that keeps every session (returns
 *                     1), as a program with its own cache; never offers them
 *   --move-ctx        move each connection to another context made as the
 *                     first (SSL_set_SSL_CTX) before it is given a session
 *   --save F          with --keep: also write each kept session to F (DER,
 *                     appended), as a program persisting its cache
 *   --load F          offer the first session in F on the first connection
 *   --nodelay         set TCP_NODELAY (default: Nagle left on)
 *   --ciphers LIST    TLS 1.2 cipher list
 *   --client-cert F   send the certificate and key in PEM file F; F,G,...:
 *                     each file in turn, one certificate slot each (by key
 *                     type), the last one current
 *   --verify-cb       install a verify callback (accepts what OpenSSL did)
 *   --swap-cert F     with --verify-cb: the callback makes the certificate and
 *                     key in PEM file F the connection's own, at the server's
 *                     leaf (a client that picks its identity mid-handshake)
 *   --cert-verify-cb  install a certificate-verify callback (runs OpenSSL's)
 *   --ocsp-cb POLICY  install an OCSP status callback that judges the
 *                     stapled response by POLICY: any (accepts anything),
 *                     must (refuses a connection without one),
 *                     refuse-status=good|revoked|unknown (refuses a response
 *                     giving that status), refuse-responder=CN (refuses a
 *                     response signed by the responder named CN); prints
 *                     "status_calls=C stapled=S distinct=D": how often it
 *                     ran, how often it found a staple, and how many
 *                     different staples it found; the program fails when
 *                     SSL_CTX_get_tlsext_status_cb returns another callback
 *   --ocsp-request    ask the server for a stapled OCSP response
 *   --pin F           the callbacks above also require the server's
 *                     certificate to be the one in PEM file F (found through
 *                     the SSL the store context carries, as real callbacks do)
 *   --purpose         set the verify purpose to "SSL server"
 *   --capath DIR      trust the hashed directory DIR and verify the server
 *   --add-ca-after F  after the first connection, add the certificate in F
 *                     to the trust store of the (shared) context
 *   --check-time-after T  after the first connection, verify as at T
 *                     (seconds since the epoch) in the (shared) context
 *                     (X509_VERIFY_PARAM_set_time)
 *   --reject          close each connection right after the handshake,
 *                     unused, as a program whose own checks refused the peer
 *   --alt             the profile options after it (--sni, --cafile,
 *                     --verify-host, --ciphers, --client-cert, --verify-cb,
 *                     --cert-verify-cb, --pin)
 *                     describe a second configuration; connections alternate
 *                     between the two
 *   --rss             print the peak resident set size (KiB) at the end
 *   --foreign SO      dlopen SO and call its foreign_fetch(PORT, N) first;
 *                     print how many of its N connections worked
 *   --generic         contexts from TLS_method (can serve as well as connect);
 *                     print the session-cache mode the program sees and how
 *                     many sessions OpenSSL's internal cache holds at the end
 *   --warmup K        K sequential connections before the threads start
 *   --warm-burst      after the warm-up, a burst of the same width as the
 *                     threads (one connection each, all joined) before the
 *                     timed phase; prints "warm_reused=K" of that burst
 *   --pause MS        sleep between a thread's connections
 *   --busy-us U       after each handshake, before the request, U µs of
 *                     plain computation (its loop count measured once on
 *                     the thread's CPU clock): what a fixed amount of added
 *                     work costs the client, the bench's yardstick for the
 *                     shim's own
 *   --snis A,B,...    server names used in turn (one per connection)
 *   --fork            after the warm-up, fork: parent and child both run
 *                     the threads (the summary is the parent's)
 *   --keepalive R     R HTTP/1.1 requests on each connection (the server
 *                     must keep it open, as nginx does), instead of one
 *   --sni-count K     connection i sends the server name h<i mod K>.test
 *   --timing          print the wall time and the process CPU time (µs) of
 *                     the threads' phase, after the warm-up
 *   --libctx          contexts in a library context of their own, the
 *                     default one left unable to compute (tests/libctx.h)
 *   --sigalgs LIST    the client's signature algorithms (SSL_CTX_set1_sigalgs_list)
 *   --ct POLICY       Certificate Transparency: strict (SSL_CTX_enable_ct)
 *                     or refuse (a validation callback refusing every chain)
 *   --dane HEX        DANE for "localhost" with one TLSA record 3 1 1 HEX
 *   --psk ID:HEX      a PSK client callback giving identity ID and key HEX
 *   --after-first CMD run the shell command CMD after the first connection
 *   --retry-verify accept|refuse  a verify callback that suspends the
 *                     handshake at the leaf's first check
 *                     (SSL_set_retry_verify; SSL_connect is called again),
 *                     then accepts what OpenSSL found, or refuses
 *   --cert-cb F       the client's certificate and key (PEM file F) given
 *                     by a certificate callback (SSL_CTX_set_cert_cb)
 *   --verify-none     with --cafile or --capath: trust them, but verify in
 *                     SSL_VERIFY_NONE mode; print the last connection's
 *                     verify result ("verify_result=V")
 *   --verify-cb also counts the leaf certificates its callback was shown,
 *   printed as "verified_leaf=K"; a failed connection prints
 *   "client: failed: verify=V reason=R" (its verify result, the reason of
 *   the last error queued) on stderr, then OpenSSL's errors.
 * Prints "reused=K of=N failed=F" and exits 0 when F is 0. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>
#include <openssl/ssl.h>
#include "libctx.h"

/* What differs between the two configurations of --alt. */
struct profile {
    const char *sni, *cafile, *capath, *verify_host, *ciphers, *client_cert;
    const char *ocsp_cb;
    int verify_cb, cert_verify_cb, purpose, ocsp_request;
    X509 *pin;
    SSL_CTX *ctx;
};
static struct profile profiles[2], *prof = &profiles[0];
static int n_profiles = 1, next_conn;

static const char *host = "127.0.0.1", *mode = "connect", *add_ca_after, *foreign;
static const char *check_time_after;
static int foreign_ok = -1;
static const char *snis[16];
static int n_snis, warmup, warm_burst, pause_ms, do_fork, reject, show_rss, generic, keepalive = 1,
           sni_count, timing;
static int no_free, linger, exit_now, reconnects;
static long busy_us, busy_loops;
static volatile unsigned long busy_sink;
static int port, n = 1, threads = 1, version, fresh_ctx, no_shutdown, no_read, native, app_cb,
                 nodelay, quiet;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static SSL_SESSION *native_session;
static int native_first; /* --native-first */
static int reused, failed, cb_sessions, verified_leaf;
static const char *ct_policy, *dane_hex, *psk_identity, *after_first, *sigalgs;
static int verify_none, no_shutdown_later;
static const char *retry_verify, *cert_cb_file;
static _Thread_local int retry_calls;
static long last_verify = -1;
static unsigned char psk_key[64];
static long psk_len;

static const char *save_file, *load_file;
static int keep, move_ctx;
static SSL_SESSION *kept[64];
static int n_kept;

static int keep_session(SSL *s, SSL_SESSION *sess)
{
    (void)s;
    unsigned char der[16384], *p = der;
    pthread_mutex_lock(&lock);
    int len = save_file ? i2d_SSL_SESSION(sess, NULL) : 0;
    FILE *f = len > 0 && len <= (int)sizeof der ? fopen(save_file, "ab") : NULL;
    if (f != NULL) {
        i2d_SSL_SESSION(sess, &p);
        fwrite(der, 1, (size_t)len, f);
        fclose(f);
    }
    int ret = n_kept < 64;
    if (ret)
        kept[n_kept++] = sess;
    pthread_mutex_unlock(&lock);
    return ret;
}

static SSL_SESSION *load_session(void)
{
    unsigned char der[16384];
    const unsigned char *p = der;
    FILE *f = fopen(load_file, "rb");
    size_t len = f ? fread(der, 1, sizeof der, f) : 0;
    if (f)
        fclose(f);
    return d2i_SSL_SESSION(NULL, &p, (long)len);
}

static int count_session(SSL *s, SSL_SESSION *sess)
{
    (void)s, (void)sess;
    __atomic_fetch_add(&cb_sessions, 1, __ATOMIC_RELAXED);
    return 0;
}

/* The profile of the connection being verified, as a real callback finds
 * its own state: through the SSL in the store context. */
static const struct profile *verifying(X509_STORE_CTX *store)
{
    SSL *s = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    return s != NULL ? SSL_CTX_get_app_data(SSL_get_SSL_CTX(s)) : NULL;
}

static const char *swap_cert;

static int verify_cb(int ok, X509_STORE_CTX *store)
{
    const struct profile *p = verifying(store);
    if (p == NULL)
        return 0;
    SSL *s = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    if (swap_cert && X509_STORE_CTX_get_error_depth(store) == 0 &&
        (SSL_use_certificate_file(s, swap_cert, SSL_FILETYPE_PEM) != 1 ||
         SSL_use_PrivateKey_file(s, swap_cert, SSL_FILETYPE_PEM) != 1))
        return 0;
    if (X509_STORE_CTX_get_error_depth(store) == 0)
        __atomic_fetch_add(&verified_leaf, 1, __ATOMIC_RELAXED);
    if (ok && p->pin && X509_STORE_CTX_get_error_depth(store) == 0 &&
        X509_cmp(X509_STORE_CTX_get_current_cert(store), p->pin) != 0)
        return 0;
    return ok;
}

static int cert_verify_cb(X509_STORE_CTX *store, void *arg)
{
    const struct profile *p = arg;
    if (verifying(store) != p)
        return 0;
    int ok = X509_verify_cert(store);
    if (ok > 0 && p->pin && X509_cmp(X509_STORE_CTX_get0_cert(store), p->pin) != 0) {
        X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
        return 0;
    }
    return ok;
}

static int status_calls, stapled, distinct;
static unsigned char staples[16][SHA256_DIGEST_LENGTH];

static void count_staple(const unsigned char *der, long len)
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(der, (size_t)len, md);
    pthread_mutex_lock(&lock);
    stapled++;
    int i;
    for (i = 0; i < distinct && memcmp(staples[i], md, sizeof md) != 0; i++)
        ;
    if (i == distinct && distinct < 16)
        memcpy(staples[distinct++], md, sizeof md);
    pthread_mutex_unlock(&lock);
}

/* Whether a response names the responder CN, or gives a status. */
static int responder_is(OCSP_BASICRESP *bs, const char *cn)
{
    const ASN1_OCTET_STRING *id = NULL;
    const X509_NAME *name = NULL;
    char text[256];
    return OCSP_resp_get0_id(bs, &id, &name) == 1 && name != NULL &&
           X509_NAME_get_text_by_NID((X509_NAME *)name, NID_commonName, text, sizeof text) > 0 &&
           strcmp(text, cn) == 0;
}

static int gives_status(OCSP_BASICRESP *bs, const char *status)
{
    static const char *const names[] = {"good", "revoked", "unknown"};
    for (int i = 0; i < OCSP_resp_count(bs); i++) {
        int st = OCSP_single_get0_status(OCSP_resp_get0(bs, i), NULL, NULL, NULL, NULL);
        if (st >= 0 && st <= 2 && strcmp(names[st], status) == 0)
            return 1;
    }
    return 0;
}

static int ocsp_cb(SSL *s, void *arg)
{
    const struct profile *p = arg;
    const unsigned char *der = NULL;
    long len = SSL_get_tlsext_status_ocsp_resp(s, &der);
    __atomic_fetch_add(&status_calls, 1, __ATOMIC_RELAXED);
    if (len > 0 && der != NULL)
        count_staple(der, len);
    else
        return strcmp(p->ocsp_cb, "must") != 0;
    const unsigned char *q = der;
    OCSP_RESPONSE *resp = d2i_OCSP_RESPONSE(NULL, &q, len);
    OCSP_BASICRESP *bs = resp != NULL ? OCSP_response_get1_basic(resp) : NULL;
    int ok = 1;
    if (!strncmp(p->ocsp_cb, "refuse-status=", 14))
        ok = bs != NULL && !gives_status(bs, p->ocsp_cb + 14);
    else if (!strncmp(p->ocsp_cb, "refuse-responder=", 17))
        ok = bs != NULL && !responder_is(bs, p->ocsp_cb + 17);
    OCSP_BASICRESP_free(bs);
    OCSP_RESPONSE_free(resp);
    return ok;
}

static X509 *read_cert(const char *file)
{
    FILE *f = fopen(file, "r");
    X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
    if (f)
        fclose(f);
    if (x == NULL)
        fprintf(stderr, "client: cannot read %s\n", file);
    return x;
}

static void add_ca(SSL_CTX *ctx, const char *file)
{
    FILE *f = fopen(file, "r");
    X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
    if (x == NULL || X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x) != 1)
        fprintf(stderr, "client: cannot add %s\n", file);
    X509_free(x);
    if (f)
        fclose(f);
}

static OSSL_LIB_CTX *libctx; /* --libctx */

/* --retry-verify: the leaf's first check suspends the handshake, the
 * second decides. */
static int retry_cb(int ok, X509_STORE_CTX *store)
{
    SSL *s = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    if (X509_STORE_CTX_get_error_depth(store) != 0 || s == NULL)
        return ok;
    if (retry_calls++ == 0) {
        SSL_set_retry_verify(s);
        return 1;
    }
    return strcmp(retry_verify, "refuse") == 0 ? 0 : ok;
}

/* --cert-cb: the client's certificate chosen in a callback. */
static int give_cert(SSL *s, void *arg)
{
    (void)arg;
    return SSL_use_certificate_chain_file(s, cert_cb_file) == 1 &&
           SSL_use_PrivateKey_file(s, cert_cb_file, SSL_FILETYPE_PEM) == 1;
}

static int refuse_ct(const CT_POLICY_EVAL_CTX *ctx, const STACK_OF(SCT) *scts, void *arg)
{
    (void)ctx, (void)scts, (void)arg;
    return 0;
}

static unsigned int give_psk(SSL *s, const char *hint, char *identity, unsigned int max_identity,
                             unsigned char *psk, unsigned int max_psk)
{
    (void)s, (void)hint;
    if (snprintf(identity, max_identity, "%s", psk_identity) >= (int)max_identity ||
        psk_len > (long)max_psk)
        return 0;
    memcpy(psk, psk_key, (size_t)psk_len);
    return (unsigned int)psk_len;
}

static SSL_CTX *make_ctx(const struct profile *p)
{
    SSL_CTX *ctx = SSL_CTX_new_ex(libctx, NULL, generic ? TLS_method() : TLS_client_method());
    if (ctx == NULL)
        return NULL;
    SSL_CTX_set_app_data(ctx, (void *)p);
    if (version) {
        SSL_CTX_set_min_proto_version(ctx, version);
        SSL_CTX_set_max_proto_version(ctx, version);
    }
    if (p->cafile || p->capath) {
        SSL_CTX_load_verify_locations(ctx, p->cafile, p->capath);
        SSL_CTX_set_verify(ctx, verify_none ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
                           p->verify_cb ? verify_cb : NULL);
    } else if (p->verify_cb) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, verify_cb);
    }
    if (p->purpose)
        SSL_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
    if (p->cert_verify_cb)
        SSL_CTX_set_cert_verify_callback(ctx, cert_verify_cb, (void *)p);
    if (p->ocsp_cb) {
        SSL_CTX_set_tlsext_status_cb(ctx, ocsp_cb);
        SSL_CTX_set_tlsext_status_arg(ctx, (void *)p);
        /* the callback reads back as the one set, whoever stands in for it */
        int (*got)(SSL *, void *) = NULL;
        SSL_CTX_get_tlsext_status_cb(ctx, &got);
        if (got != ocsp_cb) {
            fprintf(stderr, "client: the status callback read back is not the one set\n");
            SSL_CTX_free(ctx);
            return NULL;
        }
    }
    if (p->ocsp_request)
        SSL_CTX_set_tlsext_status_type(ctx, TLSEXT_STATUSTYPE_ocsp);
    if (p->ciphers)
        SSL_CTX_set_cipher_list(ctx, p->ciphers);
    for (const char *f = p->client_cert; f != NULL && *f != '\0';) {
        const char *comma = strchr(f, ',');
        char one[1024];
        snprintf(one, sizeof one, "%.*s", comma ? (int)(comma - f) : (int)strlen(f), f);
        if (SSL_CTX_use_certificate_chain_file(ctx, one) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx, one, SSL_FILETYPE_PEM) != 1)
            fprintf(stderr, "client: cannot use %s\n", one);
        f = comma ? comma + 1 : NULL;
    }
    if (sigalgs && SSL_CTX_set1_sigalgs_list(ctx, sigalgs) != 1)
        fprintf(stderr, "client: cannot use signature algorithms %s\n", sigalgs);
    if (ct_policy && strcmp(ct_policy, "strict") == 0)
        SSL_CTX_enable_ct(ctx, SSL_CT_VALIDATION_STRICT);
    else if (ct_policy)
        SSL_CTX_set_ct_validation_callback(ctx, refuse_ct, NULL);
    if (dane_hex)
        SSL_CTX_dane_enable(ctx);
    if (psk_identity)
        SSL_CTX_set_psk_client_callback(ctx, give_psk);
    if (retry_verify)
        SSL_CTX_set_verify(ctx, SSL_CTX_get_verify_mode(ctx), retry_cb);
    if (cert_cb_file)
        SSL_CTX_set_cert_cb(ctx, give_cert, NULL);
    if (app_cb || keep) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT);
        SSL_CTX_sess_set_new_cb(ctx, keep ? keep_session : count_session);
    }
    return ctx;
}

static int tcp_connect(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (nodelay)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int nb, nb_waits;

/* Non-blocking mode: after an operation returned R, wait for what OpenSSL
 * wants. 1 when the operation is to be retried. */
static int nb_wait(SSL *s, int r)
{
    struct pollfd pfd = {.fd = SSL_get_fd(s)};
    switch (SSL_get_error(s, r)) {
    case SSL_ERROR_WANT_READ: pfd.events = POLLIN; break;
    case SSL_ERROR_WANT_WRITE: pfd.events = POLLOUT; break;
    default: return 0;
    }
    __atomic_fetch_add(&nb_waits, 1, __ATOMIC_RELAXED);
    return poll(&pfd, 1, 10000) == 1;
}

/* --busy-us: a dependent chain of multiplications, so that neither the
 * compiler nor the processor can shorten it, and nothing touched but a
 * register: the work itself, without the cache misses of real code. */
static void busy(long loops)
{
    unsigned long x = busy_sink;
    for (long i = 0; i < loops; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    busy_sink = x;
}

static long thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Loops a microsecond takes: the fastest of five timed millions. */
static void busy_calibrate(void)
{
    long best = 0;
    for (int i = 0; i < 5; i++) {
        long t0 = thread_ns();
        busy(1000000);
        long t = thread_ns() - t0;
        if (best == 0 || (t > 0 && t < best))
            best = t;
    }
    busy_loops = best > 0 ? busy_us * 1000 * 1000000 / best : 0;
}

/* SSL_connect, SSL_write and SSL_read, retried under poll in non-blocking
 * mode. */
static int do_connect(SSL *s)
{
    int r;
    retry_calls = 0;
    while ((r = SSL_connect(s)) != 1 &&
           ((nb && nb_wait(s, r)) || SSL_get_error(s, r) == SSL_ERROR_WANT_RETRY_VERIFY))
        ;
    return r;
}

static int do_write(SSL *s, const void *buf, int len)
{
    int r;
#if OPENSSL_VERSION_NUMBER >= 0x30300000L
    size_t done;
    if (strcmp(mode, "write2") == 0)
        return SSL_write_ex2(s, buf, (size_t)len, 0, &done) == 1 ? (int)done : -1;
#endif
    while ((r = SSL_write(s, buf, len)) <= 0 && nb && nb_wait(s, r))
        ;
    return r;
}

static int do_read(SSL *s, void *buf, int len)
{
    int r;
    while ((r = SSL_read(s, buf, len)) <= 0 && nb && nb_wait(s, r))
        ;
    return r;
}

static const char request[] = "GET / HTTP/1.0\r\nHost: test\r\n\r\n";
static const char request11[] = "GET / HTTP/1.1\r\nHost: test\r\n\r\n";

/* One HTTP/1.1 request on a connection kept open: read the head, then as
 * many body bytes as Content-Length says. 1 when a response came. */
static int keepalive_request(SSL *s)
{
    char buf[4096];
    int got, total = 0;
    if (SSL_write(s, request11, (int)sizeof request11 - 1) <= 0)
        return 0;
    for (;;) {
        if (total == (int)sizeof buf - 1 ||
            (got = SSL_read(s, buf + total, (int)sizeof buf - 1 - total)) <= 0)
            return 0;
        total += got;
        buf[total] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end == NULL)
            continue;
        const char *cl = strcasestr(buf, "\r\ncontent-length:");
        long want = cl != NULL && cl < end ? strtol(cl + 17, NULL, 10) : 0;
        long have = total - (end + 4 - buf);
        while (have < want) {
            if ((got = SSL_read(s, buf, sizeof buf)) <= 0)
                return 0;
            have += got;
        }
        return 1;
    }
}

/* One connection: handshake, request, response. 1 when it worked. */
static int one(const struct profile *p, SSL_CTX *ctx, int index)
{
    char buf[4096];
    int ok = 0, fd = tcp_connect();
    if (fd < 0)
        return 0;
    SSL *s = SSL_new(ctx);
    BIO *bio = NULL;
    if (s == NULL)
        goto out;
    if (sni_count) {
        char name[32];
        snprintf(name, sizeof name, "h%d.test", index % sni_count);
        SSL_set_tlsext_host_name(s, name);
    } else if (n_snis)
        SSL_set_tlsext_host_name(s, snis[index % n_snis]);
    else if (p->sni)
        SSL_set_tlsext_host_name(s, p->sni);
    if (p->verify_host)
        SSL_set1_host(s, p->verify_host);
    if (dane_hex) {
        unsigned char tlsa[64];
        long len = 0;
        unsigned char *bin = OPENSSL_hexstr2buf(dane_hex, &len);
        if (bin != NULL && len <= (long)sizeof tlsa)
            memcpy(tlsa, bin, (size_t)len);
        OPENSSL_free(bin);
        if (SSL_dane_enable(s, "localhost") <= 0 ||
            SSL_dane_tlsa_add(s, 3, 1, 1, tlsa, (size_t)len) <= 0)
            fprintf(stderr, "client: cannot use the TLSA record\n");
    }
    if (native) {
        pthread_mutex_lock(&lock);
        if (native_session)
            SSL_set_session(s, native_session);
        pthread_mutex_unlock(&lock);
    }
    if (move_ctx) {
        /* Another context made as the first: the connection moves there
         * before it is given a session (as a name callback moves one). */
        SSL_CTX *other = make_ctx(p);
        if (other == NULL || SSL_set_SSL_CTX(s, other) == NULL)
            fprintf(stderr, "client: cannot move to another context\n");
        SSL_CTX_free(other);
    }
    if (load_file && index == 0) {
        SSL_SESSION *loaded = load_session();
        if (loaded)
            SSL_set_session(s, loaded);
        SSL_SESSION_free(loaded);
    }
    SSL_set_fd(s, fd);
    if (nb)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (strcmp(mode, "connect") == 0 || nb) {
        if (do_connect(s) != 1)
            goto out;
    } else if (strcmp(mode, "handshake") == 0) {
        SSL_set_connect_state(s);
        if (SSL_do_handshake(s) != 1)
            goto out;
    } else if (strcmp(mode, "write") == 0 || strcmp(mode, "write2") == 0) {
        SSL_set_connect_state(s);
    } else if (strcmp(mode, "bio") == 0 || strcmp(mode, "bio-io") == 0) {
        SSL_set_connect_state(s);
        bio = BIO_new(BIO_f_ssl());
        BIO_set_ssl(bio, s, BIO_NOCLOSE);
        if (strcmp(mode, "bio") == 0 && BIO_do_handshake(bio) != 1)
            goto out;
    }
    if (busy_loops)
        busy(busy_loops);
    if (reject) {
        ok = 1;
        goto out;
    }
    if (keepalive > 1) {
        for (int r = 0; r < keepalive; r++)
            if (!keepalive_request(s))
                goto out;
    } else if (strcmp(mode, "bio-io") == 0) {
        /* Only the BIO's reads and writes, as Tcl's tls package does. */
        int got, total = 0;
        if (BIO_write(bio, request, (int)sizeof request - 1) != (int)sizeof request - 1)
            goto out;
        while ((got = BIO_read(bio, buf, sizeof buf)) > 0)
            total += got;
        if (total == 0)
            goto out;
    } else if (do_write(s, request, (int)sizeof request - 1) <= 0) {
        goto out;
    } else if (!no_read || index < warmup) {
        int got, total = 0;
        while ((got = do_read(s, buf, sizeof buf)) > 0)
            total += got;
        if (total == 0)
            goto out;
    }
    ok = 1;
    if (verify_none) {
        pthread_mutex_lock(&lock);
        last_verify = SSL_get_verify_result(s);
        pthread_mutex_unlock(&lock);
    }
    if (SSL_session_reused(s))
        __atomic_fetch_add(&reused, 1, __ATOMIC_RELAXED);
    if (native) {
        pthread_mutex_lock(&lock);
        if (!native_first || native_session == NULL) {
            SSL_SESSION_free(native_session);
            native_session = SSL_get1_session(s);
        }
        pthread_mutex_unlock(&lock);
    }
    for (int r = 0; r < reconnects && ok; r++) {
        int got, total = 0;
        SSL_shutdown(s);
        close(fd);
        ok = 0;
        if ((fd = tcp_connect()) < 0)
            goto out;
        SSL_set_fd(s, fd);
        SSL_set_connect_state(s);
        if (do_connect(s) != 1 || do_write(s, request, (int)sizeof request - 1) <= 0)
            goto out;
        while ((got = do_read(s, buf, sizeof buf)) > 0)
            total += got;
        ok = total > 0;
        if (ok && SSL_session_reused(s))
            __atomic_fetch_add(&reused, 1, __ATOMIC_RELAXED);
    }
    if (no_free)
        return ok;
    if (!no_shutdown && !(no_shutdown_later && index > 0))
        SSL_shutdown(s);
    if (linger) {
        close(fd);
        return ok;
    }
out:
    if (!ok && !quiet && s != NULL) {
        const char *reason = ERR_reason_error_string(ERR_peek_last_error());
        fprintf(stderr, "client: failed: verify=%ld reason=%s\n", SSL_get_verify_result(s),
                reason != NULL ? reason : "-");
    }
    if (!ok && !quiet)
        ERR_print_errors_fp(stderr);
    ERR_clear_error();
    BIO_free(bio);
    SSL_free(s);
    close(fd);
    return ok;
}

static long long cpu_us(const struct rusage *r)
{
    return (long long)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1000000 + r->ru_utime.tv_usec +
           r->ru_stime.tv_usec;
}

static void *run(void *arg)
{
    int count = arg != NULL ? *(int *)arg : n;
    for (int i = 0; i < count; i++) {
        if (i > 0 && pause_ms > 0)
            nanosleep(&(struct timespec){pause_ms / 1000, (pause_ms % 1000) * 1000000L}, NULL);
        int index = __atomic_fetch_add(&next_conn, 1, __ATOMIC_RELAXED);
        const struct profile *p = &profiles[index % n_profiles];
        SSL_CTX *ctx = fresh_ctx ? make_ctx(p) : p->ctx;
        if (!one(p, ctx, index))
            __atomic_fetch_add(&failed, 1, __ATOMIC_RELAXED);
        if (index == 0 && add_ca_after)
            add_ca(ctx, add_ca_after);
        if (index == 0 && check_time_after)
            X509_VERIFY_PARAM_set_time(SSL_CTX_get0_param(ctx),
                                       (time_t)strtoll(check_time_after, NULL, 10));
        if (index == 0 && after_first && system(after_first) != 0)
            fprintf(stderr, "client: %s failed\n", after_first);
        if (fresh_ctx)
            SSL_CTX_free(ctx);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc - 1; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--host")) host = argv[++i];
        else if (!strcmp(a, "--sni")) prof->sni = argv[++i];
        else if (!strcmp(a, "--n")) n = atoi(argv[++i]);
        else if (!strcmp(a, "--threads")) threads = atoi(argv[++i]);
        else if (!strcmp(a, "--mode")) mode = argv[++i];
        else if (!strcmp(a, "--cafile")) prof->cafile = argv[++i];
        else if (!strcmp(a, "--verify-host")) prof->verify_host = argv[++i];
        else if (!strcmp(a, "--ciphers")) prof->ciphers = argv[++i];
        else if (!strcmp(a, "--client-cert")) prof->client_cert = argv[++i];
        else if (!strcmp(a, "--verify-cb")) prof->verify_cb = 1;
        else if (!strcmp(a, "--swap-cert") && i + 1 < argc) swap_cert = argv[++i];
        else if (!strcmp(a, "--cert-verify-cb")) prof->cert_verify_cb = 1;
        else if (!strcmp(a, "--ocsp-cb")) prof->ocsp_cb = argv[++i];
        else if (!strcmp(a, "--ocsp-request")) prof->ocsp_request = 1;
        else if (!strcmp(a, "--pin")) {
            if ((prof->pin = read_cert(argv[++i])) == NULL)
                return 2;
        }
        else if (!strcmp(a, "--purpose")) prof->purpose = 1;
        else if (!strcmp(a, "--capath")) prof->capath = argv[++i];
        else if (!strcmp(a, "--add-ca-after")) add_ca_after = argv[++i];
        else if (!strcmp(a, "--check-time-after")) check_time_after = argv[++i];
        else if (!strcmp(a, "--reject")) reject = 1;
        else if (!strcmp(a, "--rss")) show_rss = 1;
        else if (!strcmp(a, "--generic")) generic = 1;
        else if (!strcmp(a, "--foreign")) foreign = argv[++i];
        else if (!strcmp(a, "--alt")) prof = &profiles[(n_profiles = 2) - 1];
        else if (!strcmp(a, "--fresh-ctx")) fresh_ctx = 1;
        else if (!strcmp(a, "--tls12")) version = TLS1_2_VERSION;
        else if (!strcmp(a, "--tls13")) version = TLS1_3_VERSION;
        else if (!strcmp(a, "--no-shutdown")) no_shutdown = 1;
        else if (!strcmp(a, "--no-free")) no_free = 1;
        else if (!strcmp(a, "--linger")) linger = 1;
        else if (!strcmp(a, "--exit-now")) exit_now = 1;
        else if (!strcmp(a, "--reconnect")) reconnects = atoi(argv[++i]);
        else if (!strcmp(a, "--no-read")) no_read = 1;
        else if (!strcmp(a, "--native")) native = 1;
        else if (!strcmp(a, "--native-first")) native = native_first = 1;
        else if (!strcmp(a, "--app-cb")) app_cb = 1;
        else if (!strcmp(a, "--nodelay")) nodelay = 1;
        else if (!strcmp(a, "--keep")) keep = 1;
        else if (!strcmp(a, "--save")) save_file = argv[++i];
        else if (!strcmp(a, "--load")) load_file = argv[++i];
        else if (!strcmp(a, "--move-ctx")) move_ctx = 1;
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (!strcmp(a, "--warmup")) warmup = atoi(argv[++i]);
        else if (!strcmp(a, "--warm-burst")) warm_burst = 1;
        else if (!strcmp(a, "--pause")) pause_ms = atoi(argv[++i]);
        else if (!strcmp(a, "--busy-us")) busy_us = atol(argv[++i]);
        else if (!strcmp(a, "--fork")) do_fork = 1;
        else if (!strcmp(a, "--keepalive")) keepalive = atoi(argv[++i]);
        else if (!strcmp(a, "--sni-count")) sni_count = atoi(argv[++i]);
        else if (!strcmp(a, "--timing")) timing = 1;
        else if (!strcmp(a, "--ct")) ct_policy = argv[++i];
        else if (!strcmp(a, "--sigalgs")) sigalgs = argv[++i];
        else if (!strcmp(a, "--dane")) dane_hex = argv[++i];
        else if (!strcmp(a, "--after-first")) after_first = argv[++i];
        else if (!strcmp(a, "--verify-none")) verify_none = 1;
        else if (!strcmp(a, "--no-shutdown-later")) no_shutdown_later = 1;
        else if (!strcmp(a, "--retry-verify")) retry_verify = argv[++i];
        else if (!strcmp(a, "--cert-cb")) cert_cb_file = argv[++i];
        else if (!strcmp(a, "--psk")) {
            char *id = argv[++i], *colon = strchr(id, ':');
            unsigned char *bin = colon != NULL ? OPENSSL_hexstr2buf(colon + 1, &psk_len) : NULL;
            if (bin == NULL || psk_len > (long)sizeof psk_key) {
                fprintf(stderr, "client: --psk ID:HEX\n");
                return 2;
            }
            memcpy(psk_key, bin, (size_t)psk_len);
            OPENSSL_free(bin);
            *colon = '\0';
            psk_identity = id;
        }
        else if (!strcmp(a, "--libctx")) {
            if ((libctx = own_libctx()) == NULL)
                return 1;
        }
        else if (!strcmp(a, "--snis")) {
            for (char *tok = strtok(argv[++i], ","); tok && n_snis < 16; tok = strtok(NULL, ","))
                snis[n_snis++] = tok;
        }
        else {
            fprintf(stderr, "client: unknown option %s\n", a);
            return 2;
        }
    }
    nb = strcmp(mode, "nonblock") == 0;
#if OPENSSL_VERSION_NUMBER < 0x30300000L
    if (strcmp(mode, "write2") == 0) {
        fprintf(stderr, "client: --mode write2: these headers have no SSL_write_ex2\n");
        return 2;
    }
#endif
    if (i != argc - 1 || (port = atoi(argv[i])) <= 0 || n < 1 || threads < 1 || threads > 512 ||
        keepalive < 1 || sni_count < 0 || reconnects < 0 || busy_us < 0 || busy_us > 1000000) {
        fprintf(stderr, "usage: client [options] PORT\n");
        return 2;
    }
    if (busy_us > 0)
        busy_calibrate();
    for (i = 0; i < n_profiles && !fresh_ctx; i++)
        if ((profiles[i].ctx = make_ctx(&profiles[i])) == NULL)
            return 1;
    if (foreign) {
        void *h = dlopen(foreign, RTLD_NOW | RTLD_LOCAL);
        int (*fetch)(int, int) = NULL;
        if (h != NULL)
            *(void **)&fetch = dlsym(h, "foreign_fetch");
        foreign_ok = fetch ? fetch(port, n) : -2;
    }
    if (warmup > 0)
        run(&warmup);
    pthread_t t[512];
    int warm_reused = 0;
    if (warm_burst) {
        static int one_each = 1;
        int before = reused;
        for (i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, run, &one_each);
        for (i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        warm_reused = reused - before;
    }
    struct timespec t0, t1;
    struct rusage ru0, ru1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    getrusage(RUSAGE_SELF, &ru0);
    pid_t child = do_fork ? fork() : -1;
    for (i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, run, NULL);
    for (i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    if (child == 0)
        return failed ? 1 : 0;
    int status = 0;
    if (child > 0 && (waitpid(child, &status, 0) != child || status != 0))
        failed++;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &ru1);
    printf("reused=%d of=%d failed=%d", reused,
           n * threads * (1 + reconnects) + warmup + (warm_burst ? threads : 0), failed);
    if (warm_burst)
        printf(" warm_reused=%d", warm_reused);
    if (app_cb)
        printf(" callback_sessions=%d", cb_sessions);
    if (foreign)
        printf(" foreign=%d", foreign_ok);
    if (profiles[0].ocsp_cb || profiles[1].ocsp_cb)
        printf(" status_calls=%d stapled=%d distinct=%d", status_calls, stapled, distinct);
    if (nb)
        printf(" polled=%d", nb_waits);
    if (verify_none)
        printf(" verify_result=%ld", last_verify);
    if (profiles[0].verify_cb || profiles[1].verify_cb)
        printf(" verified_leaf=%d", verified_leaf);
    if (generic && profiles[0].ctx)
        printf(" mode=%ld cached=%ld", SSL_CTX_get_session_cache_mode(profiles[0].ctx),
               SSL_CTX_sess_number(profiles[0].ctx));
    if (timing) {
        printf(" elapsed_us=%lld cpu_us=%lld",
               (long long)(t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000,
               cpu_us(&ru1) - cpu_us(&ru0));
    }
    if (show_rss) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf(" rss_kib=%ld", ru.ru_maxrss);
    }
    if (native_first)
        printf(" resumable=%d", native_session && SSL_SESSION_is_resumable(native_session));
    printf("\n");
    if (exit_now) {
        fflush(stdout);
        _exit(failed ? 1 : 0);
    }
    SSL_SESSION_free(native_session);
    for (i = 0; i < n_kept; i++)
        SSL_SESSION_free(kept[i]);
    for (i = 0; i < n_profiles; i++) {
        SSL_CTX_free(profiles[i].ctx);
        X509_free(profiles[i].pin);
    }
    return failed ? 1 : 0;
}
