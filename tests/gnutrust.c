/*
 * gnutrust: drives a GnuTLS trust list through a script given as arguments
 * and prints what GnuTLS answers at each step, so that a run under the shim
 * can be compared line by line with a run without it (the GnuTLS side of
 * tests/trustload.c).
 *
 *   new [SIZE]           gnutls_x509_trust_list_init(SIZE, 0 if none): the
 *                        current list
 *   cred                 new credentials; the current list is theirs
 *                        (gnutls_certificate_get_trust_list)
 *   credonly             new credentials whose list is never asked for
 *                        until credlist: only the credentials' own calls
 *                        (and a handshake's) reach it
 *   credlist             the credentials' list, asked for now, listed
 *   file CA CRL FL       gnutls_x509_trust_list_add_trust_file (PEM; "-"
 *                        for no file)
 *   mem CA FL            gnutls_x509_trust_list_add_trust_mem of the bytes
 *   dir DIR FL           gnutls_x509_trust_list_add_trust_dir
 *   system               gnutls_x509_trust_list_add_system_trust
 *   credfile CA          gnutls_certificate_set_x509_trust_file
 *   credsystem           gnutls_certificate_set_x509_system_trust
 *   creddir DIR          gnutls_certificate_set_x509_trust_dir
 *   add PEM FL           gnutls_x509_trust_list_add_cas of the file's
 *                        certificates
 *   addcrl PEM FL        gnutls_x509_trust_list_add_crls of its CRLs
 *   remove PEM           gnutls_x509_trust_list_remove_cas
 *   verify LEAF CHAIN HOST VF
 *                        gnutls_x509_trust_list_verify_crt2 (LEAF then the
 *                        chain file's certificates): return, status, and
 *                        each step its output function reports
 *   issuer PEM           gnutls_x509_trust_list_get_issuer (copy and not)
 *   bydn PEM             gnutls_x509_trust_list_get_issuer_by_dn of its
 *                        issuer's name
 *   bykey PEM [dn]       gnutls_x509_trust_list_get_issuer_by_subject_key_id
 *                        of its authority key id (without, or with, the name)
 *   credissuer PEM       gnutls_certificate_get_issuer on the credentials
 *   ocsp RESP            gnutls_ocsp_resp_verify of a DER response
 *   canames CERT KEY     a handshake in the process with a server of these
 *                        credentials (CERT, KEY) asking for a client
 *                        certificate: the CA names it sends, in order
 *   canamesboth CERT KEY the same, the server's session made with
 *                        gnutls_init(GNUTLS_SERVER | GNUTLS_CLIENT), which
 *                        GnuTLS makes a server (lib/state.c)
 *   racewhole CERT KEY T handshakes on a thread of their own, the
 *                        credentials a client's verifying a server of CERT
 *                        (KEY) for localhost, while this thread lets the
 *                        credentials' list be seen (T "list":
 *                        gnutls_certificate_get_trust_list; "server": a
 *                        server session's gnutls_credentials_set): whether
 *                        any of them failed
 *   forkrace CA CERT KEY N  N rounds, each new credentials loading CA's
 *                        bytes after a line of its own (a content new to
 *                        the process) and verifying a server of CERT (KEY),
 *                        while another thread forks children that exit at
 *                        once: how many verified
 *   credverify CERT KEY  a handshake in the process, the credentials a
 *                        client's, with a server presenting CERT (KEY):
 *                        gnutls_certificate_verify_peers2's status
 *   list                 gnutls_x509_trust_list_iter_get_ca, in order
 *   copy SRC DST         replaces DST by SRC's bytes (rename)
 *   rm FILE              removes FILE
 *   fork LEAF CHAIN      a child verifies and lists, then the parent does
 *   freenames            gnutls_certificate_free_ca_names
 *   audit                an audit log function from now on, which prints
 *                        what GnuTLS reports (a non-CA certificate loaded)
 *   credtime N CA OUT    N new credentials each load CA (as credfile): the
 *                        first's count printed, the process's CPU time for
 *                        all in microseconds written to OUT
 *
 * FL: a list of letters, d NO_DUPLICATES, k NO_DUPLICATE_KEY, t USE_IN_TLS,
 * v VERIFY_CRL, f FAIL_ON_INVALID_CRL. VF: c to disable CRL checks, u to
 * refuse unsorted chains. "-" for none, of any argument.
 * Certificates are printed by their subject and SHA-256 fingerprint.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/ocsp.h>
#include <gnutls/x509.h>

static gnutls_x509_trust_list_t list;
static gnutls_certificate_credentials_t cred;

static const char *err(int r)
{
    static char buf[32];
    if (r >= 0) {
        snprintf(buf, sizeof buf, "%d", r);
        return buf;
    }
    const char *n = gnutls_strerror_name(r);
    return n ? n : "?";
}

static void name_of(gnutls_x509_crt_t c)
{
    gnutls_datum_t dn = {NULL, 0};
    unsigned char md[32];
    size_t n = sizeof md;
    if (c == NULL) {
        printf("(none)");
        return;
    }
    gnutls_x509_crt_get_dn3(c, &dn, 0);
    gnutls_x509_crt_get_fingerprint(c, GNUTLS_DIG_SHA256, md, &n);
    printf("%s ", dn.data ? (char *)dn.data : "?");
    for (unsigned i = 0; i < 6 && i < n; i++)
        printf("%02x", md[i]);
    gnutls_free(dn.data);
}

static int read_file(const char *f, gnutls_datum_t *d)
{
    return gnutls_load_file(f, d);
}

/* The file's certificates, or none; the caller frees each and the array. */
static unsigned read_certs(const char *f, gnutls_x509_crt_t **out)
{
    gnutls_datum_t d;
    unsigned n = 0;
    *out = NULL;
    if (read_file(f, &d) < 0) {
        fprintf(stderr, "gnutrust: cannot read %s\n", f);
        exit(2);
    }
    int r = gnutls_x509_crt_list_import2(out, &n, &d, GNUTLS_X509_FMT_PEM, 0);
    gnutls_free(d.data);
    if (r < 0) {
        fprintf(stderr, "gnutrust: no certificates in %s: %s\n", f, err(r));
        exit(2);
    }
    return n;
}

static gnutls_x509_crt_t read_cert(const char *f)
{
    gnutls_x509_crt_t *all;
    unsigned n = read_certs(f, &all);
    for (unsigned i = 1; i < n; i++)
        gnutls_x509_crt_deinit(all[i]);
    gnutls_x509_crt_t c = all[0];
    gnutls_free(all);
    return c;
}

static unsigned tl_flags(const char *s)
{
    unsigned f = 0;
    for (; s && strcmp(s, "-") && *s; s++)
        f |= *s == 'd'   ? GNUTLS_TL_NO_DUPLICATES
             : *s == 'k' ? GNUTLS_TL_NO_DUPLICATE_KEY
             : *s == 't' ? GNUTLS_TL_USE_IN_TLS
             : *s == 'v' ? GNUTLS_TL_VERIFY_CRL
             : *s == 'f' ? GNUTLS_TL_FAIL_ON_INVALID_CRL
                         : 0;
    return f;
}

static int step(gnutls_x509_crt_t cert, gnutls_x509_crt_t issuer, gnutls_x509_crl_t crl,
                unsigned status)
{
    printf("  step ");
    name_of(cert);
    printf(" <- ");
    name_of(issuer);
    if (crl) {
        gnutls_datum_t dn = {NULL, 0};
        gnutls_x509_crl_get_issuer_dn3(crl, &dn, 0);
        printf(" crl %s", dn.data ? (char *)dn.data : "?");
        gnutls_free(dn.data);
    }
    printf(" status 0x%x\n", status);
    return 0;
}

static void status_line(unsigned status)
{
    gnutls_datum_t out = {NULL, 0};
    gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0);
    printf("  status 0x%x %s\n", status, out.data ? (char *)out.data : "");
    gnutls_free(out.data);
}

static void verify(const char *leaf_f, const char *chain_f, const char *host, const char *vf)
{
    gnutls_x509_crt_t *chain = NULL, *all;
    unsigned n = 1;
    if (chain_f && strcmp(chain_f, "-")) {
        unsigned m = read_certs(chain_f, &chain);
        all = calloc(m + 1, sizeof *all);
        memcpy(all + 1, chain, m * sizeof *all);
        n += m;
    } else {
        all = calloc(1, sizeof *all);
    }
    all[0] = read_cert(leaf_f);
    unsigned flags = 0;
    for (; vf && strcmp(vf, "-") && *vf; vf++)
        flags |= *vf == 'c'   ? GNUTLS_VERIFY_DISABLE_CRL_CHECKS
                 : *vf == 'u' ? GNUTLS_VERIFY_DO_NOT_ALLOW_UNSORTED_CHAIN
                              : 0;
    gnutls_typed_vdata_st data = {GNUTLS_DT_DNS_HOSTNAME, (void *)host, 0};
    unsigned status = 0;
    int use_host = host && strcmp(host, "-");
    int r = gnutls_x509_trust_list_verify_crt2(list, all, n, &data, use_host ? 1 : 0, flags,
                                               &status, step);
    printf("verify %s: %s\n", leaf_f, err(r));
    status_line(status);
    for (unsigned i = 0; i < n; i++)
        gnutls_x509_crt_deinit(all[i]);
    free(all);
    gnutls_free(chain);
}

static void list_cas(void)
{
    gnutls_x509_trust_list_iter_t it = NULL;
    gnutls_x509_crt_t c;
    unsigned n = 0;
    int r;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    FILE *out = stdout;
    stdout = m;
    while ((r = gnutls_x509_trust_list_iter_get_ca(list, &it, &c)) == 0) {
        printf("  ca ");
        name_of(c);
        printf("\n");
        gnutls_x509_crt_deinit(c);
        n++;
    }
    fflush(m);
    stdout = out;
    fclose(m);
    gnutls_x509_trust_list_iter_deinit(it);
    printf("list: %u cas, end %s\n%s", n, err(r), buf ? buf : "");
    free(buf);
}

static void issuer_of(const char *f)
{
    gnutls_x509_crt_t c = read_cert(f), iss = NULL;
    int r = gnutls_x509_trust_list_get_issuer(list, c, &iss, 0);
    printf("issuer %s: %s ", f, err(r));
    name_of(r == 0 ? iss : NULL);
    printf("\n");
    iss = NULL;
    r = gnutls_x509_trust_list_get_issuer(list, c, &iss, GNUTLS_TL_GET_COPY);
    printf("issuer copy %s: %s ", f, err(r));
    name_of(r == 0 ? iss : NULL);
    printf("\n");
    if (r == 0)
        gnutls_x509_crt_deinit(iss);
    gnutls_x509_crt_deinit(c);
}

static void by_dn(const char *f)
{
    gnutls_x509_crt_t c = read_cert(f), iss = NULL;
    gnutls_datum_t dn = {NULL, 0};
    gnutls_x509_crt_get_raw_issuer_dn(c, &dn);
    int r = gnutls_x509_trust_list_get_issuer_by_dn(list, &dn, &iss, 0);
    printf("bydn %s: %s ", f, err(r));
    name_of(r == 0 ? iss : NULL);
    printf("\n");
    if (r == 0)
        gnutls_x509_crt_deinit(iss);
    gnutls_free(dn.data);
    gnutls_x509_crt_deinit(c);
}

static void by_key(const char *f, int with_dn)
{
    gnutls_x509_crt_t c = read_cert(f), iss = NULL;
    gnutls_datum_t dn = {NULL, 0};
    unsigned char id[128];
    size_t idn = sizeof id;
    unsigned crit;
    gnutls_x509_crt_get_raw_issuer_dn(c, &dn);
    if (gnutls_x509_crt_get_authority_key_id(c, id, &idn, &crit) < 0)
        idn = 0;
    gnutls_datum_t spki = {id, (unsigned)idn};
    int r = gnutls_x509_trust_list_get_issuer_by_subject_key_id(list, with_dn ? &dn : NULL, &spki,
                                                                &iss, 0);
    printf("bykey%s %s: %s ", with_dn ? " dn" : "", f, err(r));
    name_of(r == 0 ? iss : NULL);
    printf("\n");
    if (r == 0)
        gnutls_x509_crt_deinit(iss);
    gnutls_free(dn.data);
    gnutls_x509_crt_deinit(c);
}

static void ocsp(const char *f)
{
    gnutls_datum_t d;
    gnutls_ocsp_resp_t resp;
    unsigned v = 0;
    if (read_file(f, &d) < 0) {
        fprintf(stderr, "gnutrust: cannot read %s\n", f);
        exit(2);
    }
    gnutls_ocsp_resp_init(&resp);
    int r = gnutls_ocsp_resp_import(resp, &d);
    if (r == 0)
        r = gnutls_ocsp_resp_verify(resp, list, &v, 0);
    printf("ocsp %s: %s verify 0x%x\n", f, err(r), v);
    gnutls_ocsp_resp_deinit(resp);
    gnutls_free(d.data);
}

/* The server's CA names, as the client's certificate callback receives them
 * (gnutls_certificate_set_retrieve_function2): the count, an order-sensitive
 * digest of them all, and the first three. */
static int ca_names_cb(gnutls_session_t s, const gnutls_datum_t *req, int nreq,
                       const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **pcert,
                       unsigned *npcert, gnutls_privkey_t *key)
{
    (void)s, (void)algos, (void)nalgos;
    gnutls_hash_hd_t h;
    unsigned char md[32];
    gnutls_hash_init(&h, GNUTLS_DIG_SHA256);
    for (int i = 0; i < nreq; i++) {
        unsigned char len[4] = {req[i].size >> 24, req[i].size >> 16, req[i].size >> 8,
                                req[i].size};
        gnutls_hash(h, len, 4);
        gnutls_hash(h, req[i].data, req[i].size);
    }
    gnutls_hash_deinit(h, md);
    printf("  ca names %d digest %02x%02x%02x%02x%02x%02x\n", nreq, md[0], md[1], md[2], md[3],
           md[4], md[5]);
    for (int i = 0; i < nreq && i < 3; i++) {
        gnutls_datum_t str = {NULL, 0};
        gnutls_x509_rdn_get2(&req[i], &str, 0);
        printf("  ca name %s\n", str.data ? (char *)str.data : "?");
        gnutls_free(str.data);
    }
    *pcert = NULL;
    *npcert = 0;
    *key = NULL;
    return 0;
}

struct side {
    gnutls_session_t s;
    int r;
};

static void *handshake_thread(void *arg)
{
    struct side *sd = arg;
    do
        sd->r = gnutls_handshake(sd->s);
    while (sd->r < 0 && !gnutls_error_is_fatal(sd->r));
    return NULL;
}

/* A server (init flags server_flags) on scred and a client on ccred, over
 * the socket pair sv. */
static void pair_init(struct side *srv, struct side *cli, gnutls_certificate_credentials_t scred,
                      gnutls_certificate_credentials_t ccred, const int sv[2],
                      unsigned server_flags)
{
    gnutls_init(&srv->s, server_flags);
    gnutls_init(&cli->s, GNUTLS_CLIENT);
    gnutls_set_default_priority(srv->s);
    gnutls_set_default_priority(cli->s);
    gnutls_credentials_set(srv->s, GNUTLS_CRD_CERTIFICATE, scred);
    gnutls_credentials_set(cli->s, GNUTLS_CRD_CERTIFICATE, ccred);
    gnutls_transport_set_int(srv->s, sv[0]);
    gnutls_transport_set_int(cli->s, sv[1]);
}

/* Both handshakes, the server's in a thread of its own. */
static void pair_handshake(struct side *srv, struct side *cli)
{
    pthread_t t;
    pthread_create(&t, NULL, handshake_thread, srv);
    handshake_thread(cli);
    pthread_join(t, NULL);
}

static void ca_names(const char *cert, const char *key, unsigned server_flags)
{
    gnutls_certificate_credentials_t ccred;
    struct side srv = {0}, cli = {0};
    int sv[2];
    int r = gnutls_certificate_set_x509_key_file(cred, cert, key, GNUTLS_X509_FMT_PEM);
    if (r < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        printf("canames: %s\n", err(r));
        return;
    }
    gnutls_certificate_allocate_credentials(&ccred);
    gnutls_certificate_set_retrieve_function2(ccred, ca_names_cb);
    pair_init(&srv, &cli, cred, ccred, sv, server_flags);
    gnutls_certificate_server_set_request(srv.s, GNUTLS_CERT_REQUEST);
    pair_handshake(&srv, &cli);
    printf("canames: client %s server %s\n", err(cli.r), err(srv.r));
    gnutls_deinit(cli.s);
    gnutls_deinit(srv.s);
    gnutls_certificate_free_credentials(ccred);
    close(sv[0]);
    close(sv[1]);
}

/* The credentials judge a server, as a client program's handshake does. */
static void cred_verify(const char *cert, const char *key)
{
    gnutls_certificate_credentials_t scred;
    struct side srv = {0}, cli = {0};
    int sv[2];
    gnutls_certificate_allocate_credentials(&scred);
    int r = gnutls_certificate_set_x509_key_file(scred, cert, key, GNUTLS_X509_FMT_PEM);
    if (r < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        printf("credverify: %s\n", err(r));
        gnutls_certificate_free_credentials(scred);
        return;
    }
    pair_init(&srv, &cli, scred, cred, sv, GNUTLS_SERVER);
    pair_handshake(&srv, &cli);
    unsigned status = 0;
    int v = cli.r == 0 ? gnutls_certificate_verify_peers2(cli.s, &status) : cli.r;
    printf("credverify %s: client %s server %s verify %s status 0x%x\n", cert, err(cli.r),
           err(srv.r), err(v), status);
    gnutls_deinit(cli.s);
    gnutls_deinit(srv.s);
    gnutls_certificate_free_credentials(scred);
    close(sv[0]);
    close(sv[1]);
}

/* racewhole: client handshakes (credentials shared, read only, as GnuTLS
 * allows) on a thread while this one makes the list be seen. */
static gnutls_certificate_credentials_t race_scred;
static volatile unsigned race_done, race_failed, race_stop;

static void *race_loop(void *arg)
{
    (void)arg;
    while (!race_stop) {
        struct side srv = {0}, cli = {0};
        int sv[2];
        pthread_t t;
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            exit(2);
        pair_init(&srv, &cli, race_scred, cred, sv, GNUTLS_SERVER);
        gnutls_session_set_verify_cert(cli.s, "localhost", 0);
        pthread_create(&t, NULL, handshake_thread, &srv);
        handshake_thread(&cli);
        if (cli.r < 0)
            shutdown(sv[1], SHUT_RDWR);
        pthread_join(t, NULL);
        if (cli.r < 0)
            __atomic_add_fetch(&race_failed, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&race_done, 1, __ATOMIC_SEQ_CST);
        gnutls_deinit(cli.s);
        gnutls_deinit(srv.s);
        close(sv[0]);
        close(sv[1]);
    }
    return NULL;
}

static void race_whole(const char *cert, const char *key, const char *trigger)
{
    pthread_t t;
    gnutls_certificate_allocate_credentials(&race_scred);
    if (gnutls_certificate_set_x509_key_file(race_scred, cert, key, GNUTLS_X509_FMT_PEM) < 0)
        exit(2);
    race_done = race_failed = race_stop = 0;
    pthread_create(&t, NULL, race_loop, NULL);
    while (__atomic_load_n(&race_done, __ATOMIC_SEQ_CST) < 1)
        usleep(100);
    if (!strcmp(trigger, "list")) {
        gnutls_x509_trust_list_t l;
        gnutls_certificate_get_trust_list(cred, &l);
    } else {
        gnutls_session_t s;
        gnutls_init(&s, GNUTLS_SERVER);
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
        gnutls_deinit(s);
    }
    unsigned after = __atomic_load_n(&race_done, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&race_done, __ATOMIC_SEQ_CST) < after + 3)
        usleep(100);
    race_stop = 1;
    pthread_join(t, NULL);
    printf("racewhole %s: handshakes failed: %s\n", trigger, race_failed ? "some" : "none");
    gnutls_certificate_free_credentials(race_scred);
}

/* forkrace: a thread that forks, as a program that starts commands does,
 * beside verifications with credentials new each time. */
static volatile int fork_stop;

static void *fork_loop(void *arg)
{
    (void)arg;
    while (!fork_stop) {
        pid_t p = fork();
        if (p == 0)
            _exit(0);
        if (p > 0)
            waitpid(p, NULL, 0);
    }
    return NULL;
}

static void fork_race(const char *ca, const char *cert, const char *key, int n)
{
    gnutls_certificate_credentials_t scred, ccred;
    gnutls_datum_t bytes = {NULL, 0};
    gnutls_certificate_allocate_credentials(&scred);
    if (gnutls_certificate_set_x509_key_file(scred, cert, key, GNUTLS_X509_FMT_PEM) < 0 ||
        gnutls_load_file(ca, &bytes) < 0)
        exit(2);
    pthread_t t;
    int verified = 0;
    fork_stop = 0;
    pthread_create(&t, NULL, fork_loop, NULL);
    for (int i = 0; i < n; i++) {
        char head[64];
        int h = snprintf(head, sizeof head, "# forkrace %d\n", i);
        unsigned char *b = malloc((size_t)h + bytes.size);
        memcpy(b, head, (size_t)h);
        memcpy(b + h, bytes.data, bytes.size);
        gnutls_datum_t d = {b, (unsigned)h + bytes.size};
        gnutls_certificate_allocate_credentials(&ccred);
        gnutls_certificate_set_x509_trust_mem(ccred, &d, GNUTLS_X509_FMT_PEM);
        free(b);
        struct side srv = {0}, cli = {0};
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            exit(2);
        pair_init(&srv, &cli, scred, ccred, sv, GNUTLS_SERVER);
        gnutls_session_set_verify_cert(cli.s, "localhost", 0);
        pair_handshake(&srv, &cli);
        verified += cli.r == 0;
        gnutls_deinit(cli.s);
        gnutls_deinit(srv.s);
        close(sv[0]);
        close(sv[1]);
        gnutls_certificate_free_credentials(ccred);
    }
    fork_stop = 1;
    pthread_join(t, NULL);
    printf("forkrace: %d of %d verified\n", verified, n);
    gnutls_free(bytes.data);
    gnutls_certificate_free_credentials(scred);
}

static void copy(const char *src, const char *dst)
{
    char tmp[4096];
    gnutls_datum_t d;
    snprintf(tmp, sizeof tmp, "%s.tmp", dst);
    if (read_file(src, &d) < 0)
        exit(2);
    FILE *fp = fopen(tmp, "w");
    if (fp == NULL || fwrite(d.data, 1, d.size, fp) != d.size || fclose(fp) != 0 ||
        rename(tmp, dst) != 0)
        exit(2);
    gnutls_free(d.data);
    printf("copy %s %s\n", src, dst);
}

static void audit_fn(gnutls_session_t s, const char *msg)
{
    (void)s;
    printf("  audit %s", msg);
}

/* Loads of one file into many credentials, as many processes of a program
 * would make them: the CPU time they take. */
static void cred_time(unsigned n, const char *ca, const char *out)
{
    gnutls_certificate_credentials_t *all = calloc(n, sizeof *all);
    struct timespec t0, t1;
    int first = 0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (unsigned i = 0; i < n; i++) {
        gnutls_certificate_allocate_credentials(&all[i]);
        int r = gnutls_certificate_set_x509_trust_file(all[i], ca, GNUTLS_X509_FMT_PEM);
        if (i == 0)
            first = r;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    for (unsigned i = 0; i < n; i++)
        gnutls_certificate_free_credentials(all[i]);
    free(all);
    printf("credtime %u %s: %s\n", n, ca, err(first));
    FILE *fp = fopen(out, "w");
    if (fp == NULL)
        exit(2);
    fprintf(fp, "%lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000 +
                              (t1.tv_nsec - t0.tv_nsec) / 1000);
    fclose(fp);
}

static void need_cred(void)
{
    if (cred == NULL) {
        fprintf(stderr, "gnutrust: no credentials (cred)\n");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    gnutls_global_init();
    for (int i = 1; i < argc; i++) {
        const char *cmd = argv[i];
        const char *a = i + 1 < argc ? argv[i + 1] : NULL;
        const char *b = i + 2 < argc ? argv[i + 2] : NULL;
        const char *c = i + 3 < argc ? argv[i + 3] : NULL;
        if (!strcmp(cmd, "new")) {
            unsigned size = 0;
            if (a && strspn(a, "0123456789") == strlen(a) && *a) {
                size = (unsigned)atoi(a);
                i++;
            }
            /* Lists are kept, as a program would keep them, until exit. */
            int r = gnutls_x509_trust_list_init(&list, size);
            printf("new %u: %s\n", size, err(r));
        } else if (!strcmp(cmd, "credonly")) {
            int r = gnutls_certificate_allocate_credentials(&cred);
            list = NULL;
            printf("credonly: %s\n", err(r));
        } else if (!strcmp(cmd, "credlist")) {
            need_cred();
            gnutls_certificate_get_trust_list(cred, &list);
            list_cas();
        } else if (!strcmp(cmd, "credverify")) {
            need_cred();
            cred_verify(a, b);
            i += 2;
        } else if (!strcmp(cmd, "cred")) {
            int r = gnutls_certificate_allocate_credentials(&cred);
            gnutls_certificate_get_trust_list(cred, &list);
            printf("cred: %s\n", err(r));
        } else if (!strcmp(cmd, "file")) {
            const char *ca = strcmp(a, "-") ? a : NULL, *crl = strcmp(b, "-") ? b : NULL;
            int r = gnutls_x509_trust_list_add_trust_file(list, ca, crl, GNUTLS_X509_FMT_PEM,
                                                          tl_flags(c), 0);
            printf("file %s %s %s: %s\n", a, b, c, err(r));
            i += 3;
        } else if (!strcmp(cmd, "mem")) {
            gnutls_datum_t d;
            if (read_file(a, &d) < 0)
                exit(2);
            int r = gnutls_x509_trust_list_add_trust_mem(list, &d, NULL, GNUTLS_X509_FMT_PEM,
                                                         tl_flags(b), 0);
            gnutls_free(d.data);
            printf("mem %s %s: %s\n", a, b, err(r));
            i += 2;
        } else if (!strcmp(cmd, "dir")) {
            int r = gnutls_x509_trust_list_add_trust_dir(list, a, NULL, GNUTLS_X509_FMT_PEM,
                                                         tl_flags(b), 0);
            printf("dir %s %s: %s\n", a, b, err(r));
            i += 2;
        } else if (!strcmp(cmd, "system")) {
            printf("system: %s\n", err(gnutls_x509_trust_list_add_system_trust(list, 0, 0)));
        } else if (!strcmp(cmd, "credfile")) {
            need_cred();
            printf("credfile %s: %s\n", a,
                   err(gnutls_certificate_set_x509_trust_file(cred, a, GNUTLS_X509_FMT_PEM)));
            i++;
        } else if (!strcmp(cmd, "creddir")) {
            need_cred();
            printf("creddir %s: %s\n", a,
                   err(gnutls_certificate_set_x509_trust_dir(cred, a, GNUTLS_X509_FMT_PEM)));
            i++;
        } else if (!strcmp(cmd, "credsystem")) {
            need_cred();
            printf("credsystem: %s\n", err(gnutls_certificate_set_x509_system_trust(cred)));
        } else if (!strcmp(cmd, "add")) {
            gnutls_x509_crt_t *all;
            unsigned n = read_certs(a, &all);
            int r = gnutls_x509_trust_list_add_cas(list, all, n, tl_flags(b));
            printf("add %s %s: %s of %u\n", a, b, err(r), n);
            /* What a list took is its own; without a flag that frees a
             * duplicate, every one was taken. */
            gnutls_free(all);
            i += 2;
        } else if (!strcmp(cmd, "addcrl")) {
            gnutls_datum_t d;
            gnutls_x509_crl_t *crls = NULL;
            unsigned n = 0;
            if (read_file(a, &d) < 0)
                exit(2);
            int r = gnutls_x509_crl_list_import2(&crls, &n, &d, GNUTLS_X509_FMT_PEM, 0);
            gnutls_free(d.data);
            if (r >= 0)
                r = gnutls_x509_trust_list_add_crls(list, crls, n, tl_flags(b), 0);
            printf("addcrl %s %s: %s of %u\n", a, b, err(r), n);
            gnutls_free(crls);
            i += 2;
        } else if (!strcmp(cmd, "remove")) {
            gnutls_x509_crt_t *all;
            unsigned n = read_certs(a, &all);
            int r = gnutls_x509_trust_list_remove_cas(list, all, n);
            printf("remove %s: %s of %u\n", a, err(r), n);
            for (unsigned k = 0; k < n; k++)
                gnutls_x509_crt_deinit(all[k]);
            gnutls_free(all);
            i++;
        } else if (!strcmp(cmd, "verify")) {
            const char *d = i + 4 < argc ? argv[i + 4] : NULL;
            verify(a, b, c, d);
            i += 4;
        } else if (!strcmp(cmd, "issuer")) {
            issuer_of(a);
            i++;
        } else if (!strcmp(cmd, "bydn")) {
            by_dn(a);
            i++;
        } else if (!strcmp(cmd, "bykey")) {
            int dn = b && !strcmp(b, "dn");
            by_key(a, dn);
            i += dn ? 2 : 1;
        } else if (!strcmp(cmd, "credissuer")) {
            need_cred();
            gnutls_x509_crt_t x = read_cert(a), iss = NULL;
            int r = gnutls_certificate_get_issuer(cred, x, &iss, GNUTLS_TL_GET_COPY);
            printf("credissuer %s: %s ", a, err(r));
            name_of(r == 0 ? iss : NULL);
            printf("\n");
            if (r == 0)
                gnutls_x509_crt_deinit(iss);
            gnutls_x509_crt_deinit(x);
            i++;
        } else if (!strcmp(cmd, "ocsp")) {
            ocsp(a);
            i++;
        } else if (!strcmp(cmd, "canames")) {
            need_cred();
            ca_names(a, b, GNUTLS_SERVER);
            i += 2;
        } else if (!strcmp(cmd, "canamesboth")) {
            need_cred();
            ca_names(a, b, GNUTLS_SERVER | GNUTLS_CLIENT);
            i += 2;
        } else if (!strcmp(cmd, "racewhole")) {
            need_cred();
            race_whole(a, b, c);
            i += 3;
        } else if (!strcmp(cmd, "forkrace")) {
            fork_race(a, b, c, i + 4 < argc ? atoi(argv[i + 4]) : 1);
            i += 4;
        } else if (!strcmp(cmd, "list")) {
            list_cas();
        } else if (!strcmp(cmd, "copy")) {
            copy(a, b);
            i += 2;
        } else if (!strcmp(cmd, "rm")) {
            printf("rm %s: %d\n", a, unlink(a));
            i++;
        } else if (!strcmp(cmd, "freenames")) {
            need_cred();
            gnutls_certificate_free_ca_names(cred);
            printf("freenames\n");
        } else if (!strcmp(cmd, "audit")) {
            gnutls_global_set_audit_log_function(audit_fn);
            printf("audit\n");
        } else if (!strcmp(cmd, "credtime")) {
            cred_time((unsigned)atoi(a), b, c);
            i += 3;
        } else if (!strcmp(cmd, "fork")) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                printf("child\n");
                verify(a, b, "-", "-");
                list_cas();
                fflush(stdout);
                _exit(0);
            }
            int st;
            waitpid(pid, &st, 0);
            printf("parent\n");
            verify(a, b, "-", "-");
            i += 2;
        } else {
            fprintf(stderr, "gnutrust: unknown step %s\n", cmd);
            return 2;
        }
    }
    return 0;
}
