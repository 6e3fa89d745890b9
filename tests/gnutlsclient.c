/* An unmodified GnuTLS client, as most programs are: a new session per
 * connection and no resumption of its own unless asked (--keep). Each
 * connection sends one HTTP/1.0 GET and reads the response to the end, so
 * that TLS 1.3 tickets, which arrive after the handshake, are received.
 * The shim is judged by what the server logs; this program prints, per
 * connection, whether GnuTLS reports the session resumed and whether the
 * server's certificate was accepted.
 *
 * usage: gnutlsclient --connect HOST:PORT [options]
 *   --count N         connections in all (1)
 *   --threads T       threads connecting at once, sharing the N (1)
 *   --tls 1.2|1.3     pin the protocol version (default: either)
 *   --cafile F        trust the certificates in PEM file F (default: the
 *                     system's trust store)
 *   --cafiles F,G,..  trust files used in turn, one per connection, each
 *                     with credentials of its own (as --cafile otherwise)
 *   --name NAME       server name sent and verified (default: none sent,
 *                     HOST verified)
 *   --names A,B,..    names used in turn, one per connection
 *   --verify MODE     inhandshake: gnutls_session_set_verify_cert, GnuTLS
 *                     judges during the handshake (default);
 *                     byhand: gnutls_certificate_verify_peers3 after the
 *                     handshake, as wget, lynx and libcurl do;
 *                     callback: a function set with
 *                     gnutls_certificate_set_verify_function, which runs
 *                     gnutls_certificate_verify_peers3 (GnuTLS calls it
 *                     during a full handshake only);
 *                     sessioncb: the same function, set on the session
 *                     (gnutls_session_set_verify_function);
 *                     none: nothing checked
 *   --step KIND:ARG   instead of the protocol's priorities and --verify's
 *                     check, what the connection sets, in the order given:
 *                     prio:STRING (gnutls_priority_set_direct), verify:P
 *                     (gnutls_session_set_verify_cert with the name and
 *                     the flags of verification profile P: none, low,
 *                     medium, high, ultra, or a number), verify2:P (the
 *                     same through gnutls_session_set_verify_cert2)
 *   --then            the steps after it are another configuration:
 *                     connections use the configurations in turn
 *   --crlfile F       CRLs in PEM file F on the credentials
 *   --change K:WHAT   before connection K (with --threads 1), change the
 *                     shared credentials in place: crl (load --crlfile's
 *                     CRLs now, not at the start), ultra
 *                     (gnutls_certificate_set_verify_flags: the ULTRA
 *                     verification profile), or tlcrl (the CRLs added to
 *                     the credentials' trust list, which the client took
 *                     with gnutls_certificate_get_trust_list at the start);
 *                     or sleep (no change: 4 s pass)
 *   --client-cert C:K[,C:K..]  client certificates and keys (PEM files),
 *                     each added to the credentials in turn
 *   --psk USER:HEXKEY PSK credentials (TLS 1.2: PSK key exchanges only)
 *   --psks U:K,U:K..  PSK credentials used in turn, one per connection
 *   --psk-callback USER:HEXKEY  the same, given by a function
 *                     (gnutls_psk_set_client_credentials_function)
 *   --psk-function N  which setter --psk-callback uses: 1 (the default), 2
 *                     (..._function2) or 3 (..._function3, GnuTLS 3.8.1 and
 *                     later: elsewhere the client says so and exits 2)
 *   --pin F           byhand and callback also require the server's
 *                     certificate to be the one in PEM file F (as a
 *                     program pinning a key; F another certificate makes
 *                     every full handshake fail)
 *   --keep            keep each connection's session data
 *   --take-hook       take each TLS 1.3 ticket's session data as it arrives,
 *                     in a handshake hook, for a cache never offered from
 *                     (as glib-networking does)
 *   --exit-now        end with _exit: no exit handlers run
 *                     (gnutls_session_get_data2, once the response is
 *                     read) and set it on the next connection
 *                     (gnutls_session_set_data), as libcurl does within a
 *                     process
 *   --early-data      gnutls_init with GNUTLS_ENABLE_EARLY_DATA (none is sent)
 *   --hook-pin F      a handshake hook on the server's Certificate message
 *                     that refuses the handshake unless the server's
 *                     certificate is the one in PEM file F
 *   --no-tickets      gnutls_init with GNUTLS_NO_TICKETS, as libcurl-gnutls
 *                     7.88 does
 *   --fresh-cred      new credentials for every connection (default: one
 *                     set for each trust file, shared)
 *   --path P          the path asked for (/)
 *   --errors          name the error of a refused certificate too
 *   --nodelay         set TCP_NODELAY (default: Nagle left on, as in most
 *                     programs; a benchmark sets it so that a connection's
 *                     last handshake flight does not wait for a delayed ACK)
 *   --show-nodelay    read TCP_NODELAY back after the handshake and print it
 *                     (" nodelay=0|1" at the end of the connection's line)
 * Prints "conn=I resumed=0|1 verify=ok|fail" per connection (and
 * " error=NAME" when the connection failed otherwise), then on stderr
 * "connections=N resumed=K failed=F callback_calls=C"; exits 1 when any
 * connection failed. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#define MAX_LIST 16

static const char *host, *port_s, *path = "/", *tls, *verify = "inhandshake";
static const char *names[MAX_LIST], *cafiles[MAX_LIST], *psks[MAX_LIST];
static int n_names, n_cafiles, n_psks, psk_by_callback, psk_function = 1;
static const char *crlfile, *change_what;
static int change_at = -1;
static gnutls_x509_trust_list_t change_tl[MAX_LIST];
static char *client_certs[MAX_LIST];
static int n_client_certs;
/* --step: configurations, each a list of steps */
#define MAX_STEPS 8
static const char *steps[MAX_LIST][MAX_STEPS];
static int n_steps[MAX_LIST], n_configs = 1;
static int count = 1, threads = 1, keep, no_tickets, fresh_cred, nodelay, errors, early_data;
static int show_nodelay;
static gnutls_datum_t hook_pin;
static int take_hook, exit_now;
static int take_ticket(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                       const gnutls_datum_t *msg)
{
    (void)htype, (void)when, (void)incoming, (void)msg;
    gnutls_datum_t d;
    if (gnutls_session_get_data2(s, &d) == 0)
        gnutls_free(d.data);
    return 0;
}

/* --hook-pin: the pinned certificate must be in the Certificate message,
 * as received. */
static int pin_hook(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                    const gnutls_datum_t *msg)
{
    (void)s, (void)htype, (void)when, (void)incoming;
    return msg != NULL && memmem(msg->data, msg->size, hook_pin.data, hook_pin.size) != NULL
               ? 0
               : GNUTLS_E_CERTIFICATE_ERROR;
}
static gnutls_datum_t pin;
static gnutls_certificate_credentials_t shared_cred[MAX_LIST];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gnutls_datum_t kept; /* --keep */
static int next_conn, resumed, failed, callback_calls;

static void split(char *arg, const char **list, int *n)
{
    for (char *tok = strtok(arg, ","); tok && *n < MAX_LIST; tok = strtok(NULL, ","))
        list[(*n)++] = tok;
}

/* The name a connection sends and checks; with none given, the host. */
static const char *conn_name(gnutls_session_t s)
{
    const char *name = gnutls_session_get_ptr(s);
    return name ? name : host;
}

/* The server's certificate against the pinned one, when there is one. */
static int pin_ok(gnutls_session_t s)
{
    if (pin.data == NULL)
        return 1;
    unsigned n = 0;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(s, &n);
    return n > 0 && peers[0].size == pin.size && !memcmp(peers[0].data, pin.data, pin.size);
}

static int peer_ok(gnutls_session_t s)
{
    unsigned status = 0;
    return gnutls_certificate_verify_peers3(s, conn_name(s), &status) == 0 && status == 0 &&
           pin_ok(s);
}

static int verify_cb(gnutls_session_t s)
{
    __atomic_fetch_add(&callback_calls, 1, __ATOMIC_RELAXED);
    return peer_ok(s) ? 0 : GNUTLS_E_CERTIFICATE_ERROR;
}

static gnutls_certificate_credentials_t make_cred(int i)
{
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) < 0)
        return NULL;
    const char *f = n_cafiles ? cafiles[i % n_cafiles] : NULL;
    int r = f ? gnutls_certificate_set_x509_trust_file(cred, f, GNUTLS_X509_FMT_PEM)
              : gnutls_certificate_set_x509_system_trust(cred);
    if (r <= 0) {
        fprintf(stderr, "gnutlsclient: no trusted certificate loaded from %s (%s)\n",
                f ? f : "the system store", r < 0 ? gnutls_strerror_name(r) : "none in it");
        gnutls_certificate_free_credentials(cred);
        return NULL;
    }
    if (crlfile != NULL && change_at < 0 && gnutls_certificate_set_x509_crl_file(cred, crlfile,
                                                                 GNUTLS_X509_FMT_PEM) < 0) {
        fprintf(stderr, "gnutlsclient: no CRL loaded from %s\n", crlfile);
        gnutls_certificate_free_credentials(cred);
        return NULL;
    }
    for (int k = 0; k < n_client_certs; k++) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", client_certs[k]);
        char *colon = strchr(buf, ':');
        if (colon == NULL ||
            (*colon = '\0', gnutls_certificate_set_x509_key_file(cred, buf, colon + 1,
                                                                GNUTLS_X509_FMT_PEM)) < 0) {
            fprintf(stderr, "gnutlsclient: no client certificate and key in %s\n",
                    client_certs[k]);
            gnutls_certificate_free_credentials(cred);
            return NULL;
        }
    }
    if (!strcmp(verify, "callback"))
        gnutls_certificate_set_verify_function(cred, verify_cb);
    return cred;
}

/* --psk, --psk-callback: USER:HEXKEY */
static char psk_user[MAX_LIST][128];
static gnutls_datum_t psk_key[MAX_LIST];

static int psk_cb(gnutls_session_t s, char **username, gnutls_datum_t *key)
{
    (void)s;
    *username = gnutls_strdup(psk_user[0]);
    key->data = gnutls_malloc(psk_key[0].size);
    if (*username == NULL || key->data == NULL)
        return -1;
    memcpy(key->data, psk_key[0].data, psk_key[0].size);
    key->size = psk_key[0].size;
    return 0;
}

static int psk_cb2(gnutls_session_t s, gnutls_datum_t *username, gnutls_datum_t *key)
{
    char *user;
    if (psk_cb(s, &user, key) < 0)
        return -1;
    username->data = (unsigned char *)user;
    username->size = (unsigned)strlen(user);
    return 0;
}

#if GNUTLS_VERSION_NUMBER >= 0x030801
static int psk_cb3(gnutls_session_t s, gnutls_datum_t *username, gnutls_datum_t *key,
                   gnutls_psk_key_flags *flags)
{
    if (flags != NULL) /* 3.8.9 passes none in a TLS 1.2 handshake */
        *flags = GNUTLS_PSK_KEY_RAW;
    return psk_cb2(s, username, key);
}
#endif

static gnutls_psk_client_credentials_t make_psk(int i)
{
    gnutls_psk_client_credentials_t cred;
    if (gnutls_psk_allocate_client_credentials(&cred) < 0)
        return NULL;
    if (psk_by_callback == 2)
        gnutls_psk_set_client_credentials_function2(cred, psk_cb2);
#if GNUTLS_VERSION_NUMBER >= 0x030801
    else if (psk_by_callback == 3)
        gnutls_psk_set_client_credentials_function3(cred, psk_cb3);
#endif
    else if (psk_by_callback)
        gnutls_psk_set_client_credentials_function(cred, psk_cb);
    else if (gnutls_psk_set_client_credentials(cred, psk_user[i], &psk_key[i],
                                               GNUTLS_PSK_KEY_RAW) < 0) {
        gnutls_psk_free_client_credentials(cred);
        return NULL;
    }
    return cred;
}

static int parse_psk(int i, const char *arg)
{
    const char *colon = strchr(arg, ':');
    if (colon == NULL || (size_t)(colon - arg) >= sizeof psk_user[i])
        return -1;
    memcpy(psk_user[i], arg, (size_t)(colon - arg));
    psk_user[i][colon - arg] = '\0';
    gnutls_datum_t hex = {(unsigned char *)colon + 1, (unsigned)strlen(colon + 1)};
    return gnutls_hex_decode2(&hex, &psk_key[i]);
}

static gnutls_psk_client_credentials_t shared_psk[MAX_LIST];

/* A verification profile's flags: a name or a number. */
static unsigned profile_flags(const char *p)
{
    static const struct { const char *name; gnutls_certificate_verification_profiles_t id; } ps[] = {
        {"low", GNUTLS_PROFILE_LOW},       {"legacy", GNUTLS_PROFILE_LEGACY},
        {"medium", GNUTLS_PROFILE_MEDIUM}, {"high", GNUTLS_PROFILE_HIGH},
        {"ultra", GNUTLS_PROFILE_ULTRA},   {"future", GNUTLS_PROFILE_FUTURE},
    };
    if (!strcmp(p, "none"))
        return 0;
    for (size_t k = 0; k < sizeof ps / sizeof *ps; k++)
        if (!strcmp(p, ps[k].name))
            return GNUTLS_PROFILE_TO_VFLAGS(ps[k].id);
    return (unsigned)strtoul(p, NULL, 0);
}

/* The configuration's steps, in order. */
static int run_steps(gnutls_session_t s, int config, gnutls_typed_vdata_st *vdata)
{
    for (int k = 0; k < n_steps[config]; k++) {
        const char *st = steps[config][k];
        int r = 0;
        if (!strncmp(st, "prio:", 5)) {
            r = gnutls_priority_set_direct(s, st + 5, NULL);
        } else if (!strncmp(st, "verify:", 7)) {
            gnutls_session_set_verify_cert(s, conn_name(s), profile_flags(st + 7));
        } else if (!strncmp(st, "verify2:", 8)) {
            *vdata = (gnutls_typed_vdata_st){GNUTLS_DT_DNS_HOSTNAME,
                                             (unsigned char *)conn_name(s), 0};
            gnutls_session_set_verify_cert2(s, vdata, 1, profile_flags(st + 8));
        } else {
            r = GNUTLS_E_INVALID_REQUEST;
        }
        if (r < 0)
            return r;
    }
    return 0;
}

static int tcp_connect(void)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *a;
    if (getaddrinfo(host, port_s, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (a = res; a != NULL; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            if (nodelay)
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
            break;
        }
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static int send_all(gnutls_session_t s, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t r = gnutls_record_send(s, buf, len);
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
            continue;
        if (r < 0)
            return (int)r;
        buf += r, len -= (size_t)r;
    }
    return 0;
}

/* The response up to the server's close (nginx closes after an HTTP/1.0
 * response); tickets are processed on the way. */
static int read_all(gnutls_session_t s)
{
    char buf[4096];
    for (;;) {
        ssize_t r = gnutls_record_recv(s, buf, sizeof buf);
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
            continue;
        /* A server may close without close_notify after a whole response. */
        if (r == 0 || r == GNUTLS_E_PREMATURE_TERMINATION)
            return 0;
        if (r < 0)
            return (int)r;
    }
}

/* One connection; prints its line, returns 0 when it worked. */
static int one(int i)
{
    const char *name = n_names ? names[i % n_names] : NULL;
    const char *error = NULL;
    int verified = 0, is_resumed = 0, nodelay_now = -1, r;
    gnutls_session_t s = NULL;
    gnutls_certificate_credentials_t cred =
        fresh_cred ? make_cred(i) : shared_cred[n_cafiles ? i % n_cafiles : 0];
    int fd = -1;
    if (cred == NULL) {
        error = "credentials";
        goto out;
    }
    if ((r = gnutls_init(&s, GNUTLS_CLIENT | (no_tickets ? GNUTLS_NO_TICKETS : 0) |
                                 (early_data ? GNUTLS_ENABLE_EARLY_DATA : 0))) < 0) {
        error = gnutls_strerror_name(r);
        s = NULL;
        goto out;
    }
    int config = i % n_configs;
    int psk = n_psks || psk_by_callback;
    const char *prio = !tls ? NULL
                       : !strcmp(tls, "1.3")
                           ? (psk ? "NORMAL:-VERS-ALL:+VERS-TLS1.3:+ECDHE-PSK:+PSK"
                                  : "NORMAL:-VERS-ALL:+VERS-TLS1.3")
                           : (psk ? "NORMAL:-VERS-ALL:+VERS-TLS1.2:-KX-ALL:+ECDHE-PSK:+PSK"
                                  : "NORMAL:-VERS-ALL:+VERS-TLS1.2");
    gnutls_session_set_ptr(s, (void *)name);
    gnutls_typed_vdata_st vdata;
    if (n_steps[config] > 0)
        r = 0;
    else
        r = prio ? gnutls_priority_set_direct(s, prio, NULL) : gnutls_set_default_priority(s);
    if (r < 0 || (r = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred)) < 0 ||
        (psk && (r = gnutls_credentials_set(s, GNUTLS_CRD_PSK,
                                            shared_psk[n_psks ? i % n_psks : 0])) < 0)) {
        error = gnutls_strerror_name(r);
        goto out;
    }
    if (name != NULL)
        gnutls_server_name_set(s, GNUTLS_NAME_DNS, name, strlen(name));
    if (n_steps[config] > 0) {
        if ((r = run_steps(s, config, &vdata)) < 0) {
            error = gnutls_strerror_name(r);
            goto out;
        }
    } else if (!strcmp(verify, "inhandshake")) {
        gnutls_session_set_verify_cert(s, conn_name(s), 0);
    } else if (!strcmp(verify, "sessioncb")) {
        gnutls_session_set_verify_function(s, verify_cb);
    }
    if (hook_pin.data != NULL)
        gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_CERTIFICATE_PKT, GNUTLS_HOOK_POST,
                                           pin_hook);
    if (take_hook)
        gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET,
                                           GNUTLS_HOOK_POST, take_ticket);
    if (keep) {
        pthread_mutex_lock(&lock);
        if (kept.data != NULL)
            gnutls_session_set_data(s, kept.data, kept.size);
        pthread_mutex_unlock(&lock);
    }
    if ((fd = tcp_connect()) < 0) {
        error = "connect";
        goto out;
    }
    gnutls_transport_set_int(s, fd);
    gnutls_handshake_set_timeout(s, GNUTLS_DEFAULT_HANDSHAKE_TIMEOUT);
    do
        r = gnutls_handshake(s);
    while (r < 0 && !gnutls_error_is_fatal(r));
    if (r < 0) {
        /* A refused certificate shows as a failed verification, not as an
         * error of its own. */
        if (errors || (r != GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR &&
                       r != GNUTLS_E_CERTIFICATE_ERROR))
            error = gnutls_strerror_name(r);
        goto out;
    }
    is_resumed = gnutls_session_is_resumed(s);
    if (show_nodelay)
        getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay_now, &(socklen_t){sizeof(int)});
    if (!strcmp(verify, "byhand") && !peer_ok(s))
        goto out;
    verified = 1;
    char req[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, conn_name(s));
    if ((r = send_all(s, req, strlen(req))) < 0 || (r = read_all(s)) < 0) {
        error = gnutls_strerror_name(r);
        goto out;
    }
    if (keep) {
        gnutls_datum_t d;
        if (gnutls_session_get_data2(s, &d) == 0) {
            pthread_mutex_lock(&lock);
            gnutls_free(kept.data);
            kept = d;
            pthread_mutex_unlock(&lock);
        }
    }
    gnutls_bye(s, GNUTLS_SHUT_WR);
out:
    if (s != NULL)
        gnutls_deinit(s);
    if (fd >= 0)
        close(fd);
    if (fresh_cred && cred != NULL)
        gnutls_certificate_free_credentials(cred);
    int ok = verified && error == NULL;
    pthread_mutex_lock(&lock);
    printf("conn=%d resumed=%d verify=%s%s%s", i, is_resumed, verified ? "ok" : "fail",
           error ? " error=" : "", error ? error : "");
    if (show_nodelay)
        printf(" nodelay=%d", nodelay_now);
    printf("\n");
    resumed += ok && is_resumed;
    failed += !ok;
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
}

/* --change: each set of shared credentials, changed in place. */
static void change(void)
{
    for (int k = 0; k < (n_cafiles ? n_cafiles : 1); k++) {
        gnutls_certificate_credentials_t cred = shared_cred[k];
        int r = 0;
        if (!strcmp(change_what, "sleep") && k == 0)
            sleep(4);
        else if (!strcmp(change_what, "crl"))
            r = gnutls_certificate_set_x509_crl_file(cred, crlfile, GNUTLS_X509_FMT_PEM);
        else if (!strcmp(change_what, "tlcrl"))
            r = gnutls_x509_trust_list_add_trust_file(change_tl[k], NULL, crlfile,
                                                      GNUTLS_X509_FMT_PEM, 0, 0);
        else if (!strcmp(change_what, "ultra"))
            gnutls_certificate_set_verify_flags(cred,
                                                GNUTLS_PROFILE_TO_VFLAGS(GNUTLS_PROFILE_ULTRA));
        if (r < 0)
            fprintf(stderr, "gnutlsclient: --change %s: %s\n", change_what, gnutls_strerror_name(r));
    }
}

static void *run(void *arg)
{
    (void)arg;
    int i;
    while ((i = __atomic_fetch_add(&next_conn, 1, __ATOMIC_RELAXED)) < count) {
        if (i == change_at)
            change();
        one(i);
    }
    return NULL;
}

static int read_pin(const char *file)
{
    gnutls_datum_t pem;
    gnutls_x509_crt_t crt;
    int r = gnutls_load_file(file, &pem);
    if (r < 0)
        return r;
    if ((r = gnutls_x509_crt_init(&crt)) == 0) {
        if ((r = gnutls_x509_crt_import(crt, &pem, GNUTLS_X509_FMT_PEM)) == 0)
            r = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_DER, &pin);
        gnutls_x509_crt_deinit(crt);
    }
    gnutls_free(pem.data);
    return r;
}

static int usage(const char *why)
{
    fprintf(stderr, "gnutlsclient: %s (see the comment at the top of tests/gnutlsclient.c)\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    static char connect_arg[256];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc && (!strcmp(a, "--connect") || !strcmp(a, "--count") ||
                              !strcmp(a, "--threads") || !strcmp(a, "--tls") ||
                              !strcmp(a, "--cafile") || !strcmp(a, "--cafiles") ||
                              !strcmp(a, "--name") || !strcmp(a, "--names") ||
                              !strcmp(a, "--verify") || !strcmp(a, "--pin") ||
                              !strcmp(a, "--path") || !strcmp(a, "--step") ||
                              !strcmp(a, "--crlfile") || !strcmp(a, "--client-cert") ||
                              !strcmp(a, "--change") ||
                              !strcmp(a, "--psk") || !strcmp(a, "--psks") ||
                              !strcmp(a, "--psk-callback") || !strcmp(a, "--psk-function")))
            return usage("an option lacks its value");
        if (!strcmp(a, "--connect")) {
            snprintf(connect_arg, sizeof connect_arg, "%s", argv[++i]);
            char *colon = strrchr(connect_arg, ':');
            if (colon == NULL)
                return usage("--connect takes HOST:PORT");
            *colon = '\0';
            host = connect_arg, port_s = colon + 1;
        }
        else if (!strcmp(a, "--count")) count = atoi(argv[++i]);
        else if (!strcmp(a, "--threads")) threads = atoi(argv[++i]);
        else if (!strcmp(a, "--tls")) tls = argv[++i];
        else if (!strcmp(a, "--cafile")) n_cafiles = 0, cafiles[n_cafiles++] = argv[++i];
        else if (!strcmp(a, "--cafiles")) n_cafiles = 0, split(argv[++i], cafiles, &n_cafiles);
        else if (!strcmp(a, "--name")) n_names = 0, names[n_names++] = argv[++i];
        else if (!strcmp(a, "--names")) n_names = 0, split(argv[++i], names, &n_names);
        else if (!strcmp(a, "--verify")) verify = argv[++i];
        else if (!strcmp(a, "--pin")) {
            if (read_pin(argv[++i]) < 0)
                return usage("--pin: no certificate in the file");
        }
        else if (!strcmp(a, "--keep")) keep = 1;
        else if (!strcmp(a, "--take-hook")) take_hook = 1;
        else if (!strcmp(a, "--exit-now")) exit_now = 1;
        else if (!strcmp(a, "--no-tickets")) no_tickets = 1;
        else if (!strcmp(a, "--early-data")) early_data = 1;
        else if (!strcmp(a, "--hook-pin") && i + 1 < argc) {
            gnutls_datum_t pem;
            if (gnutls_load_file(argv[++i], &pem) < 0 ||
                gnutls_pem_base64_decode2("CERTIFICATE", &pem, &hook_pin) < 0) {
                fprintf(stderr, "gnutlsclient: cannot read %s\n", argv[i]);
                return 2;
            }
            gnutls_free(pem.data);
        }
        else if (!strcmp(a, "--fresh-cred")) fresh_cred = 1;
        else if (!strcmp(a, "--nodelay")) nodelay = 1;
        else if (!strcmp(a, "--show-nodelay")) show_nodelay = 1;
        else if (!strcmp(a, "--errors")) errors = 1;
        else if (!strcmp(a, "--path")) path = argv[++i];
        else if (!strcmp(a, "--step")) {
            if (n_steps[n_configs - 1] == MAX_STEPS)
                return usage("too many --step");
            steps[n_configs - 1][n_steps[n_configs - 1]++] = argv[++i];
        }
        else if (!strcmp(a, "--then")) {
            if (n_configs == MAX_LIST)
                return usage("too many --then");
            n_configs++;
        }
        else if (!strcmp(a, "--crlfile")) crlfile = argv[++i];
        else if (!strcmp(a, "--change")) {
            char *arg = argv[++i], *colon = strchr(arg, ':');
            if (colon == NULL)
                return usage("--change takes K:WHAT");
            *colon = '\0';
            change_at = atoi(arg);
            change_what = colon + 1;
        }
        else if (!strcmp(a, "--client-cert")) {
            char *list = argv[++i];
            for (char *tok = strtok(list, ","); tok && n_client_certs < MAX_LIST;
                 tok = strtok(NULL, ","))
                client_certs[n_client_certs++] = tok;
        }
        else if (!strcmp(a, "--psk")) n_psks = 0, psks[n_psks++] = argv[++i];
        else if (!strcmp(a, "--psks")) n_psks = 0, split(argv[++i], psks, &n_psks);
        else if (!strcmp(a, "--psk-callback")) n_psks = 0, psks[0] = argv[++i], psk_by_callback = 1;
        else if (!strcmp(a, "--psk-function")) psk_function = atoi(argv[++i]);
        else return usage("unknown option");
    }
    if (host == NULL)
        return usage("--connect HOST:PORT is needed");
    if (psk_function < 1 || psk_function > 3)
        return usage("--psk-function takes 1, 2 or 3");
#if GNUTLS_VERSION_NUMBER < 0x030801
    if (psk_function == 3)
        return usage("--psk-function 3: this GnuTLS has no gnutls_psk_set_client_credentials_function3");
#endif
    if (psk_by_callback)
        psk_by_callback = psk_function;
    if (tls && strcmp(tls, "1.2") && strcmp(tls, "1.3"))
        return usage("--tls takes 1.2 or 1.3");
    if (strcmp(verify, "inhandshake") && strcmp(verify, "byhand") && strcmp(verify, "callback") &&
        strcmp(verify, "sessioncb") && strcmp(verify, "none"))
        return usage("--verify takes inhandshake, byhand, callback, sessioncb or none");
    if (count < 0 || threads < 1 || threads > 256)
        return usage("bad --count or --threads");
    if (change_at >= 0 && (threads != 1 || fresh_cred ||
                           (strstr(change_what, "crl") && crlfile == NULL)))
        return usage("--change needs one thread, shared credentials and, for crl, --crlfile");
    if (gnutls_global_init() < 0)
        return 1;
    if (!fresh_cred)
        for (int i = 0; i < (n_cafiles ? n_cafiles : 1); i++) {
            if ((shared_cred[i] = make_cred(i)) == NULL)
                return 1;
            if (change_at >= 0 && !strcmp(change_what, "tlcrl"))
                gnutls_certificate_get_trust_list(shared_cred[i], &change_tl[i]);
        }
    for (int i = 0; i < (psk_by_callback ? 1 : n_psks); i++)
        if (parse_psk(i, psks[i]) < 0 || (shared_psk[i] = make_psk(i)) == NULL)
            return usage("--psk takes USER:HEXKEY");
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t tids[256];
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tids[t], NULL, run, NULL) != 0)
            return 1;
    for (int t = 0; t < threads; t++)
        pthread_join(tids[t], NULL);
    fprintf(stderr, "connections=%d resumed=%d failed=%d callback_calls=%d\n", count, resumed,
            failed, callback_calls);
    if (exit_now) {
        fflush(NULL);
        _exit(failed ? 1 : 0);
    }
    for (int i = 0; i < (n_cafiles ? n_cafiles : 1); i++)
        if (shared_cred[i] != NULL)
            gnutls_certificate_free_credentials(shared_cred[i]);
    for (int i = 0; i < MAX_LIST; i++) {
        if (shared_psk[i] != NULL)
            gnutls_psk_free_client_credentials(shared_psk[i]);
        gnutls_free(psk_key[i].data);
    }
    gnutls_free(kept.data);
    gnutls_free(pin.data);
    gnutls_global_deinit();
    return failed ? 1 : 0;
}
