/* The shim's answer to X509_cmp_time (shim/openssl/judge/vtime.c) against
 * libcrypto's own, over validity times of every form and field at and
 * beyond its range and moments around each: prints the count compared and
 * each difference; exits 1 on any. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/x509.h>

#include "../shim/openssl/judge/vtime.h"

static long compared, differed;

static void check(ASN1_TIME *t, time_t *moment)
{
    for (int round = 0; round < 2; round++) { /* the second from the memo */
        int want = X509_cmp_time(t, moment);
        ERR_clear_error();
        int got = vtime_cmp(t, moment, X509_cmp_time);
        ERR_clear_error();
        compared++;
        if (got != want && differed++ < 20)
            printf("differs: type %d \"%.*s\" moment %lld: %d, OpenSSL %d\n", t->type,
                   t->length, (const char *)t->data, moment ? (long long)*moment : -1LL, got,
                   want);
    }
}

/* Moments at, around and far from the time's own value, when OpenSSL
 * reads one from it. */
static void moments(ASN1_TIME *t)
{
    static const time_t fixed[] = {0, -631152000, -631152001, 253402300799, 253402300800,
                                   946684799, 2147483647, 4102444800};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        time_t m = fixed[i];
        check(t, &m);
    }
    struct tm tm;
    ERR_set_mark();
    int ok = ASN1_TIME_to_tm(t, &tm);
    ERR_pop_to_mark();
    if (ok != 1)
        return;
    time_t v = timegm(&tm);
    for (time_t d = -2; d <= 2; d++) {
        time_t m = v + d;
        check(t, &m);
    }
}

static void one(int type, const char *s)
{
    ASN1_TIME *t = ASN1_TIME_new();
    if (t == NULL || !ASN1_STRING_set(t, s, (int)strlen(s)))
        return;
    t->type = type;
    moments(t);
    ASN1_TIME_free(t);
}

int main(void)
{
    static const char *years4[] = {"0000", "0001", "1582", "1899", "1900", "1949", "1950",
                                   "1969", "1970", "1999", "2000", "2038", "2049", "2050",
                                   "2100", "2400", "9998", "9999"};
    static const char *years2[] = {"00", "01", "37", "38", "49", "50", "69", "70", "96", "99"};
    static const char *mons[] = {"00", "01", "02", "03", "04", "09", "12", "13", "99"};
    static const char *days[] = {"00", "01", "28", "29", "30", "31", "32"};
    static const char *hours[] = {"00", "23", "24"};
    static const char *mins[] = {"00", "59", "60"};
    char s[64];
    for (int g = 0; g < 2; g++) {
        size_t ny = g ? sizeof years4 / sizeof *years4 : sizeof years2 / sizeof *years2;
        for (size_t y = 0; y < ny; y++)
            for (size_t mo = 0; mo < sizeof mons / sizeof *mons; mo++)
                for (size_t d = 0; d < sizeof days / sizeof *days; d++)
                    for (size_t h = 0; h < 3; h++)
                        for (size_t mi = 0; mi < 3; mi++)
                            for (size_t se = 0; se < 3; se++) {
                                snprintf(s, sizeof s, "%s%s%s%s%s%sZ",
                                         g ? years4[y] : years2[y], mons[mo], days[d],
                                         hours[h], mins[mi], mins[se]);
                                one(g ? V_ASN1_GENERALIZEDTIME : V_ASN1_UTCTIME, s);
                            }
    }
    /* Forms X509_cmp_time refuses, and the other type's length. */
    static const char *odd[] = {"2501010000Z", "250101000000", "250101000000z",
                                "2501010000000Z", "25010100000aZ", "250101000000+0100",
                                "20250101000000Z", "202501010000Z", "20250101000000.5Z",
                                "2025010100000Z", "", "Z", "2501010000 0Z"};
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        one(V_ASN1_UTCTIME, odd[i]);
        one(V_ASN1_GENERALIZEDTIME, odd[i]);
        one(V_ASN1_OCTET_STRING, odd[i]);
    }
    /* The current time, read by each (a second may pass between). */
    for (int i = 0; i < 2; i++) {
        ASN1_TIME *t = ASN1_TIME_set(NULL, time(NULL) + (i ? 3600 : -3600));
        if (t != NULL) {
            int want = X509_cmp_time(t, NULL), got = vtime_cmp(t, NULL, X509_cmp_time);
            compared++;
            if (got != want && differed++ < 20)
                printf("differs: now %s an hour: %d, OpenSSL %d\n", i ? "+" : "-", got, want);
            ASN1_TIME_free(t);
        }
    }
    printf("compared=%ld differed=%ld\n", compared, differed);
    return differed != 0;
}
