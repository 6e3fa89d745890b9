/* Signature checks GnuTLS made before, answered from the memo (core/memo).
 *
 * A judgment of a resumed connection checks the server's chain again as a
 * full handshake would, and nearly all of that is Nettle's ECDSA
 * verification of each certificate's signature by its issuer's key:
 * nettle_ecdsa_verify took 2.4 M of the judgment's 3.1 M instructions per
 * resumed TLS 1.2 connection (callgrind, GnuTLS 3.7.9, a one-link P-256
 * chain). GnuTLS calls it across the library boundary, through its PLT, in
 * 3.7.9 and 3.8.9 (nettle.def). The function is pure: its answer depends
 * on the curve, the public point, the digest and the signature, and on
 * nothing else; the memo's key is all of them, byte for byte (the curve by
 * the address of Nettle's own constant, the point's coordinates as the
 * limbs Nettle holds, the digest as given, r and s as GMP's limbs and
 * signed size), so a different key, digest or signature is checked again.
 * Only successes are kept. Checks inside handshakes and judgments only;
 * every other call goes straight through.
 *
 * RSA likewise: PKCS #1 v1.5 (nettle_rsa_pkcs1_verify, over the DigestInfo
 * GnuTLS encodes) and PSS (nettle_rsa_pss_sha256/384/512_verify_digest,
 * over the digest, with the salt length), called through the PLT or, for
 * PSS, through pointers GnuTLS takes of them (R_X86_64_GLOB_DAT, bound to
 * the first definition in the process's scope as a PLT slot is), in 3.7.9
 * and 3.8.9 (lib/nettle/pk.c: _wrap_nettle_pk_verify,
 * _rsa_pss_verify_digest). A key of 4096 bits and its signature fit the
 * memo's 1,280 bytes; a larger one is checked every time. */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/ecdsa.h>
#include <nettle/rsa.h>

#include "memo.h"
#include "util.h"
#include "verified.h"

#define EXPORT __attribute__((visibility("default")))

typedef int ecdsa_verify_fn(const struct ecc_point *, size_t, const uint8_t *,
                            const struct dsa_signature *);
typedef unsigned ecc_size_fn(const struct ecc_curve *);

/* A key, on the stack of every check (its size: see above). */
struct key {
    size_t len;
    unsigned char b[1280];
};

static bool put(struct key *k, const void *p, size_t n)
{
    if (n > sizeof k->b - k->len)
        return false;
    memcpy(k->b + k->len, p, n);
    k->len += n;
    return true;
}

/* An integer exactly: GMP's signed size (its sign and limb count), then
 * its limbs, least significant first (gmp.h's __mpz_struct, GMP 6's ABI). */
static bool put_mpz(struct key *k, const __mpz_struct *z)
{
    int size = z->_mp_size;
    size_t limbs = (size_t)(size < 0 ? -size : size);
    return put(k, &size, sizeof size) && put(k, z->_mp_d, limbs * sizeof(mp_limb_t));
}

static bool key_of(struct key *k, ecc_size_fn *size, const struct ecc_point *pub, size_t length,
                   const uint8_t *digest, const struct dsa_signature *sig)
{
    unsigned limbs = size(pub->ecc);
    k->len = 0;
    return put(k, "ecdsa", 5) && put(k, &pub->ecc, sizeof pub->ecc) &&
           put(k, &limbs, sizeof limbs) && put(k, pub->p, 2 * (size_t)limbs * sizeof(mp_limb_t)) &&
           put(k, &length, sizeof length) && put(k, digest, length) && put_mpz(k, sig->r) &&
           put_mpz(k, sig->s);
}

/* The objects loaded, by name, however many (dl_iterate_phdr's callback
 * only notes them: it runs under the loader's lock, which dlopen takes
 * too). */
struct loaded {
    size_t n, cap;
    char **names;
    bool short_of_memory;
};

static int note(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct loaded *l = arg;
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **names = realloc(l->names, cap * sizeof *names);
        if (names == NULL)
            return l->short_of_memory = true;
        l->names = names, l->cap = cap;
    }
    if ((l->names[l->n] = strdup(info->dlpi_name)) == NULL)
        return l->short_of_memory = true;
    l->n++;
    return 0;
}

/* Nettle's own name: next after the shim, else in whichever object
 * defines it under HOGWEED_6 (a libhogweed loaded into a local scope, by
 * dlopen or as a module's private copy, whose callers the shim's
 * definition reaches all the same), among all the objects loaded. */
static void *nettle_real(const char *name, void *self)
{
    void *p = dlvsym(RTLD_NEXT, name, "HOGWEED_6");
    if (p != NULL)
        return p;
    struct loaded l = {0};
    dl_iterate_phdr(note, &l);
    for (size_t i = 0; i < l.n && p == NULL; i++) {
        void *h = dlopen(l.names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h == NULL)
            continue;
        p = dlvsym(h, name, "HOGWEED_6");
        if (p == self)
            p = NULL;
        dlclose(h);
    }
    for (size_t i = 0; i < l.n; i++)
        free(l.names[i]);
    free(l.names);
    return p;
}

/* A function of Nettle's, found once and kept: the library it lies in is
 * made to stay loaded (RTLD_NODELETE, as real.c keeps libgnutls), so a
 * Nettle a plugin brought and unloads cannot leave the shim calling code
 * that is gone. Where it cannot be kept, it is found again at each call. */
struct real {
    const char *name;
    void *self;
    void *fn; /* kept: found, and its library made to stay */
};

#define REAL(name_, self_) {.name = name_, .self = self_}

static bool keep_loaded(void *fn)
{
    Dl_info info;
    return dladdr(fn, &info) != 0 && info.dli_fname != NULL &&
           dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

static void *real_of(struct real *r)
{
    void *fn = __atomic_load_n(&r->fn, __ATOMIC_ACQUIRE);
    if (fn != NULL)
        return fn;
    fn = nettle_real(r->name, r->self);
    if (fn != NULL && keep_loaded(fn))
        __atomic_store_n(&r->fn, fn, __ATOMIC_RELEASE);
    return fn;
}

static struct real real_verify = REAL("nettle_ecdsa_verify", (void *)nettle_ecdsa_verify),
                   real_size = REAL("nettle_ecc_size", NULL);

static bool memo_on(void)
{
    return in_handshake() && feature_on(FEATURE_GNUTLS_SIGMEMO);
}

/* RSA: the key's size, modulus and exponent, then what the variant reads
 * (tag: which function; param: PSS's salt length or PKCS #1's DigestInfo
 * length), the data, the signature. */
static bool rsa_key_of(struct key *k, const char *tag, const struct rsa_public_key *pub,
                       size_t param, const uint8_t *data, size_t len, const __mpz_struct *sig)
{
    k->len = 0;
    return put(k, tag, strlen(tag) + 1) && put(k, &pub->size, sizeof pub->size) &&
           put_mpz(k, pub->n) && put_mpz(k, pub->e) && put(k, &param, sizeof param) &&
           put(k, data, len) && put_mpz(k, sig);
}

typedef int rsa_verify_fn(const struct rsa_public_key *, size_t, const uint8_t *,
                          const __mpz_struct *);

/* A check through the memo, for every hook: the real function (real_of),
 * a kept answer given at once, a success kept. ecdsa: Nettle's ECDSA
 * (param: the digest's length), else an RSA variant (param: PSS's salt
 * length or PKCS #1's DigestInfo length; dlen: the length of the data the
 * function reads, PSS's fixed by the hash). Inlined where it is called,
 * the variant known: the ECDSA hook and rsa_verify compile to the same
 * instructions as when each was written out alone (objdump -d, GCC 12). */
static inline __attribute__((always_inline)) int verify(struct real *real, bool ecdsa,
                                                        const void *pub, size_t param,
                                                        const uint8_t *data, size_t dlen,
                                                        const void *sig)
{
    void *f = real_of(real);
    if (f == NULL)
        return 0; /* no Nettle behind the shim: nothing verified */
    struct key k;
    bool memo;
    if (ecdsa) {
        ecc_size_fn *size = memo_on() ? (ecc_size_fn *)real_of(&real_size) : NULL;
        memo = size != NULL && key_of(&k, size, pub, param, data, sig);
    } else {
        memo = memo_on() && rsa_key_of(&k, real->name, pub, param, data, dlen, sig);
    }
    if (memo && memo_known(MEMO_SIGNATURES, k.b, k.len, 0))
        return 1;
    int r = ecdsa ? ((ecdsa_verify_fn *)f)(pub, param, data, sig)
                  : ((rsa_verify_fn *)f)(pub, param, data, sig);
    if (memo && r == 1)
        memo_keep(MEMO_SIGNATURES, k.b, k.len, MEMO_EVER_LO, MEMO_EVER_HI);
    return r;
}

EXPORT int nettle_ecdsa_verify(const struct ecc_point *pub, size_t length, const uint8_t *digest,
                               const struct dsa_signature *signature)
{
    return verify(&real_verify, true, pub, length, digest, length, signature);
}

/* One copy for the four RSA hooks. */
static int rsa_verify(struct real *real, const struct rsa_public_key *pub, size_t param,
                      const uint8_t *data, size_t dlen, const __mpz_struct *sig)
{
    return verify(real, false, pub, param, data, dlen, sig);
}

#define RSA_HOOK(name, dlen)                                                     \
    EXPORT int name(const struct rsa_public_key *key, size_t param, const uint8_t *data, \
                    const mpz_t signature)                                       \
    {                                                                            \
        static struct real real_ = REAL(#name, (void *)name);                    \
        return rsa_verify(&real_, key, param, data, dlen, signature);            \
    }
RSA_HOOK(nettle_rsa_pkcs1_verify, param)
RSA_HOOK(nettle_rsa_pss_sha256_verify_digest, 32)
RSA_HOOK(nettle_rsa_pss_sha384_verify_digest, 48)
RSA_HOOK(nettle_rsa_pss_sha512_verify_digest, 64)
