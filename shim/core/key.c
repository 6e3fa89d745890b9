/* The cache key's encoding (key.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "endpoint.h"
#include "key.h"

void key_begin(struct key *k, const struct tls_ops *ops, enum key_kind kind)
{
    k->ops = ops;
    k->len = 1;
    k->bytes[0] = (unsigned char)kind;
    k->server[0] = '\0';
    k->hash = 0;
    k->staple = k->judge = false;
}

void key_put(struct key *k, char tag, const void *data, size_t len)
{
    if (k->len == 0 || len > 0xffff || k->len + 3 + len > KEY_MAX) {
        k->len = 0; /* too much to tell apart: no key, no resumption */
        return;
    }
    k->bytes[k->len++] = (unsigned char)tag;
    k->bytes[k->len++] = (unsigned char)(len >> 8);
    k->bytes[k->len++] = (unsigned char)len;
    memcpy(k->bytes + k->len, data, len);
    k->len += len;
}

/* The most frequent field, written in place (key_put's memcpy of a
 * variable length is a call). */
void key_put_num(struct key *k, char tag, uint64_t v)
{
    if (k->len == 0 || k->len + 3 + sizeof v > KEY_MAX) {
        k->len = 0;
        return;
    }
    unsigned char *p = k->bytes + k->len;
    p[0] = (unsigned char)tag;
    p[1] = 0;
    p[2] = sizeof v;
    memcpy(p + 3, &v, sizeof v);
    k->len += 3 + sizeof v;
}

void key_put_str(struct key *k, char tag, const char *s)
{
    if (s != NULL)
        key_put(k, tag, s, strlen(s));
}

/* A session is offered where it was earned only: to the same name and
 * port, or without a name to the same address; through a Unix-domain
 * socket, to the same absolute path (and name) only. A connection whose
 * socket is not known exactly has no key; nor has one whose TCP socket carried
 * bytes before the handshake began: a program that tunnels through an
 * HTTP proxy (Python's urllib, wget) hands TLS the proxy's socket, whose
 * port is the proxy's, the same for every port of a name behind it (a
 * session earned on one port was offered to another, whose server shared
 * the ticket keys and whose certificate the client did not trust). A
 * program that speaks before its handshake on a direct connection
 * (STARTTLS) is not told from one that tunnels: no key either. */
void key_put_peer(struct key *k, const char *sni, int fd, bool listed)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    bool have = fd >= 0 && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0;
    uint16_t port = 0;
    const void *addr = NULL;
    size_t alen = 0;
    if (have && (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) && !endpoint_fresh(fd))
        have = false;
    if (have && ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
        port = ntohs(in->sin_port);
        addr = &in->sin_addr;
        alen = sizeof in->sin_addr;
    } else if (have && ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
        port = ntohs(in6->sin6_port);
        addr = &in6->sin6_addr;
        alen = sizeof in6->sin6_addr;
    } else if (have && ss.ss_family == AF_UNIX) {
        /* A path ends at its NUL; an abstract name begins with one and is
         * all its bytes; an unnamed socket (socketpair) has no address. */
        const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;
        size_t max = sl > offsetof(struct sockaddr_un, sun_path)
                         ? sl - offsetof(struct sockaddr_un, sun_path)
                         : 0;
        alen = max > 0 && un->sun_path[0] != '\0' ? strnlen(un->sun_path, max) : max;
        /* A relative path is the one its server bound, from a directory
         * the client cannot see: two servers that bound the same one in
         * two directories showed one name, and one took the other's
         * session. No key. */
        bool relative = alen > 0 && un->sun_path[0] != '\0' && un->sun_path[0] != '/';
        addr = alen > 0 && !relative ? un->sun_path : NULL;
    }
    /* A Unix-domain path is one server, whatever name it answers to: two
     * paths under one name were taken for one server, and a session of one
     * offered to the other (which took it, sharing ticket keys). A TCP
     * server is its name and port: the addresses a name resolves to are
     * one service, as curl's own session cache takes them. */
    if (addr == NULL) {
        k->len = 0;
    } else {
        if (sni != NULL)
            key_put_str(k, 'n', sni);
        if (sni == NULL || ss.ss_family == AF_UNIX)
            key_put(k, 'a', addr, alen);
    }
    key_put_num(k, 'p', port);
    /* The name the store lists the server under, once salted and hashed;
     * without a store, nothing reads it (its formatting cost 2,700
     * instructions a connection). */
    char text[INET6_ADDRSTRLEN] = "";
    if (!listed)
        k->server[0] = '\0';
    else if (sni != NULL)
        snprintf(k->server, sizeof k->server, "%s:%u", sni, (unsigned)port);
    else if (alen > 0 && ss.ss_family == AF_UNIX && ((const char *)addr)[0] == '\0')
        snprintf(k->server, sizeof k->server, "@%.*s", (int)alen - 1, (const char *)addr + 1);
    else if (alen > 0 && ss.ss_family == AF_UNIX)
        snprintf(k->server, sizeof k->server, "%.*s", (int)alen, (const char *)addr);
    else if (addr != NULL && inet_ntop(ss.ss_family, addr, text, sizeof text) != NULL)
        snprintf(k->server, sizeof k->server, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
                 text, (unsigned)port);
    else
        k->server[0] = '\0';
}

/* Eight bytes a step, mixed by multiplication, and a final avalanche for
 * the low bits uthash picks a bucket by: uthash's own byte-wise hash cost
 * 3,800 instructions of a resumed connection's key of 700 bytes. Only this
 * process's table uses it; nothing stored depends on it. */
void key_end(struct key *k)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ k->len, w;
    size_t i = 0;
    for (; i + sizeof w <= k->len; i += sizeof w) {
        memcpy(&w, k->bytes + i, sizeof w);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    for (w = 0; i < k->len; i++)
        w = w << 8 | k->bytes[i];
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    h ^= h >> 29;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 32;
    k->hash = (unsigned)h;
}

bool key_same(const struct key *a, const struct key *b)
{
    return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0 &&
           strcmp(a->server, b->server) == 0;
}
