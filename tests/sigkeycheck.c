/* The fact shim/openssl/judge/sigcache.c keys on, checked on the running
 * libcrypto: a certificate object starts with its to-be-signed part, so
 * that i2d_X509_CINF of the object is the encoding X509_verify checks, the
 * one decoded until a setter changes the certificate, then a new one. For
 * a certificate decoded from DER, then changed, then signed again: the
 * encoding against the to-be-signed element of i2d_X509's (the first in
 * its outer SEQUENCE), and X509_verify's answer. Prints each check that
 * fails; exits 1 on any. */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

static int failed;

static void fail(const char *what)
{
    printf("failed: %s\n", what);
    failed = 1;
}

/* The length of the DER element at p (header and content), or 0. */
static long element(const unsigned char *p, long avail)
{
    const unsigned char *q = p;
    long len;
    int tag, class;
    if (ASN1_get_object(&q, &len, &tag, &class, avail) & 0x80)
        return 0;
    return (long)(q - p) + len;
}

/* i2d_X509_CINF of the object itself against the to-be-signed element of
 * its whole encoding. */
static void same_tbs(X509 *x, const char *what)
{
    unsigned char *der = NULL, *tbs = NULL;
    int len = i2d_X509(x, &der);
    int tlen = i2d_X509_CINF((X509_CINF *)x, &tbs);
    const unsigned char *p = der, *inner;
    long outer_len;
    int tag, class;
    if (len <= 0 || tlen <= 0 || (ASN1_get_object(&p, &outer_len, &tag, &class, len) & 0x80))
        fail(what);
    else if (inner = p, element(inner, len - (p - der)) != tlen || memcmp(inner, tbs, (size_t)tlen))
        fail(what);
    OPENSSL_free(der);
    OPENSSL_free(tbs);
}

/* X509_verify passes exactly when the encoding is the one signed (then
 * answers whether it is). */
static int verdict_follows(X509 *x, EVP_PKEY *key, const unsigned char *signed_tbs, int slen,
                           const char *what)
{
    unsigned char *tbs = NULL;
    int len = i2d_X509_CINF((X509_CINF *)x, &tbs);
    int same = len == slen && memcmp(tbs, signed_tbs, (size_t)len) == 0;
    if ((X509_verify(x, key) == 1) != same)
        fail(what);
    OPENSSL_free(tbs);
    return same;
}

int main(void)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *made = X509_new();
    if (key == NULL || made == NULL)
        return fail("set-up"), 1;
    ASN1_INTEGER_set(X509_get_serialNumber(made), 1);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(made), "CN", MBSTRING_ASC,
                               (const unsigned char *)"sigkeycheck", -1, -1, 0);
    X509_set_issuer_name(made, X509_get_subject_name(made));
    X509_gmtime_adj(X509_getm_notBefore(made), 0);
    X509_gmtime_adj(X509_getm_notAfter(made), 86400);
    X509_set_pubkey(made, key);
    if (X509_sign(made, key, EVP_sha256()) <= 0)
        return fail("sign"), 1;
    same_tbs(made, "made and signed");
    unsigned char *der = NULL;
    int len = i2d_X509(made, &der);
    const unsigned char *p = der;
    X509 *x = d2i_X509(NULL, &p, len);
    if (x == NULL)
        return fail("decode"), 1;
    same_tbs(x, "decoded");
    if (X509_verify(x, key) != 1)
        fail("decoded: verifies");
    unsigned char *before = NULL;
    int blen = i2d_X509_CINF((X509_CINF *)x, &before);
    /* In 3.0.19 the setters copy into the part without marking it changed
     * (crypto/x509/x509_set.c): X509_verify checks the decoded encoding
     * still, and so does the key; 3.5.9's subject setter marks it, and both
     * then see a new one. i2d_re_X509_tbs marks it: a new encoding, which
     * the old signature does not cover. */
    ASN1_INTEGER *serial = ASN1_INTEGER_new();
    ASN1_INTEGER_set(serial, 2);
    X509_set_serialNumber(x, serial);
    ASN1_INTEGER_free(serial);
    same_tbs(x, "serial set");
    verdict_follows(x, key, before, blen, "serial set");
    X509_NAME *name = X509_NAME_new();
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"other", -1, -1, 0);
    X509_set_subject_name(x, name);
    X509_NAME_free(name);
    same_tbs(x, "subject set");
    verdict_follows(x, key, before, blen, "subject set");
    if (i2d_re_X509_tbs(x, NULL) <= 0)
        fail("encoded again");
    same_tbs(x, "encoded again");
    if (verdict_follows(x, key, before, blen, "encoded again"))
        fail("encoded again: a new encoding");
    if (X509_sign(x, key, EVP_sha256()) <= 0)
        fail("signed again");
    same_tbs(x, "signed again");
    if (X509_verify(x, key) != 1)
        fail("signed again: verifies");
    printf("%s\n", failed ? "differs" : "same");
    OPENSSL_free(der);
    OPENSSL_free(before);
    X509_free(x);
    X509_free(made);
    EVP_PKEY_free(key);
    return failed;
}
