/* Programs at the edges of a process's life, for the store's tests.
 *
 *   lifecycle errno
 *       the first OpenSSL call (which starts the shim) leaves errno as it
 *       was; prints "errno=N"
 *   lifecycle exit-free PORT CAFILE
 *       OpenSSL initialised first, then an exit handler that frees the
 *       connection: it runs after the shim's own exit handler; prints
 *       "reused=0|1"
 *   lifecycle fork PORT LOCKFILE
 *       two threads connect in a loop while the main thread forks 200
 *       children that sleep: no child may keep the store's lock; prints
 *       "lock=free|held children_with_store_files=N connections=N"
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/ssl.h>

static int port;
static SSL_CTX *ctx;
static SSL *kept;
static volatile int stop;
static int connections;

static SSL *fetch(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    SSL *s = SSL_new(ctx);
    SSL_set_fd(s, fd);
    char buf[512];
    if (SSL_connect(s) == 1 && SSL_write(s, "GET / HTTP/1.0\r\n\r\n", 18) > 0)
        while (SSL_read(s, buf, sizeof buf) > 0)
            ;
    return s;
}

static void done(SSL *s)
{
    int fd = SSL_get_fd(s);
    SSL_shutdown(s);
    SSL_free(s);
    close(fd);
}

static void free_kept(void)
{
    if (kept != NULL)
        done(kept);
}

static void *loop(void *arg)
{
    (void)arg;
    while (!stop) {
        SSL *s = fetch();
        if (s != NULL) {
            done(s);
            __atomic_fetch_add(&connections, 1, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

/* Children of ours with a file of the store's directory open. */
static int holders(const char *dir)
{
    int n = 0;
    char path[64], target[4096];
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc != NULL && (e = readdir(proc)) != NULL) {
        int pid = atoi(e->d_name), ppid = 0;
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = pid > 0 ? fopen(path, "r") : NULL;
        if (f == NULL)
            continue;
        if (fscanf(f, "%*d %*s %*c %d", &ppid) != 1)
            ppid = 0;
        fclose(f);
        snprintf(path, sizeof path, "/proc/%d/fd", pid);
        DIR *fds = ppid == getpid() ? opendir(path) : NULL;
        struct dirent *fe;
        int found = 0;
        while (fds != NULL && (fe = readdir(fds)) != NULL) {
            char link[400];
            snprintf(link, sizeof link, "%s/%s", path, fe->d_name);
            ssize_t len = readlink(link, target, sizeof target - 1);
            if (len > 0) {
                target[len] = '\0';
                found |= strncmp(target, dir, strlen(dir)) == 0;
            }
        }
        if (fds != NULL)
            closedir(fds);
        n += found;
    }
    if (proc != NULL)
        closedir(proc);
    return n;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "errno") == 0) {
        errno = 0;
        SSL_CTX *c = SSL_CTX_new(TLS_client_method());
        printf("errno=%d\n", errno);
        SSL_CTX_free(c);
        return 0;
    }
    if (argc != 4)
        return 2;
    port = atoi(argv[2]);
    if (strcmp(mode, "exit-free") == 0) {
        OPENSSL_init_ssl(0, NULL);
        atexit(free_kept);
        ctx = SSL_CTX_new(TLS_client_method());
        SSL_CTX_load_verify_locations(ctx, argv[3], NULL);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        kept = fetch();
        printf("reused=%d\n", kept != NULL && SSL_session_reused(kept));
        return kept != NULL ? 0 : 1;
    }
    if (strcmp(mode, "fork") != 0)
        return 2;
    ctx = SSL_CTX_new(TLS_client_method());
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, loop, NULL);
    for (int i = 0; i < 200; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            sleep(3);
            _exit(0);
        }
        usleep(1000);
    }
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    int fd = open(argv[3], O_RDWR);
    int held = fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", argv[3]);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    printf("lock=%s children_with_store_files=%d connections=%d\n", held ? "held" : "free",
           holders(dir), connections);
    while (wait(NULL) > 0)
        ;
    return 0;
}
