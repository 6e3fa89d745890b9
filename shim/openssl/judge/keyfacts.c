/* Facts about keys kept (keyfacts.h).
 *
 * Besides its signatures (sigcache.c) and validity times (vtime.c),
 * X509_verify_cert asks two questions of the keys of a chain that cost
 * more than the rest of a judgment: whether an EC key was decoded from
 * explicit parameters (check_curve, for every certificate of a chain of
 * two or more: EVP_PKEY_get_int_param, through the provider's get_params)
 * and whether an issuer's key is of the algorithm its subject is signed
 * with (check_sig_alg_match, crypto/x509/v3_purp.c: EVP_PKEY_is_a, through
 * the namemap). Three of each are 14,500 of the 57,000 instructions a
 * judged TLS 1.2 resumption costs above a native one (callgrind, OpenSSL
 * 3.0.19, a two-link ECDSA chain). Both functions are called through
 * libcrypto's PLT (objdump -d of 3.0.19 and 3.5.9: the call in check_curve
 * and those of check_sig_alg_match), so they reach the shim.
 *
 * Answers are kept only while the judge runs X509_verify_cert with no
 * code of the program's own (no verify callback, store function, lookup
 * method, purpose or trust check of its own: judge.c), where the keys asked about
 * are those of certificates: the chain's and the candidate issuers'. A
 * handshake asks of its ephemeral keys too, and a program of any key it
 * makes; none of those is kept (tests/keyfactcheck.c, tests/lookupkey.c).
 *
 * For a key a provider holds, the answers stay what they were while the
 * key object is the same key (crypto/evp/p_lib.c, evp_fetch.c,
 * core_namemap.c, providers/implementations/keymgmt/ec_kmgmt.c, OpenSSL
 * 3.0.20 and 3.5.7):
 *   EVP_PKEY_is_a asks whether the name's number in its provider's
 *   namemap is the key manager's own; a namemap only grows (names are
 *   added, never removed or renumbered), so a yes stays yes. A no may
 *   become yes once a provider adds the name: never kept.
 *   "decoded-from-explicit" is a flag of the key's group, set when the
 *   key was decoded.
 * A key made again into the same object (EVP_PKEY_generate and
 * EVP_PKEY_fromdata write into a key they are given) has another key
 * manager, whose type name is compared on every answer; a certificate's
 * key changed in place within its type keeps the first key's answers, as
 * it keeps its signature checks (the limit sigcache.c states). A key
 * without a provider (an engine's, a legacy assignment) is answered from
 * tables a program may add to (EVP_PKEY_asn1_add0): asked every time.
 * An entry holds a reference to its key, so that no other key takes its
 * address while it is here; a key let go is freed when the judgment ends,
 * outside the store's lock that libcrypto may hold while it asks. Each
 * thread keeps its own few, so that no lock joins the threads'
 * judgments. */
#include <string.h>

#include <openssl/core_names.h>

#include "keyfacts.h"
#include "threadend.h"
#include "verified.h"

#define ENTRIES 16
#define NAME_MAX_ 24

enum kind { IS_A = 1, INT_PARAM };

struct fact {
    EVP_PKEY *key; /* NULL: empty */
    const char *type; /* the key's type name when kept */
    enum kind kind;
    int value;
    char name[NAME_MAX_];
};

static _Thread_local struct fact facts[ENTRIES];
static _Thread_local unsigned next_entry;
static _Thread_local bool on;
/* keys let go during this judgment, freed at its end */
static _Thread_local EVP_PKEY *gone[ENTRIES];
static _Thread_local unsigned n_gone;

static void free_gone(void)
{
    while (n_gone > 0)
        R(EVP_PKEY_free)(gone[--n_gone]);
}

/* A thread that ends gives its keys back, those let go in a judgment it
 * did not finish (a cancellation inside a lookup's file reads) too. */
static void release(void)
{
    for (unsigned i = 0; i < ENTRIES; i++)
        if (facts[i].key != NULL) {
            R(EVP_PKEY_free)(facts[i].key);
            facts[i].key = NULL;
        }
    free_gone();
}

void keyfacts_begin(void)
{
    on = feature_on(FEATURE_OPENSSL_KEYFACTS);
}

void keyfacts_end(void)
{
    on = false;
    free_gone();
}

static const struct fact *known(const EVP_PKEY *key, enum kind kind, const char *name)
{
    const char *type = NULL;
    for (unsigned i = 0; i < ENTRIES; i++) {
        const struct fact *f = &facts[i];
        if (f->key != key || f->kind != kind || strcmp(f->name, name) != 0)
            continue;
        if (type == NULL && (type = R(EVP_PKEY_get0_type_name)(key)) == NULL)
            return NULL;
        if (f->type == type)
            return f;
    }
    return NULL;
}

static void note(const EVP_PKEY *key, enum kind kind, const char *name, int value)
{
    if (strlen(name) >= NAME_MAX_ || R(EVP_PKEY_get0_provider)(key) == NULL ||
        n_gone == ENTRIES)
        return;
    /* not kept where the thread's end could not give the key back */
    if (!thread_at_end(release))
        return;
    EVP_PKEY *own = (EVP_PKEY *)key;
    const char *type = R(EVP_PKEY_get0_type_name)(own);
    if (type == NULL || R(EVP_PKEY_up_ref)(own) != 1)
        return;
    struct fact *f = &facts[next_entry];
    next_entry = (next_entry + 1) % ENTRIES;
    if (f->key != NULL)
        gone[n_gone++] = f->key;
    *f = (struct fact){own, type, kind, value, {0}};
    strcpy(f->name, name);
}

int keyfacts_is_a(const EVP_PKEY *key, const char *name,
                  int (*is_a)(const EVP_PKEY *, const char *))
{
    if (!on || key == NULL || name == NULL)
        return is_a(key, name);
    if (known(key, IS_A, name) != NULL)
        return 1;
    int r = is_a(key, name);
    if (r == 1)
        note(key, IS_A, name, 1);
    return r;
}

int keyfacts_get_int_param(const EVP_PKEY *key, const char *name, int *out,
                           int (*get)(const EVP_PKEY *, const char *, int *))
{
    if (!on || key == NULL || name == NULL || out == NULL ||
        strcmp(name, OSSL_PKEY_PARAM_EC_DECODED_FROM_EXPLICIT_PARAMS) != 0)
        return get(key, name, out);
    const struct fact *f = known(key, INT_PARAM, name);
    if (f != NULL) {
        *out = f->value;
        return 1;
    }
    int r = get(key, name, out);
    if (r == 1)
        note(key, INT_PARAM, name, *out);
    return r;
}
