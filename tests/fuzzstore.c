/* Fuzzes the store's file reader (shim/core/store/record.c), built with AddressSanitizer
 * and UndefinedBehaviorSanitizer: every mutation of a valid file is either
 * refused or read into records that lie inside the text and write back to
 * the same bytes. A store file may be cut short, damaged, or written by
 * another version; the reader must never read past it or accept garbage.
 *
 * usage: fuzzstore ITERATIONS [SEED]; prints "accepted=A refused=R". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/record.h"

static unsigned long long rng;

static unsigned next(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng >> 33);
}

static size_t valid_file(char *out)
{
    static const char server[] = "0123456789abcdef0123456789abcdef"
                                 "0123456789abcdef0123456789abcdef";
    size_t len = record_header(out, server);
    int n = (int)(next() % 4);
    for (int i = 0; i < n; i++) {
        unsigned char der[300];
        char b1[400], b2[400], b3[400];
        size_t dl = 1 + next() % sizeof der;
        for (size_t j = 0; j < dl; j++)
            der[j] = (unsigned char)next();
        struct record r = {.tls13 = next() % 2, .born = next(), .expires = next(), .sess = b1,
                           .chain = b2, .staple = b3};
        r.sess_len = b64_encode(der, dl, b1);
        r.chain_len = next() % 2 ? b64_encode(der, dl / 2 + 1, b2) : 0;
        r.staple_len = next() % 2 ? b64_encode(der, dl / 3 + 1, b3) : 0;
        len += record_line(out + len, &r);
    }
    return len;
}

static void mutate(char *buf, size_t *len, size_t cap)
{
    static const char alphabet[] = " \n-=+/0123456789abcdefABCDEFtls.resumeshim-store";
    int edits = 1 + (int)(next() % 4);
    for (int e = 0; e < edits && *len > 0; e++) {
        size_t at = next() % *len;
        switch (next() % 5) {
        case 0: /* flip a byte */
            buf[at] = (char)next();
            break;
        case 1: /* a byte from the format's own alphabet */
            buf[at] = alphabet[next() % (sizeof alphabet - 1)];
            break;
        case 2: /* cut short */
            *len = at;
            break;
        case 3: /* insert */
            if (*len < cap) {
                memmove(buf + at + 1, buf + at, *len - at);
                buf[at] = alphabet[next() % (sizeof alphabet - 1)];
                (*len)++;
            }
            break;
        case 4: /* delete */
            memmove(buf + at, buf + at + 1, *len - at - 1);
            (*len)--;
            break;
        }
    }
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 100000;
    rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    static char buf[8192], again[8192];
    static unsigned char scratch[8192];
    long accepted = 0, refused = 0;
    for (long it = 0; it < iterations; it++) {
        size_t len = valid_file(buf);
        if (it % 10 != 0)
            mutate(buf, &len, sizeof buf);
        /* an exact-size copy, so that any read past the end is caught */
        char *text = malloc(len ? len : 1);
        memcpy(text, buf, len);
        char server[HEX_LEN + 1];
        struct record recs[RECORDS_MAX];
        int n = record_parse(text, len, server, recs, RECORDS_MAX);
        if (n < 0) {
            refused++;
            free(text);
            continue;
        }
        accepted++;
        size_t out = record_header(again, server);
        for (int i = 0; i < n; i++) {
            size_t got;
            if (recs[i].sess < text || recs[i].sess + recs[i].sess_len > text + len ||
                (recs[i].chain_len && (recs[i].chain < text ||
                                       recs[i].chain + recs[i].chain_len > text + len)) ||
                (recs[i].staple_len && (recs[i].staple < text ||
                                        recs[i].staple + recs[i].staple_len > text + len))) {
                fprintf(stderr, "record %d points outside the text\n", i);
                return 1;
            }
            if (recs[i].sess_len <= 4 * sizeof scratch / 3)
                b64_decode(recs[i].sess, recs[i].sess_len, scratch, &got);
            out += record_line(again + out, &recs[i]);
        }
        if (out != len || memcmp(again, text, len) != 0) {
            fprintf(stderr, "iteration %ld: accepted text does not write back the same\n", it);
            return 1;
        }
        free(text);
    }
    printf("accepted=%ld refused=%ld\n", accepted, refused);
    return 0;
}
