/* The store's file format, as text: a file may be cut short by a crash,
 * written by another version, or damaged, and must be read without trust.
 * Text keeps the parser small enough to check by eye and by fuzzing, and
 * lets `resumeshim list` read a store with standard tools.
 *
 *   resumeshim-store 1
 *   server <sha-256 hex of the salt and host:port>
 *   tls1.3 <born> <expires> <base64 session DER> <base64 peer chain DER, or ->
 *          [<base64 stapled OCSP response DER>]
 *   tls1.2 ...
 *
 * Any line out of place makes the whole file unreadable: the store then
 * rebuilds it rather than guess. */
#include <string.h>

#include "store/record.h"
#include "util.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t b64_encode(const unsigned char *in, size_t len, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        out[o++] = b64[v >> 18];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? b64[v & 63] : '=';
    }
    return o;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

bool b64_decode(const char *in, size_t len, unsigned char *out, size_t *outlen)
{
    if (len == 0 || len % 4 != 0)
        return false;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        bool last = i + 4 == len;
        int pad = last ? (in[i + 3] == '=') + (in[i + 2] == '=' && in[i + 3] == '=') : 0;
        unsigned v = 0;
        for (int j = 0; j < 4; j++) {
            int d = j >= 4 - pad ? 0 : b64_value(in[i + (size_t)j]);
            if (d < 0)
                return false;
            v = v << 6 | (unsigned)d;
        }
        out[o++] = (unsigned char)(v >> 16);
        if (pad < 2)
            out[o++] = (unsigned char)(v >> 8);
        if (pad < 1)
            out[o++] = (unsigned char)v;
    }
    *outlen = o;
    return true;
}

/* The next space- or newline-ended field of a line. */
static bool field(const char **p, const char *end, const char **start, size_t *len, char sep)
{
    const char *q = *p;
    while (q < end && *q != ' ' && *q != '\n')
        q++;
    if (q == end || *q != sep || q == *p)
        return false;
    *start = *p;
    *len = (size_t)(q - *p);
    *p = q + 1;
    return true;
}

static bool number(const char *s, size_t len, int64_t *v)
{
    if (len == 0 || len > 18 || (s[0] == '0' && len > 1))
        return false;
    *v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        *v = *v * 10 + (s[i] - '0');
    }
    return true;
}

static bool all_b64(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (b64_value(s[i]) < 0 && s[i] != '=')
            return false;
    return len % 4 == 0 && len <= RECORD_MAX_B64;
}

static bool parse_record(const char **p, const char *end, struct record *r)
{
    const char *s;
    size_t n;
    if (!field(p, end, &s, &n, ' '))
        return false;
    if (n == 6 && memcmp(s, "tls1.3", 6) == 0)
        r->tls13 = true;
    else if (n == 6 && memcmp(s, "tls1.2", 6) == 0)
        r->tls13 = false;
    else
        return false;
    if (!field(p, end, &s, &n, ' ') || !number(s, n, &r->born) ||
        !field(p, end, &s, &n, ' ') || !number(s, n, &r->expires) ||
        !field(p, end, &r->sess, &r->sess_len, ' ') || !all_b64(r->sess, r->sess_len))
        return false;
    r->staple = NULL;
    r->staple_len = 0;
    if (!field(p, end, &r->chain, &r->chain_len, '\n') &&
        (!field(p, end, &r->chain, &r->chain_len, ' ') ||
         !field(p, end, &r->staple, &r->staple_len, '\n') || !all_b64(r->staple, r->staple_len)))
        return false;
    if (r->chain_len == 1 && r->chain[0] == '-')
        r->chain_len = 0;
    else if (!all_b64(r->chain, r->chain_len))
        return false;
    return true;
}

int record_parse(const char *buf, size_t len, char server[HEX_LEN + 1], struct record *out,
                 int max)
{
    const char *p = buf, *end = buf + len;
    static const char magic[] = STORE_MAGIC "\nserver ";
    size_t ml = sizeof magic - 1;
    if (len < ml + HEX_LEN + 1 || memcmp(p, magic, ml) != 0)
        return -1;
    p += ml;
    if (!is_hex(p, HEX_LEN) || p[HEX_LEN] != '\n')
        return -1;
    memcpy(server, p, HEX_LEN);
    server[HEX_LEN] = '\0';
    p += HEX_LEN + 1;
    int n = 0;
    while (p < end) {
        struct record r;
        if (n == max || !parse_record(&p, end, &r))
            return -1;
        out[n++] = r;
    }
    return n;
}

size_t record_header(char *out, const char server[HEX_LEN + 1])
{
    size_t n = sizeof STORE_MAGIC - 1;
    memcpy(out, STORE_MAGIC "\nserver ", n + 8);
    memcpy(out + n + 8, server, HEX_LEN);
    out[n + 8 + HEX_LEN] = '\n';
    return n + 9 + HEX_LEN;
}

static size_t put_num(char *out, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

static size_t num_len(int64_t v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

size_t record_line_len(const struct record *r)
{
    return 7 + num_len(r->born) + 1 + num_len(r->expires) + 1 + r->sess_len + 1 +
           (r->chain_len > 0 ? r->chain_len : 1) + (r->staple_len > 0 ? 1 + r->staple_len : 0) +
           1;
}

size_t record_line(char *out, const struct record *r)
{
    size_t o = 0;
    memcpy(out, r->tls13 ? "tls1.3 " : "tls1.2 ", 7);
    o += 7;
    o += put_num(out + o, r->born);
    out[o++] = ' ';
    o += put_num(out + o, r->expires);
    out[o++] = ' ';
    memcpy(out + o, r->sess, r->sess_len);
    o += r->sess_len;
    out[o++] = ' ';
    if (r->chain_len == 0)
        out[o++] = '-';
    memcpy(out + o, r->chain, r->chain_len);
    o += r->chain_len;
    if (r->staple_len > 0) {
        out[o++] = ' ';
        memcpy(out + o, r->staple, r->staple_len);
        o += r->staple_len;
    }
    out[o++] = '\n';
    return o;
}
