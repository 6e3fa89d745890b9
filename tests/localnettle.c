/* Nettle in a local scope, as a module's private copy or a plugin's
 * (glib-networking's GnuTLS is dlopen'ed): libhogweed is loaded with
 * RTLD_LOCAL, and the global nettle_ecdsa_verify (the shim's, when it is
 * preloaded; else none) checks a signature made with the local one. The
 * shim must find the real function there: a good signature verifies, a
 * corrupted one does not.
 * Prints "good=1 bad=0" (or "no global" without the shim); exit 0.
 *
 * usage: localnettle [LIB..] [--reload LIB..]: the libraries named first
 * are loaded before Nettle (what a large program loaded for other
 * things: the shim must not look among the first few objects only); with
 * --reload, Nettle is then unloaded, the libraries after it loaded (the
 * program goes on), Nettle loaded again and checked again, once more
 * "good=1 bad=0" (the shim must not call the copy that went). */

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nettle/ecc-curve.h>
#include <nettle/ecdsa.h>

#include <gmp.h>

/* A function of the local copy, typed as its header declares it. */
#define SYM(h, name) __typeof__(&name) name##_ = (__typeof__(&name))dlsym(h, #name)

static void rnd(void *ctx, size_t n, uint8_t *dst)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++)
        dst[i] = (uint8_t)(i * 131 + 7);
}

static int check(void)
{
    void *h = dlopen("libhogweed.so.6", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return 2;
    SYM(h, nettle_get_secp_256r1);
    SYM(h, nettle_ecc_point_init);
    SYM(h, nettle_ecc_scalar_init);
    SYM(h, nettle_dsa_signature_init);
    SYM(h, nettle_ecdsa_generate_keypair);
    SYM(h, nettle_ecdsa_sign);
    void *g = dlopen("libgmp.so.10", RTLD_NOW | RTLD_LOCAL);
    if (g == NULL)
        return 2;
    SYM(g, __gmpz_add_ui);
    __typeof__(&nettle_ecdsa_verify) verify =
        (__typeof__(&nettle_ecdsa_verify))dlsym(RTLD_DEFAULT, "nettle_ecdsa_verify");
    if (verify == NULL) {
        printf("no global\n");
        return 0;
    }
    if (!nettle_get_secp_256r1_ || !nettle_ecc_point_init_ || !nettle_ecc_scalar_init_ ||
        !nettle_dsa_signature_init_ || !nettle_ecdsa_generate_keypair_ || !nettle_ecdsa_sign_ ||
        !__gmpz_add_ui_)
        return 2;
    const struct ecc_curve *c = nettle_get_secp_256r1_();
    struct ecc_point pub;
    struct ecc_scalar key;
    struct dsa_signature sig;
    nettle_ecc_point_init_(&pub, c);
    nettle_ecc_scalar_init_(&key, c);
    nettle_dsa_signature_init_(&sig);
    nettle_ecdsa_generate_keypair_(&pub, &key, NULL, rnd);
    uint8_t digest[32] = {1, 2, 3};
    nettle_ecdsa_sign_(&key, NULL, rnd, sizeof digest, digest, &sig);
    int good = verify(&pub, sizeof digest, digest, &sig);
    __gmpz_add_ui_(sig.s, sig.s, 1);
    int bad = verify(&pub, sizeof digest, digest, &sig);
    printf("good=%d bad=%d\n", good, bad);
    fflush(stdout);
    dlclose(g);
    dlclose(h);
    return 0;
}

static int load(char **names, int n)
{
    for (int i = 0; i < n; i++)
        if (dlopen(names[i], RTLD_NOW | RTLD_LOCAL) == NULL)
            return 2;
    return 0;
}

int main(int argc, char **argv)
{
    int reload = 1;
    while (reload < argc && strcmp(argv[reload], "--reload") != 0)
        reload++;
    int r = load(argv + 1, reload - 1);
    if (r == 0)
        r = check();
    if (r == 0 && reload < argc && (r = load(argv + reload + 1, argc - reload - 1)) == 0)
        r = check();
    return r;
}
