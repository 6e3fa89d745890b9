/* A module built against a private, renamed copy of OpenSSL 3, as Python
 * wheels carry them: the test client loads it with dlopen and has it make
 * connections of its own. Its calls must reach its own copy untouched. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

int foreign_fetch(int port, int n);

int foreign_fetch(int port, int n)
{
    static const char req[] = "GET / HTTP/1.0\r\n\r\n";
    char buf[512];
    int ok = 0;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    for (int i = 0; ctx != NULL && i < n; i++) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        SSL *s = SSL_new(ctx);
        if (fd >= 0 && s != NULL && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
            SSL_set_fd(s, fd) == 1 && SSL_connect(s) == 1 &&
            SSL_write(s, req, sizeof req - 1) > 0 && SSL_read(s, buf, sizeof buf) > 0) {
            ok++;
            SSL_shutdown(s);
        }
        SSL_free(s);
        if (fd >= 0)
            close(fd);
    }
    SSL_CTX_free(ctx);
    return ok;
}
