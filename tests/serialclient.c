/* serialclient: a TLS 1.3 client that keeps a ticket of its own in ways
 * the shim learns of late, or not at all, and offers it later:
 *   getsess  conn1; conn2 (no session of its own) serializes its session
 *            right after the handshake (SSL_get_session + i2d, as Node's
 *            getSession does); conn3 offers the decoded copy
 *   upref    the new-session callback takes a reference to each ticket and
 *            returns 0; conn1; conn2 with no session; conn3 offers the
 *            ticket kept from conn1
 *   fork     the new-session callback serializes each ticket and returns 0;
 *            conn1; a child offers the bytes and exits; then the parent
 *            connects with no session of its own
 *   inherit  conn1 stays open across a fork; the child takes its session
 *            (SSL_get1_session), offers it and exits; the parent then
 *            frees conn1 and connects with no session of its own
 *   persist  the new-session callback serializes each ticket and returns 0
 *            (as Node's session events do), and FILE keeps them across
 *            runs: each ticket in FILE is offered on a connection of its
 *            own, then two connections offer none; at exit FILE holds
 *            every ticket this run serialized
 * Prints "NAME: ok=0|1 reused=N" per connection.
 * usage: serialclient MODE PORT CAFILE [FILE] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned char der[8192]; static int derlen;
/* persist: every ticket serialized, each a 2-byte length and its DER */
static unsigned char saved[65536]; static size_t n_saved;
static SSL_SESSION *kept;
static int cbmode;

static int newsess(SSL *s, SSL_SESSION *sess)
{
    (void)s;
    if (cbmode == 1) { unsigned char *p = der; derlen = i2d_SSL_SESSION(sess, &p); }
    if (cbmode == 3) {
        int len = i2d_SSL_SESSION(sess, NULL);
        unsigned char *p = saved + n_saved + 2;
        if (len > 0 && n_saved + 2 + (size_t)len <= sizeof saved && i2d_SSL_SESSION(sess, &p) == len) {
            saved[n_saved] = (unsigned char)(len >> 8);
            saved[n_saved + 1] = (unsigned char)len;
            n_saved += 2 + (size_t)len;
        }
    }
    if (cbmode == 2) { if (kept) SSL_SESSION_free(kept); SSL_SESSION_up_ref(sess); kept = sess; }
    return 0;
}

/* One request, its tickets read; then the connection and its socket are
 * freed, unless keep is given: then *keep has it open (NULL on failure). */
static int request(SSL_CTX *ctx, int port, const char *what, SSL_SESSION *own, int grab,
                   SSL **keep);

static int run(SSL_CTX *ctx, int port, const char *what, SSL_SESSION *own, int grab)
{
    return request(ctx, port, what, own, grab, NULL);
}

static void end(SSL *s)
{
    int fd = SSL_get_fd(s);
    SSL_shutdown(s);
    SSL_free(s);
    close(fd);
}

static int request(SSL_CTX *ctx, int port, const char *what, SSL_SESSION *own, int grab,
                   SSL **keep)
{
    if (keep != NULL)
        *keep = NULL;
    SSL *s = SSL_new(ctx);
    if (own) SSL_set_session(s, own);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); return 0; }
    SSL_set_fd(s, fd);
    SSL_set_tlsext_host_name(s, "localhost");
    int ok = SSL_connect(s) == 1;
    if (ok && grab) {
        SSL_SESSION *g = SSL_get_session(s);
        unsigned char *p = der;
        derlen = i2d_SSL_SESSION(g, &p);
    }
    char buf[4096];
    const char req[] = "GET / HTTP/1.0\r\nHost: test\r\n\r\n";
    int total = 0, n;
    if (ok && SSL_write(s, req, sizeof req - 1) > 0)
        while ((n = SSL_read(s, buf, sizeof buf)) > 0) total += n;
    ok = ok && total > 0;
    printf("%s: ok=%d reused=%d\n", what, ok, ok ? SSL_session_reused(s) : -1);
    fflush(stdout);
    ERR_clear_error();
    if (keep != NULL)
        *keep = ok ? s : NULL;
    if (keep == NULL || !ok)
        end(s);
    return ok;
}

static SSL_SESSION *from_der(void)
{
    const unsigned char *p = der;
    return derlen > 0 ? d2i_SSL_SESSION(NULL, &p, derlen) : NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    const char *mode = argv[1];
    int port = atoi(argv[2]);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_load_verify_locations(ctx, argv[3], NULL);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (!strcmp(mode, "getsess")) {
        run(ctx, port, "conn1", NULL, 0);
        run(ctx, port, "conn2", NULL, 1);
        SSL_SESSION *s = from_der();
        run(ctx, port, "conn3", s, 0);
    } else if (!strcmp(mode, "fork")) {
        cbmode = 1;
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx, newsess);
        run(ctx, port, "conn1", NULL, 0);
        pid_t pid = fork();
        if (pid == 0) {
            SSL_SESSION *s = from_der();
            run(ctx, port, "child", s, 0);
            _exit(0);
        }
        waitpid(pid, NULL, 0);
        run(ctx, port, "parent", NULL, 0);
    } else if (!strcmp(mode, "inherit")) {
        SSL *s1;
        request(ctx, port, "conn1", NULL, 0, &s1);
        pid_t pid = fork();
        if (pid == 0) {
            run(ctx, port, "child", s1 ? SSL_get1_session(s1) : NULL, 0);
            _exit(0);
        }
        waitpid(pid, NULL, 0);
        if (s1)
            end(s1);
        run(ctx, port, "parent", NULL, 0);
    } else if (!strcmp(mode, "upref")) {
        cbmode = 2;
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx, newsess);
        run(ctx, port, "conn1", NULL, 0);
        SSL_SESSION *k = kept; kept = NULL; cbmode = 0;
        run(ctx, port, "conn2", NULL, 0);
        run(ctx, port, "conn3", k, 0);
    } else if (!strcmp(mode, "persist") && argc > 4) {
        cbmode = 3;
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx, newsess);
        static unsigned char in[65536];
        size_t n_in = 0;
        FILE *f = fopen(argv[4], "rb");
        if (f != NULL) {
            n_in = fread(in, 1, sizeof in, f);
            fclose(f);
        }
        for (size_t at = 0; at + 2 <= n_in;) {
            size_t len = (size_t)in[at] << 8 | in[at + 1];
            const unsigned char *p = in + at + 2;
            if (at + 2 + len > n_in) break;
            SSL_SESSION *s = d2i_SSL_SESSION(NULL, &p, (long)len);
            run(ctx, port, "saved", s, 0);
            SSL_SESSION_free(s);
            at += 2 + len;
        }
        run(ctx, port, "conn1", NULL, 0);
        run(ctx, port, "conn2", NULL, 0);
        if ((f = fopen(argv[4], "wb")) == NULL || fwrite(saved, 1, n_saved, f) != n_saved) return 1;
        fclose(f);
    } else return 2;
    SSL_CTX_free(ctx);
    return 0;
}
