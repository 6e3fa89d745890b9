/* delayrelay: a TCP relay on 127.0.0.1 that holds every chunk of data for a
 * fixed time before passing it on, in both directions, so a benchmark on one
 * machine sees the round trips a network would add. TCP's own handshake and
 * acknowledgements are not delayed (they stay on the loopback), only data.
 *
 * usage: delayrelay --to PORT --delay MS [--port-file FILE]
 * Listens on a free port of 127.0.0.1 (written to FILE) and connects each
 * accepted connection to 127.0.0.1:PORT. Single-threaded, poll-driven; runs
 * until killed. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "listen.h"

#define MAX_CONNS 512

/* Data read at one moment, due for writing delay later; len 0 marks the
 * sender's end of stream. */
struct chunk {
    struct chunk *next;
    long long due;
    size_t len, off;
    char data[];
};

struct dir {
    int from, to, eof_read, eof_sent;
    struct chunk *head, *tail;
};

struct conn {
    int used;
    struct dir d[2];
};

static struct conn conns[MAX_CONNS];
static long long delay_us;

static long long now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void nonblock_nodelay(int fd)
{
    int one = 1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    /* The relay itself must add nothing but the delay. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void drop(struct conn *c)
{
    for (int k = 0; k < 2; k++) {
        struct chunk *ch = c->d[k].head, *next;
        for (; ch; ch = next) {
            next = ch->next;
            free(ch);
        }
    }
    close(c->d[0].from);
    close(c->d[0].to);
    memset(c, 0, sizeof *c);
}

static int upstream(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return -1;
}

static void enqueue(struct dir *d, const char *data, size_t len)
{
    struct chunk *ch = malloc(sizeof *ch + len);
    if (ch == NULL)
        abort();
    ch->next = NULL;
    ch->due = now_us() + delay_us;
    ch->len = len;
    ch->off = 0;
    memcpy(ch->data, data, len);
    if (d->tail)
        d->tail->next = ch;
    else
        d->head = ch;
    d->tail = ch;
}

/* Reads what is there; 0 when the connection must go. */
static int pump_in(struct dir *d)
{
    char buf[65536];
    ssize_t got = read(d->from, buf, sizeof buf);
    if (got > 0) {
        enqueue(d, buf, (size_t)got);
        return 1;
    }
    if (got == 0) {
        d->eof_read = 1;
        enqueue(d, buf, 0);
        return 1;
    }
    return errno == EAGAIN || errno == EINTR;
}

/* Writes what is due; 0 when the connection must go. */
static int pump_out(struct dir *d, long long now)
{
    while (d->head && d->head->due <= now) {
        struct chunk *ch = d->head;
        if (ch->len == 0) {
            shutdown(d->to, SHUT_WR);
            d->eof_sent = 1;
        } else {
            ssize_t put = write(d->to, ch->data + ch->off, ch->len - ch->off);
            if (put < 0)
                return errno == EAGAIN || errno == EINTR;
            ch->off += (size_t)put;
            if (ch->off < ch->len)
                return 1;
        }
        d->head = ch->next;
        if (d->head == NULL)
            d->tail = NULL;
        free(ch);
    }
    return 1;
}

int main(int argc, char **argv)
{
    const char *port_file = NULL;
    int to = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--to")) to = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--delay")) delay_us = atoll(argv[i + 1]) * 1000;
        else if (!strcmp(argv[i], "--port-file")) port_file = argv[i + 1];
        else to = 0, i = argc;
    }
    if (to <= 0 || to > 65535 || delay_us < 0) {
        fprintf(stderr, "usage: delayrelay --to PORT --delay MS [--port-file FILE]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    unsigned bound;
    int ls = listen_loopback(0, 256, port_file, &bound);
    if (ls < 0)
        return 1;
    if (!port_file) {
        printf("%u\n", bound);
        fflush(stdout);
    }

    static struct pollfd pfd[1 + 2 * MAX_CONNS];
    for (;;) {
        long long now = now_us(), wake = -1;
        int np = 0;
        pfd[np++] = (struct pollfd){.fd = ls, .events = POLLIN};
        for (int i = 0; i < MAX_CONNS; i++) {
            struct conn *c = &conns[i];
            if (!c->used)
                continue;
            for (int k = 0; k < 2; k++) {
                /* Socket k is the source of direction k and the destination
                 * of the other one. */
                struct dir *d = &c->d[k], *back = &c->d[1 - k];
                short ev = d->eof_read ? 0 : POLLIN;
                if (back->head && back->head->due <= now)
                    ev |= POLLOUT;
                if (d->head && d->head->due > now && (wake < 0 || d->head->due < wake))
                    wake = d->head->due;
                /* No events: leave it out, or a closed peer's POLLHUP would
                 * wake the loop until the delayed data is out. */
                pfd[np++] = (struct pollfd){.fd = ev ? d->from : -1, .events = ev};
            }
        }
        int timeout = wake < 0 ? -1 : (int)((wake - now + 999) / 1000);
        if (poll(pfd, (nfds_t)np, timeout) < 0 && errno != EINTR)
            return 1;
        if (pfd[0].revents & POLLIN) {
            int a = accept(ls, NULL, NULL), b = a >= 0 ? upstream(to) : -1;
            int slot = 0;
            while (slot < MAX_CONNS && conns[slot].used)
                slot++;
            if (a >= 0 && (b < 0 || slot == MAX_CONNS)) {
                close(a);
                if (b >= 0)
                    close(b);
            } else if (a >= 0) {
                nonblock_nodelay(a);
                nonblock_nodelay(b);
                conns[slot] = (struct conn){.used = 1,
                                            .d = {{.from = a, .to = b}, {.from = b, .to = a}}};
            }
        }
        now = now_us();
        for (int i = 0; i < MAX_CONNS; i++) {
            struct conn *c = &conns[i];
            if (!c->used)
                continue;
            int ok = 1;
            for (int k = 0; k < 2 && ok; k++) {
                struct dir *d = &c->d[k];
                if (!d->eof_read)
                    ok = pump_in(d);
            }
            for (int k = 0; k < 2 && ok; k++)
                ok = pump_out(&c->d[k], now);
            if (!ok || (c->d[0].eof_sent && c->d[1].eof_sent))
                drop(c);
        }
    }
}
