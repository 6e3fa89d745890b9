/* `resumeshim list` and `resumeshim clear` (cmd.h): the directory judged
 * here, with the command's messages; the files read, named and removed by
 * the library's own store code (shim/core/store/), linked in. */
#include <ctype.h>
#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "seam.h"
#include "sha256.h"
#include "store.h"

/* clear waits this long for the processes of the shim to let go of the
 * store's lock: each holds it for a read and a rewrite of one file. */
#define CLEAR_WAIT_US (30L * 1000000)

static const char *user(void)
{
    static char num[24];
    struct passwd *pw = getpwuid(geteuid());
    if (pw != NULL)
        return pw->pw_name;
    snprintf(num, sizeof num, "%ld", (long)geteuid());
    return num;
}

static bool holds_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool any = false;
    while (d != NULL && !any && (e = readdir(d)) != NULL)
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d != NULL)
        closedir(d);
    return any;
}

/* The store directory for list and clear, which refuse one that another
 * user could have planted or can read or change; NULL when there is no
 * store to read (none made yet). */
static char *judged(const char *sub, const char *store, bool none)
{
    if (none)
        usage_error("%s: no store to use with --no-store", sub);
    char *dir = store != NULL ? join(store, "", "") : default_store();
    struct stat st;
    if (dir == NULL || stat(dir, &st) != 0)
        return NULL;
    if (!S_ISDIR(st.st_mode))
        die("%s: %s: not a directory", sub, dir);
    if (st.st_uid != geteuid())
        die("%s: %s: refusing a store not owned by %s", sub, dir, user());
    if (st.st_mode & 077)
        die("%s: %s: refusing a store others can read or write (mode %o)", sub, dir,
            (unsigned)(st.st_mode & 07777));
    /* The library marks the directories it made its store; any other is
     * the user's, and its files are not the store's to list or remove. */
    bool marked = lstat(join(dir, "/", "resumeshim-store"), &st) == 0 && S_ISREG(st.st_mode);
    if (!marked) {
        if (holds_files(dir))
            die("%s: %s: not a store (it holds files and no resumeshim-store file); leaving it "
                "alone", sub, dir);
        return NULL;
    }
    return dir;
}

struct row {
    char server[HEX_LEN + 1];
    const char *name;
    bool tls13;
    long long age, left;
};

struct rows {
    struct row *v;
    size_t n, cap;
    time_t now;
    bool failed;
};

static void visit(const char server[HEX_LEN + 1], const struct record *recs, int n, void *arg)
{
    struct rows *r = arg;
    for (int i = 0; i < n; i++) {
        if (recs[i].expires <= r->now)
            continue;
        if (r->n == r->cap) {
            struct row *more = realloc(r->v, (r->cap = r->cap ? 2 * r->cap : 64) * sizeof *more);
            if (more == NULL) {
                r->failed = true;
                return;
            }
            r->v = more;
        }
        struct row *w = &r->v[r->n++];
        memcpy(w->server, server, sizeof w->server);
        w->name = NULL;
        w->tls13 = recs[i].tls13;
        w->age = r->now - recs[i].born > 0 ? r->now - recs[i].born : 0;
        w->left = recs[i].expires - r->now;
    }
}

static void span(long long s, char out[24])
{
    if (s < 60)
        snprintf(out, 24, "%llds", s);
    else if (s < 3600)
        snprintf(out, 24, "%lldm", s / 60);
    else if (s < 86400)
        snprintf(out, 24, "%lldh", s / 3600);
    else
        snprintf(out, 24, "%lldd", s / 86400);
}

/* The server a name on the command line stands for, as the library names
 * it (HOST:PORT, an IPv6 address in brackets): HOST[:PORT] or a URL; port
 * 443 unless given. */
static char *server_of(const char *arg)
{
    const char *p = strstr(arg, "://");
    char *a;
    if (p != NULL) {
        p += 3;
        size_t len = strcspn(p, "/");
        for (const char *q = p; q < p + len; q++)
            if (*q == '@') {
                len -= (size_t)(q + 1 - p);
                p = q + 1;
            }
        a = strndup(p, len);
    } else {
        a = strdup(arg);
    }
    char *s = a != NULL ? malloc(strlen(a) + 8) : NULL;
    if (s == NULL)
        die("list: out of memory");
    size_t len = strlen(a), colons = 0;
    for (size_t i = 0; i < len; i++)
        colons += a[i] == ':';
    if (a[0] == '[' && strstr(a + 1, "]:") != NULL)
        strcpy(s, a); /* [ADDR]:PORT */
    else if (a[0] == '[' && len >= 2 && a[len - 1] == ']')
        sprintf(s, "%s:443", a);
    else if (colons >= 2)
        sprintf(s, "[%s]:443", a); /* a bare IPv6 address */
    else if (colons == 1)
        strcpy(s, a);
    else
        sprintf(s, "%s:443", a);
    free(a);
    return s;
}

/* Rows of servers named on the command line show the name: the program
 * sent it as spelled, so each is tried lowercased too. */
static void name_rows(struct rows *r, const char salt[HEX_LEN + 1], char **names, int n)
{
    static const struct tls_ops ops = {.name = "resumeshim", .sha256 = sha256};
    for (int i = 0; i < n; i++) {
        char *s = server_of(names[i]), *lower = strdup(s);
        if (lower == NULL)
            die("list: out of memory");
        for (char *c = lower; *c != '\0'; c++)
            *c = (char)tolower((unsigned char)*c);
        const char *both[2] = {s, lower};
        for (int j = 0; j < 2; j++) {
            char hex[HEX_LEN + 1];
            if (!store_server_hash(&ops, salt, both[j], hex))
                continue;
            for (size_t k = 0; k < r->n; k++)
                if (strcmp(r->v[k].server, hex) == 0)
                    r->v[k].name = both[j];
        }
        /* Kept: rows point at them until the listing is printed. */
    }
}

int cmd_list(const char *store, bool none, char **names, int n)
{
    char *dir = judged("list", store, none);
    if (dir == NULL)
        return 0;
    char salt[HEX_LEN + 1] = "";
    struct rows r = {.now = time(NULL)};
    if (!store_list(dir, salt, visit, &r) || r.failed)
        die("list: %s: cannot read the store", dir);
    if (n > 0 && salt[0] != '\0')
        name_rows(&r, salt, names, n);
    if (r.n == 0)
        return 0;
    int width = (int)strlen("SERVER");
    for (size_t i = 0; i < r.n; i++) {
        if (r.v[i].name == NULL) {
            r.v[i].server[16] = '\0';
            r.v[i].name = r.v[i].server;
        }
        if ((int)strlen(r.v[i].name) > width)
            width = (int)strlen(r.v[i].name);
    }
    printf("%-*s  %-8s  %5s  %10s\n", width, "SERVER", "PROTOCOL", "AGE", "EXPIRES IN");
    for (size_t i = 0; i < r.n; i++) {
        char age[24], left[24];
        span(r.v[i].age, age);
        span(r.v[i].left, left);
        printf("%-*s  %-8s  %5s  %10s\n", width, r.v[i].name,
               r.v[i].tls13 ? "TLSv1.3" : "TLSv1.2", age, left);
    }
    if (fflush(stdout) != 0)
        die("list: cannot write the listing");
    return 0;
}

int cmd_clear(const char *store, bool none, int n)
{
    if (n > 0)
        usage_error("clear: takes no arguments");
    char *dir = judged("clear", store, none);
    if (dir != NULL && !store_clear(dir, CLEAR_WAIT_US))
        die("clear: %s: could not empty the store", dir);
    return 0;
}
