/* The entries' names (names.h): the salted hashes a key's entry and its
 * server are named by, so that no file of the store lists a host, and the
 * salt they are made with (DIR/salt). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "fork.h"
#include "store/dir.h"
#include "store/entry.h"
#include "store/names.h"
#include "util.h"

/* Guards the salt last read, for store_encode. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static char salt_seen[HEX_LEN + 1];

void names_init(void)
{
    fork_guard(&cache_lock);
}

void names_salt_seen(char salt[HEX_LEN + 1])
{
    pthread_mutex_lock(&cache_lock);
    memcpy(salt, salt_seen, sizeof salt_seen);
    pthread_mutex_unlock(&cache_lock);
}

/* SHA-256 of the salt, a newline and the data, in hex. */
bool salted(const struct tls_ops *ops, const char salt[HEX_LEN + 1], const void *data,
            size_t len, char out[HEX_LEN + 1])
{
    unsigned char buf[HEX_LEN + 1 + KEY_MAX + 300], md[32];
    if (len > sizeof buf - HEX_LEN - 1)
        return false;
    memcpy(buf, salt, HEX_LEN);
    buf[HEX_LEN] = '\n';
    memcpy(buf + HEX_LEN + 1, data, len);
    if (!ops->sha256(buf, HEX_LEN + 1 + len, md))
        return false;
    hex_encode(md, 32, out);
    return true;
}

static bool parse_salt(const char *buf, size_t len, char salt[HEX_LEN + 1])
{
    static const char magic[] = STORE_MAGIC " ";
    size_t ml = sizeof magic - 1;
    if (len != ml + HEX_LEN + 1 || memcmp(buf, magic, ml) != 0 || buf[len - 1] != '\n')
        return false;
    if (!is_hex(buf + ml, HEX_LEN))
        return false;
    memcpy(salt, buf + ml, HEX_LEN);
    salt[HEX_LEN] = '\0';
    return true;
}

/* Whether a name is one the store gives an entry, "s-" and 64 hex digits:
 * even in its own directory, the store removes nothing else. */
bool entry_name(const char *name)
{
    return strncmp(name, "s-", 2) == 0 && strlen(name) == 2 + HEX_LEN &&
           is_hex(name + 2, HEX_LEN);
}

/* Entries named under another salt can never be found again. Whether
 * every one went. */
bool remove_entries(int dfd)
{
    DIR *d = listing(dfd);
    if (d == NULL)
        return false;
    struct dirent *e;
    bool all = true;
    while ((e = readdir(d)) != NULL)
        if (entry_name(e->d_name) && unlinkat(dfd, e->d_name, 0) != 0 && errno != ENOENT &&
            errno != EISDIR) /* a directory in the way is not the store's */
            all = false;
    closedir(d);
    return all;
}

/* The store's salt, made on first use (the lock is held). A missing or
 * damaged salt file starts the store afresh. */
bool get_salt(int dfd, bool create, char salt[HEX_LEN + 1])
{
    char buf[128];
    ssize_t n = -1;
    int fd = open_file(dfd, "salt", O_RDONLY, NULL);
    if (fd >= 0) {
        n = read(fd, buf, sizeof buf);
        close(fd);
    } else if (errno != ENOENT) {
        return false;
    }
    if (n > 0 && parse_salt(buf, (size_t)n, salt))
        return true;
    if (!create)
        return false;
    unsigned char rnd[32];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return false;
    hex_encode(rnd, sizeof rnd, salt);
    int len = snprintf(buf, sizeof buf, "%s %s\n", STORE_MAGIC, salt);
    remove_entries(dfd);
    return replace(dfd, "salt", buf, (size_t)len);
}

/* The names given last: naming costs two SHA-256s, and a process names
 * the same few keys on every connection. A key is matched by its whole
 * content: a name is where its sessions are offered from. */
#define NAMED 8
static struct named {
    char salt[HEX_LEN + 1], name[HEX_LEN + 3], server[HEX_LEN + 1];
    struct key *k; /* a copy */
} named[NAMED];
static unsigned named_next;

static bool named_find(const struct key *k, struct stored *st)
{
    bool found = false;
    pthread_mutex_lock(&cache_lock);
    for (unsigned i = 0; i < NAMED && !found; i++) {
        struct named *n = &named[i];
        if (n->k != NULL && strcmp(n->salt, st->salt) == 0 && key_same(n->k, k)) {
            memcpy(st->name, n->name, sizeof st->name);
            memcpy(st->server, n->server, sizeof st->server);
            found = true;
        }
    }
    pthread_mutex_unlock(&cache_lock);
    return found;
}

static void named_add(const struct key *k, const struct stored *st)
{
    struct key *copy = malloc(sizeof *copy);
    if (copy == NULL)
        return;
    *copy = *k;
    pthread_mutex_lock(&cache_lock);
    struct named *n = &named[named_next++ % NAMED];
    struct key *old = n->k;
    memcpy(n->salt, st->salt, sizeof n->salt);
    memcpy(n->name, st->name, sizeof n->name);
    memcpy(n->server, st->server, sizeof n->server);
    n->k = copy;
    pthread_mutex_unlock(&cache_lock);
    free(old);
}

/* Names the entry for a key: its file and the server it is for. */
bool name_with(const struct key *k, struct stored *st)
{
    if (named_find(k, st))
        return true;
    char hex[HEX_LEN + 1];
    if (!salted(k->ops, st->salt, k->bytes, k->len, hex) ||
        !salted(k->ops, st->salt, k->server, strlen(k->server), st->server))
        return false;
    snprintf(st->name, sizeof st->name, "s-%s", hex);
    named_add(k, st);
    return true;
}

/* Reads the salt (the lock is held): it may have been made anew since. */
bool name_entry(int dfd, const struct key *k, struct stored *st)
{
    if (!get_salt(dfd, true, st->salt))
        return false;
    pthread_mutex_lock(&cache_lock);
    memcpy(salt_seen, st->salt, sizeof salt_seen);
    pthread_mutex_unlock(&cache_lock);
    return name_with(k, st);
}
