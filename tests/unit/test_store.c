/* The store (core/store.h) behind the pools, and the tickets the
 * application owns (core/ledger.h). A store is shared by processes: each
 * side runs in a child of its own, which sets the core up afresh. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "start.h"
#include "unit.h"

#define HOST "secret-host.example"

static char store_dir[64];

static bool make_store_dir(void)
{
    snprintf(store_dir, sizeof store_dir, "/tmp/resumeshim-unit.XXXXXX");
    return mkdtemp(store_dir) != NULL;
}

/* Removes the directory and what the store left in it. */
static void remove_store_dir(void)
{
    DIR *d = opendir(store_dir);
    struct dirent *e;
    char path[320];
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", store_dir, e->d_name);
        unlink(path);
    }
    if (d != NULL)
        closedir(d);
    rmdir(store_dir);
}

/* Entries (s-HEX files) in the store directory. */
static int entries(void)
{
    DIR *d = opendir(store_dir);
    struct dirent *e;
    int n = 0;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += strncmp(e->d_name, "s-", 2) == 0;
    if (d != NULL)
        closedir(d);
    return n;
}

static int files(void)
{
    DIR *d = opendir(store_dir);
    struct dirent *e;
    int n = 0;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    return n;
}

/* What one process of the user does: its settings, then a step. */
struct step {
    bool tls13;
    const char *ticket;
    bool reserve;  /* the application keeps it (ledger_reserve), rather than pool_put */
    int after;     /* 0; 1: ledger_disown after reserve; 2: ledger_took; 3: ledger_unreserve */
    int takes;     /* how many takes should find it */
    const char *chain;
};

static bool writer(void *arg)
{
    const struct step *s = arg;
    struct key k;
    time_t now = time(NULL);
    core_setup(8, 1024, store_dir);
    if (!store_on())
        return false;
    make_key(&k, KEY_OPENSSL_CLIENT, HOST);
    struct fake_sess *t = fake_new(s->tls13, s->ticket);
    struct pooled p = pooled_of(t, now);
    if (s->chain != NULL)
        p.chain = (struct chain){.ops = &fake_ops, .certs = fake_certs_new(s->chain)};
    if (s->reserve) {
        /* The application keeps its own reference; the pool's is another. */
        fake_ops.up_ref(t);
        ledger_reserve(&k, p, pool_generation());
        if (s->after == 1)
            ledger_disown(NULL, &fake_ops, t);
        else if (s->after == 2)
            ledger_took(&k, &fake_ops, t);
        else if (s->after == 3)
            ledger_unreserve(&fake_ops, t);
        fake_ops.free(t);
    } else {
        pool_put(&k, p, pool_generation());
    }
    pool_flush();
    pool_forget(&k);
    return fake_live() == 0 && fake_certs_live() == 0 && fake_errors() == 0;
}

/* Takes as many times as the step says it should find the session, and
 * once more for TLS 1.3 (which must then find nothing). */
static bool reader(void *arg)
{
    const struct step *s = arg;
    struct key k;
    struct pooled out;
    time_t now = time(NULL);
    bool ok = true;
    core_setup(8, 1024, store_dir);
    make_key(&k, KEY_OPENSSL_CLIENT, HOST);
    for (int i = 0; i < s->takes; i++) {
        pool_take(&k, now, &out);
        ok = ok && ticket_is(&out, s->ticket) && fs(&out)->tls13 == s->tls13;
        if (s->chain != NULL)
            ok = ok && out.chain.der_len == strlen(s->chain) &&
                 memcmp(out.chain.der, s->chain, out.chain.der_len) == 0;
        drop_taken(&out);
    }
    if (s->tls13 || s->takes == 0) {
        pool_take(&k, now, &out);
        ok = ok && out.sess == NULL;
        drop_taken(&out);
    }
    pool_forget(&k);
    return ok && fake_live() == 0 && fake_errors() == 0;
}

static bool forgetter(void *arg)
{
    (void)arg;
    struct key k;
    core_setup(8, 1024, store_dir);
    make_key(&k, KEY_OPENSSL_CLIENT, HOST);
    store_forget(&k);
    return true;
}

TEST(store_reserved_ticket_taken_once)
{
    CHECK(make_store_dir());
    struct step w = {.tls13 = true, .ticket = "R13", .reserve = true, .chain = "CHAIN"};
    CHECK(in_child(writer, &w));
    CHECK(entries() == 1);
    struct step r = w;
    r.takes = 1;
    CHECK(in_child(reader, &r));
    /* Gone for every process now. */
    r.takes = 0;
    CHECK(in_child(reader, &r));
    remove_store_dir();
}

TEST(store_tls12_taken_repeatedly)
{
    CHECK(make_store_dir());
    struct step w = {.tls13 = false, .ticket = "S12", .chain = "CHAIN"};
    CHECK(in_child(writer, &w));
    struct step r = w;
    r.takes = 3;
    CHECK(in_child(reader, &r));
    CHECK(in_child(reader, &r));
    remove_store_dir();
}

TEST(store_pooled_ticket_flushed)
{
    CHECK(make_store_dir());
    struct step w = {.tls13 = true, .ticket = "P13"};
    CHECK(in_child(writer, &w));
    struct step r = w;
    r.takes = 1;
    CHECK(in_child(reader, &r));
    remove_store_dir();
}

/* A reserved ticket the application then offers itself is not published;
 * one it took (ledger_took) stays reserved; one unreserved goes its ordinary
 * way (nowhere, here). */
TEST(store_reservation_outcomes)
{
    CHECK(make_store_dir());
    struct step w = {.tls13 = true, .ticket = "D", .reserve = true, .after = 1};
    CHECK(in_child(writer, &w));
    struct step r = w;
    CHECK(in_child(reader, &r));
    w = (struct step){.tls13 = true, .ticket = "K", .reserve = true, .after = 2};
    CHECK(in_child(writer, &w));
    r = w;
    r.takes = 1;
    CHECK(in_child(reader, &r));
    w = (struct step){.tls13 = true, .ticket = "U", .reserve = true, .after = 3};
    CHECK(in_child(writer, &w));
    r = w;
    CHECK(in_child(reader, &r));
    remove_store_dir();
}

TEST(store_forget_removes_entry)
{
    CHECK(make_store_dir());
    struct step w = {.tls13 = false, .ticket = "S12"};
    CHECK(in_child(writer, &w));
    CHECK(entries() == 1);
    CHECK(in_child(forgetter, NULL));
    CHECK(entries() == 0);
    struct step r = w;
    CHECK(in_child(reader, &r));
    remove_store_dir();
}

static bool refused(void *arg)
{
    (void)arg;
    struct key k;
    time_t now = time(NULL);
    core_setup(8, 1024, store_dir);
    bool ok = !store_on();
    make_key(&k, KEY_OPENSSL_CLIENT, HOST);
    pool_put(&k, pooled_of(fake_new(false, "S"), now), pool_generation());
    struct fake_sess *t = fake_new(true, "T");
    ledger_reserve(&k, pooled_of(t, now), pool_generation());
    pool_flush();
    pool_forget(&k);
    return ok && fake_live() == 0;
}

/* Any access for group or others, even only to pass through. */
TEST(store_refuses_open_directory)
{
    static const mode_t modes[] = {0755, 0750, 0701};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        CHECK(make_store_dir());
        CHECK(chmod(store_dir, modes[i]) == 0);
        CHECK(in_child(refused, NULL));
        CHECK(files() == 0); /* not even the mark */
        remove_store_dir();
    }
}

TEST(store_refuses_foreign_directory)
{
    CHECK(make_store_dir());
    char path[128];
    snprintf(path, sizeof path, "%s/notes.txt", store_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0);
    close(fd);
    CHECK(in_child(refused, NULL));
    CHECK(files() == 1);
    remove_store_dir();
}

TEST(store_marks_its_directory)
{
    CHECK(make_store_dir());
    struct step w = {.tls13 = false, .ticket = "S12"};
    CHECK(in_child(writer, &w));
    char path[128];
    struct stat st;
    snprintf(path, sizeof path, "%s/resumeshim-store", store_dir);
    CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) == 0);
    remove_store_dir();
}

/* The store lists servers only salted and hashed: no file names one. */
TEST(store_never_names_server_in_clear)
{
    CHECK(make_store_dir());
    struct step w = {.tls13 = false, .ticket = "S12"};
    CHECK(in_child(writer, &w));
    w = (struct step){.tls13 = true, .ticket = "T13", .reserve = true};
    CHECK(in_child(writer, &w));
    DIR *d = opendir(store_dir);
    CHECK(d != NULL);
    struct dirent *e;
    int seen = 0;
    bool clear = false;
    static char buf[1 << 20];
    while ((e = readdir(d)) != NULL) {
        char path[320];
        snprintf(path, sizeof path, "%s/%s", store_dir, e->d_name);
        clear |= strstr(e->d_name, "secret-host") != NULL;
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        seen++;
        clear |= memmem(buf, (size_t)n, "secret-host", 11) != NULL;
    }
    closedir(d);
    CHECK(seen >= 3); /* the mark, the salt, an entry */
    CHECK(!clear);
    remove_store_dir();
}

/* Tickets a full pool pushes out go to the store in batches of a pool's
 * worth while the process runs, not only at exit: here the writer never
 * flushes. */
static bool overflowing_writer(void *arg)
{
    (void)arg;
    struct key k;
    time_t now = time(NULL);
    core_setup(2, 1024, store_dir);
    make_key(&k, KEY_OPENSSL_CLIENT, HOST);
    static const char *const names[] = {"t1", "t2", "t3", "t4", "t5"};
    for (int i = 0; i < 5; i++)
        pool_put(&k, pooled_of(fake_new(true, names[i]), now), pool_generation());
    pool_forget(&k);
    return fake_live() == 0 && fake_errors() == 0;
}

static bool overflow_reader(void *arg)
{
    (void)arg;
    struct key k;
    struct pooled a, b, c;
    time_t now = time(NULL);
    core_setup(2, 1024, store_dir);
    make_key(&k, KEY_OPENSSL_CLIENT, HOST);
    pool_take(&k, now, &a);
    pool_take(&k, now, &b);
    pool_take(&k, now, &c);
    /* t1 went as it arrived (the server's first); t2 and t3, pushed out
     * at the fourth and fifth puts, went as one batch, which left a
     * pool's worth in the entry, the newest (t1 went); the tickets still
     * pooled were never sent. */
    bool ok = ticket_is(&a, "t3") && ticket_is(&b, "t2") && c.sess == NULL;
    drop_taken(&a);
    drop_taken(&b);
    drop_taken(&c);
    return ok && fake_live() == 0;
}

TEST(store_receives_overflow_in_batches)
{
    CHECK(make_store_dir());
    CHECK(in_child(overflowing_writer, NULL));
    CHECK(entries() == 1);
    CHECK(in_child(overflow_reader, NULL));
    remove_store_dir();
}

/* A fork while another thread takes from the store: store_take asks the
 * ledger, under the pools' lock, while it holds the store's, so the fork
 * handlers must take the store's lock first too, or the fork and the take
 * wait on each other for good. Set up as a program is (core_start), with a
 * TLS 1.3 ticket in the store that the program took: every take then asks
 * the ledger and leaves it there. */
static volatile bool stop_taking;

static void *taker(void *arg)
{
    const struct key *k = arg;
    struct pooled out;
    while (!__atomic_load_n(&stop_taking, __ATOMIC_RELAXED)) {
        pool_take(k, time(NULL), &out);
        drop_taken(&out);
    }
    return NULL;
}

static bool forks_while_taking(void *arg)
{
    (void)arg;
    struct key k;
    bool started;
    setenv("RESUMESHIM_STORE", store_dir, 1);
    core_start(&started);
    if (!started || !store_on())
        return false;
    make_key(&k, KEY_OPENSSL_CLIENT, HOST);
    struct fake_sess *mine = fake_new(true, "H");
    ledger_took(&k, &fake_ops, mine);
    fake_ops.free(mine);
    pthread_t t;
    if (pthread_create(&t, NULL, taker, &k) != 0)
        return false;
    /* A deadlock ends here, the test failed. */
    alarm(30);
    for (int i = 0; i < 400; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid > 0)
            waitpid(pid, NULL, 0);
    }
    alarm(0);
    __atomic_store_n(&stop_taking, true, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    return true;
}

TEST(store_fork_while_taking)
{
    CHECK(make_store_dir());
    struct step w = {.tls13 = true, .ticket = "H"};
    CHECK(in_child(writer, &w));
    CHECK(entries() == 1);
    CHECK(in_child(forks_while_taking, NULL));
    /* Nothing took it. */
    CHECK(entries() == 1);
    remove_store_dir();
}
