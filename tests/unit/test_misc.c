/* The record format, the cache key and the socket under it, the fork
 * registry, a thread's end, and the fake backend's own SHA-256 (the store
 * names files with it). */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "endpoint.h"
#include "fork.h"
#include "helpers.h"
#include "store/record.h"
#include "threadend.h"
#include "unit.h"
#include "util.h"

TEST(fake_sha256_vectors)
{
    unsigned char md[32];
    char hex[65];
    fake_sha256("abc", 3, md);
    hex_encode(md, 32, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    fake_sha256("", 0, md);
    hex_encode(md, 32, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    fake_sha256(two, strlen(two), md);
    hex_encode(md, 32, hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
}

static const char server_hex[] = "00112233445566778899aabbccddeeff"
                                 "00112233445566778899aabbccddeeff";

/* An empty field may come back as NULL. */
static bool same(const char *a, size_t alen, const char *b, size_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

TEST(record_round_trip)
{
    static char buf[HEX_LEN + 40 + 2 * 200];
    struct record r[2] = {
        {.tls13 = true, .born = 1700000000, .expires = 1700003600, .sess = "QUJD",
         .sess_len = 4, .chain = "", .staple = ""},
        {.tls13 = false, .born = 5, .expires = 6, .sess = "QUJDRA==", .sess_len = 8,
         .chain = "Q0VSVA==", .chain_len = 8, .staple = "T0NTUA==", .staple_len = 8},
    };
    size_t len = record_header(buf, server_hex);
    for (int i = 0; i < 2; i++) {
        size_t n = record_line(buf + len, &r[i]);
        CHECK(n == record_line_len(&r[i]));
        len += n;
    }
    struct record got[4];
    char server[HEX_LEN + 1];
    CHECK(record_parse(buf, len, server, got, 4) == 2);
    CHECK(strcmp(server, server_hex) == 0);
    for (int i = 0; i < 2; i++) {
        CHECK(got[i].tls13 == r[i].tls13 && got[i].born == r[i].born &&
              got[i].expires == r[i].expires);
        CHECK(same(got[i].sess, got[i].sess_len, r[i].sess, r[i].sess_len));
        CHECK(same(got[i].chain, got[i].chain_len, r[i].chain, r[i].chain_len));
        CHECK(same(got[i].staple, got[i].staple_len, r[i].staple, r[i].staple_len));
    }
    /* At most max records. */
    CHECK(record_parse(buf, len, server, got, 1) == -1);
}

TEST(record_truncated_rejected)
{
    static char buf[HEX_LEN + 40 + 200];
    struct record r = {.tls13 = true, .born = 1, .expires = 2, .sess = "QUJD", .sess_len = 4,
                       .chain = "", .staple = ""};
    size_t head = record_header(buf, server_hex);
    size_t len = head + record_line(buf + head, &r);
    struct record got[2];
    char server[HEX_LEN + 1];
    CHECK(record_parse(buf, head, server, got, 2) == 0); /* a header alone: an empty entry */
    CHECK(record_parse(buf, len - 1, server, got, 2) == -1); /* its last newline lost */
    CHECK(record_parse(buf, head + 5, server, got, 2) == -1);
    CHECK(record_parse(buf, head - 1, server, got, 2) == -1);
    CHECK(record_parse(buf, 0, server, got, 2) == -1);
}

static void build(struct key *k, enum key_kind kind, const char *a, const char *b)
{
    key_begin(k, &fake_ops, kind);
    key_put_str(k, 'x', a);
    key_put_str(k, 'y', b);
    key_put_num(k, 'p', 443);
    key_end(k);
}

TEST(key_equal_builds_equal)
{
    static struct key a, b;
    build(&a, KEY_OPENSSL_CLIENT, "one", "two");
    build(&b, KEY_OPENSSL_CLIENT, "one", "two");
    CHECK(a.len > 1 && a.len == b.len && memcmp(a.bytes, b.bytes, a.len) == 0);
    CHECK(a.hash == b.hash && key_same(&a, &b));
}

TEST(key_different_fields_differ)
{
    static struct key a, b;
    build(&a, KEY_OPENSSL_CLIENT, "one", "two");
    build(&b, KEY_OPENSSL_SERVER, "one", "two");
    CHECK(!key_same(&a, &b) && a.bytes[0] != b.bytes[0]);
    build(&b, KEY_OPENSSL_CLIENT, "one", "twO");
    CHECK(!key_same(&a, &b) && a.hash != b.hash);
    /* Field boundaries count: "ab"+"c" is not "a"+"bc". */
    build(&a, KEY_OPENSSL_CLIENT, "ab", "c");
    build(&b, KEY_OPENSSL_CLIENT, "a", "bc");
    CHECK(!key_same(&a, &b));
    /* A missing field is not an empty one. */
    build(&a, KEY_OPENSSL_CLIENT, "", "c");
    build(&b, KEY_OPENSSL_CLIENT, NULL, "c");
    CHECK(!key_same(&a, &b));
}

TEST(key_too_large_fails)
{
    static struct key k;
    static unsigned char big[KEY_MAX];
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put(&k, 'x', big, KEY_MAX - 4); /* 1 + 3 + KEY_MAX - 4: exactly full */
    CHECK(k.len == KEY_MAX);
    key_put(&k, 'y', big, 0);
    CHECK(k.len == 0);
    /* Once failed, nothing brings it back. */
    key_put_num(&k, 'p', 1);
    key_put_str(&k, 'n', "x");
    CHECK(k.len == 0);
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_num(&k, 'p', 1);
    key_fail(&k);
    key_put_num(&k, 'p', 2);
    CHECK(k.len == 0);
}

/* No socket found: no key, with a server name too (a session earned on
 * one port of a name must not go to another). */
TEST(key_peer_without_socket_fails)
{
    static struct key k;
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&k, NULL, -1, true);
    CHECK(k.len == 0);
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&k, "a.test", -1, true);
    CHECK(k.len == 0);
}

/* A connected TCP socket on 127.0.0.1: its listener's port. */
static int tcp_pair(int *lfd, unsigned *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    *lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (*lfd < 0 || bind(*lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(*lfd, 4) != 0 ||
        getsockname(*lfd, (struct sockaddr *)&sa, &sl) != 0)
        return -1;
    *port = ntohs(sa.sin_port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        return -1;
    return fd;
}

TEST(key_peer_tcp_gives_port)
{
    static struct key k, named, other;
    int lfd, lfd2;
    unsigned port, port2;
    int fd = tcp_pair(&lfd, &port);
    int fd2 = tcp_pair(&lfd2, &port2);
    CHECK(fd >= 0 && fd2 >= 0 && port != port2);
    char want[64];
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&k, NULL, fd, true);
    key_end(&k);
    snprintf(want, sizeof want, "127.0.0.1:%u", port);
    CHECK(k.len > 0 && strcmp(k.server, want) == 0);
    key_begin(&named, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&named, "a.test", fd, true);
    key_end(&named);
    snprintf(want, sizeof want, "a.test:%u", port);
    CHECK(named.len > 0 && strcmp(named.server, want) == 0);
    CHECK(!key_same(&k, &named));
    /* Another port, another key. */
    key_begin(&other, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&other, NULL, fd2, true);
    key_end(&other);
    CHECK(!key_same(&k, &other));
    close(fd);
    close(fd2);
    close(lfd);
    close(lfd2);
}

/* A listening Unix socket in the abstract namespace (Linux): its name
 * begins with a NUL byte. */
static int abstract_pair(const char *name, int *lfd)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    memcpy(sa.sun_path + 1, name, n);
    socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    *lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (*lfd < 0 || bind(*lfd, (struct sockaddr *)&sa, sl) != 0 || listen(*lfd, 4) != 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sl) != 0)
        return -1;
    return fd;
}

/* Two different servers behind abstract Unix sockets, no server name: the
 * key must tell them apart, or one's sessions are offered to the other.
 * key_put_peer measures sun_path with strnlen, which stops at the leading
 * NUL of every abstract name: both encode as an empty address. */
TEST(key_peer_abstract_unix_sockets_differ)
{
    static struct key a, b;
    char name1[64], name2[64];
    snprintf(name1, sizeof name1, "resumeshim-unit-%d-a", (int)getpid());
    snprintf(name2, sizeof name2, "resumeshim-unit-%d-b", (int)getpid());
    int l1, l2;
    int fd1 = abstract_pair(name1, &l1), fd2 = abstract_pair(name2, &l2);
    CHECK(fd1 >= 0 && fd2 >= 0);
    key_begin(&a, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&a, NULL, fd1, true);
    key_end(&a);
    key_begin(&b, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&b, NULL, fd2, true);
    key_end(&b);
    close(fd1);
    close(fd2);
    close(l1);
    close(l2);
    CHECK(a.len > 0 && b.len > 0);
    CHECK(!key_same(&a, &b));
}

/* Pathname Unix sockets are told apart by their path. */
TEST(key_peer_unix_path)
{
    static struct key k;
    char path[] = "/tmp/resumeshim-unit-sock.XXXXXX";
    CHECK(mkdtemp(path) != NULL);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/s", path);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0), fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(lfd >= 0 && fd >= 0);
    CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(lfd, 1) == 0);
    CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&k, NULL, fd, true);
    CHECK(k.len > 0 && strcmp(k.server, sa.sun_path) == 0);
    close(fd);
    close(lfd);
    unlink(sa.sun_path);
    rmdir(path);
}

static char trail[32];
static size_t trail_n;
#define ROOM(c, up, low, digit)                                                  \
    static void pre_##c(void) { trail[trail_n++] = up; }                          \
    static void par_##c(void) { trail[trail_n++] = low; }                         \
    static void chi_##c(void) { trail[trail_n++] = digit; }
ROOM(a, 'A', 'a', '0')
ROOM(b, 'B', 'b', '1')
ROOM(c, 'C', 'c', '2')

static void nothing(void)
{
}

TEST(fork_handlers_run_as_a_stack)
{
    CHECK(fork_register(pre_a, par_a, chi_a));
    CHECK(fork_register(pre_b, par_b, chi_b));
    CHECK(fork_register(pre_c, par_c, chi_c));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(trail_n == 6 && memcmp(trail, "ABC210", 6) == 0 ? 0 : 1);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(trail_n == 6 && memcmp(trail, "ABCcba", 6) == 0);
    /* FORK_ROOMS at most: the next is told so. */
    for (int i = 3; i < FORK_ROOMS; i++)
        CHECK(fork_register(nothing, nothing, nothing));
    CHECK(!fork_register(nothing, nothing, nothing));
}

/* A connection whose program hides its socket goes by the
 * process's only connected socket while that one has carried nothing; one
 * that has, or a second connected one, leaves it without a key. */
TEST(key_peer_found_when_hidden)
{
    static struct key k;
    int lfd, lfd2;
    unsigned port, port2;
    char want[64];
    int fd = tcp_pair(&lfd, &port);
    CHECK(fd >= 0);
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&k, "a.test", endpoint_fresh_socket(), true);
    snprintf(want, sizeof want, "a.test:%u", port);
    CHECK(k.len > 0 && strcmp(k.server, want) == 0);
    int fd2 = tcp_pair(&lfd2, &port2);
    CHECK(fd2 >= 0);
    CHECK(endpoint_fresh_socket() == -1);
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&k, "a.test", endpoint_fresh_socket(), true);
    CHECK(k.len == 0);
    close(fd2);
    close(lfd2);
    CHECK(write(fd, "x", 1) == 1);
    CHECK(endpoint_fresh_socket() == -1);
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&k, "a.test", endpoint_fresh_socket(), true);
    CHECK(k.len == 0);
    close(fd);
    close(lfd);
}

/* Bytes the program wrote and the kernel still holds (a cork) were
 * carried: such a socket is not fresh, though nothing has been sent. */
TEST(key_peer_corked_bytes_carried)
{
    int lfd, one = 1;
    unsigned port;
    int fd = tcp_pair(&lfd, &port);
    CHECK(fd >= 0);
    CHECK(endpoint_fresh(fd));
    CHECK(setsockopt(fd, IPPROTO_TCP, TCP_CORK, &one, sizeof one) == 0);
    CHECK(write(fd, "x", 1) == 1);
    CHECK(!endpoint_fresh(fd));
    CHECK(endpoint_fresh_socket() == -1);
    close(fd);
    close(lfd);
}

/* Bytes put in flight without a transmission (a send queue restored in
 * TCP repair mode, as CRIU restores a process's sockets) leave tcp_info's
 * sent and unsent counts at 0; they were carried all the same. Repair
 * mode takes CAP_NET_ADMIN: without it, the test takes it in a network
 * namespace of its own (the runner forks each test). */
static bool repair_capable(void)
{
    int probe = socket(AF_INET, SOCK_STREAM, 0), on = TCP_REPAIR_ON;
    bool ok = probe >= 0 && setsockopt(probe, IPPROTO_TCP, TCP_REPAIR, &on, sizeof on) == 0;
    if (probe >= 0)
        close(probe);
    if (ok || unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
        return ok;
    struct ifreq ifr = {.ifr_name = "lo"};
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    ifr.ifr_flags = IFF_UP;
    ok = s >= 0 && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
    if (s >= 0)
        close(s);
    return ok;
}

TEST(key_peer_repaired_bytes_carried)
{
    int lfd, on = TCP_REPAIR_ON, queue = TCP_SEND_QUEUE, off = TCP_REPAIR_OFF_NO_WP;
    unsigned port;
    CHECK(repair_capable());
    int fd = tcp_pair(&lfd, &port);
    CHECK(fd >= 0);
    CHECK(endpoint_fresh(fd));
    CHECK(setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof on) == 0);
    CHECK(setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &queue, sizeof queue) == 0);
    CHECK(write(fd, "hello", 5) == 5);
    CHECK(setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof off) == 0);
    CHECK(!endpoint_fresh(fd));
    close(fd);
    close(lfd);
}

/* What a thread asks for at its end runs once as it ends, however often
 * it asked, and again when it asks during the end; what does not fit is
 * refused. */
static int ran_a, ran_b;
static void end_a(void)
{
    ran_a++;
}
static void end_b(void)
{
    if (++ran_b == 1)
        thread_at_end(end_b);
}
static void end_c(void)
{
}
static void end_d(void)
{
}
static void end_e(void)
{
}
static void *asker(void *unused)
{
    (void)unused;
    bool asked = thread_at_end(end_a) && thread_at_end(end_a) && thread_at_end(end_b) &&
                 thread_at_end(end_c) && thread_at_end(end_d);
    /* a list of four: a fifth is refused, and told so */
    return (void *)(intptr_t)(asked && !thread_at_end(end_e));
}

TEST(thread_end_runs_once_and_again_when_asked)
{
    pthread_t t;
    void *ok = NULL;
    CHECK(pthread_create(&t, NULL, asker, NULL) == 0);
    CHECK(pthread_join(t, &ok) == 0 && ok != NULL);
    CHECK(ran_a == 1 && ran_b == 2);
}

/* A socketpair's peer has no address at all: without a server name there
 * is nothing to tell one such peer from another, so no key. */
TEST(key_peer_unnamed_socket_fails)
{
    static struct key k;
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    key_begin(&k, &fake_ops, KEY_OPENSSL_CLIENT);
    key_put_peer(&k, NULL, sv[0], true);
    close(sv[0]);
    close(sv[1]);
    CHECK(k.len == 0);
}
