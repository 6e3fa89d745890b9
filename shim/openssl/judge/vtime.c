/* Validity times converted once (vtime.h).
 *
 * X509_verify_cert checks each certificate's notBefore and notAfter with
 * X509_cmp_time, and the issuer search checks a candidate's too; each call
 * turns the moment compared with into a new ASN1_TIME (X509_time_adj,
 * through BIO_snprintf), parses both and frees one: 54,000 of a judged
 * TLS 1.2 resumption's 115,000 instructions above native ones (callgrind,
 * ten calls a judgment, a two-link ECDSA chain). Debian's libcrypto makes
 * those calls through its PLT, so they reach the shim (objdump -d:
 * ossl_x509_check_cert_time calls X509_cmp_time@plt in 3.0.19 and 3.5.9).
 *
 * X509_cmp_time, the same in OpenSSL 3.0.19 and 3.5.9 (crypto/x509/
 * x509_vfy.c; in 3.5.9's binary the same calls, X509_time_adj,
 * ASN1_TIME_diff, ASN1_TIME_free): 0 unless ctm is a UTCTime of exactly
 * YYMMDDHHMMSSZ or a GeneralizedTime of exactly YYYYMMDDHHMMSSZ, digits and
 * a final Z; then the moment (*cmp_time, or time() when cmp_time is NULL:
 * X509_V_FLAG_USE_CHECK_TIME's check_time is passed as cmp_time) made an
 * ASN1_TIME, and ASN1_TIME_diff of the two, whose day and second parts
 * share their sign; -1 when both are >= 0 (ctm no later than the moment,
 * to the second), else 1; 0 on any failure. So the answer is the sign of
 * (moment - ctm) in seconds, over the proleptic Gregorian calendar
 * (ASN1_TIME_diff counts Julian day numbers), UTCTime years 50-99 being
 * 19xx and 00-49 20xx.
 *
 * Here ctm's value is read from its bytes, once per thread per distinct
 * value (a memo keyed by the bytes themselves, so that no object's address
 * or later change matters), and the moment is read as X509_cmp_time reads
 * it, on every call, inside one judgment too: code of the program's own
 * can run between two checks (a purpose check it put in place with
 * X509_PURPOSE_add) and read the zone again (localtime after setenv TZ),
 * and no judge can tell (tests/tzpurpose.c). Whatever could make OpenSSL
 * fail or differ goes to the real function: any field outside its plain
 * range (a month 13, a 30 February, a second 60), and a moment outside the
 * years 1950 to 9999, which ASN1_TIME_adj cannot or may not represent.
 * tests/vtimecheck.c compares every answer with libcrypto's own. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "vtime.h"

#define ENTRIES 8
#define LEN_MAX 15

struct entry {
    int type;
    int len;
    unsigned char data[LEN_MAX];
    int64_t secs;
};

static _Thread_local struct entry memo[ENTRIES];
static _Thread_local unsigned n_memo, next_entry;

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int two(const unsigned char *p)
{
    return (p[0] - '0') * 10 + (p[1] - '0');
}

static bool leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* ctm's value in seconds since the epoch, when it is of the one form
 * X509_cmp_time accepts and every field is in its plain range. */
static bool convert(const ASN1_TIME *ctm, int64_t *secs)
{
    int len = ctm->length;
    if (!(ctm->type == V_ASN1_UTCTIME && len == 13) &&
        !(ctm->type == V_ASN1_GENERALIZEDTIME && len == 15))
        return false;
    const unsigned char *p = ctm->data;
    for (int i = 0; i < len - 1; i++)
        if (p[i] < '0' || p[i] > '9')
            return false;
    if (p[len - 1] != 'Z')
        return false;
    int64_t y;
    if (len == 13) {
        y = two(p);
        y += y < 50 ? 2000 : 1900;
        p += 2;
    } else {
        y = two(p) * 100 + two(p + 2);
        p += 4;
    }
    int mon = two(p), d = two(p + 2), h = two(p + 4), mi = two(p + 6), s = two(p + 8);
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mon < 1 || mon > 12 || d < 1 || h > 23 || mi > 59 || s > 59 ||
        d > mdays[mon - 1] + (mon == 2 && leap(y)))
        return false;
    *secs = days_from_civil(y, mon, d) * 86400 + h * 3600 + mi * 60 + s;
    return true;
}

static bool value(const ASN1_TIME *ctm, int64_t *secs)
{
    if (ctm->length < 0 || ctm->length > LEN_MAX || ctm->data == NULL)
        return false;
    for (unsigned i = 0; i < n_memo; i++) {
        const struct entry *e = &memo[i];
        if (e->type == ctm->type && e->len == ctm->length &&
            memcmp(e->data, ctm->data, (size_t)e->len) == 0) {
            *secs = e->secs;
            return true;
        }
    }
    if (!convert(ctm, secs))
        return false;
    struct entry *e = &memo[next_entry];
    e->type = ctm->type;
    e->len = ctm->length;
    memcpy(e->data, ctm->data, (size_t)ctm->length);
    e->secs = *secs;
    next_entry = (next_entry + 1) % ENTRIES;
    if (n_memo < ENTRIES)
        n_memo++;
    return true;
}

/* 1950-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define MOMENT_MIN (-631152000LL)
#define MOMENT_MAX 253402300799LL

int vtime_cmp(const ASN1_TIME *ctm, time_t *cmp_time,
              int (*real)(const ASN1_TIME *, time_t *))
{
    int64_t secs;
    if (ctm == NULL || !value(ctm, &secs))
        return real(ctm, cmp_time);
    time_t t = cmp_time != NULL ? *cmp_time : time(NULL);
    if ((int64_t)t < MOMENT_MIN || (int64_t)t > MOMENT_MAX)
        return real(ctm, cmp_time);
    /* The moment's calendar as OpenSSL reads it (gmtime_r: a right/ zone's
     * leap seconds shift it). */
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || tm.tm_sec > 59)
        return real(ctm, cmp_time);
    int64_t moment = days_from_civil((int64_t)tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday) * 86400 +
                     tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec;
    return secs <= moment ? -1 : 1;
}
