/* The SSL BIO's method (biossl.h).
 *
 * An SSL BIO (BIO_f_ssl) reads and writes through libssl's internal
 * ssl_read_internal and ssl_write_internal (ssl/bio_ssl.c, 3.0.19 and 3.5.7), not
 * SSL_read and SSL_write: a handshake that ends inside BIO_read or
 * BIO_write reaches no hook, so a resumed one would never be judged, and a
 * connection used only so (Tcl's tls package) would never be seen used.
 * BIO_f_ssl therefore hands out a method of the same type and name whose
 * read and write pass through the hooks first; everything else (ctrl,
 * create, destroy, puts, callback_ctrl) is libssl's own, on libssl's own
 * per-BIO data. Debian's libssl reaches BIO_f_ssl through its PLT
 * (BIO_new_ssl; objdump -d of Debian 12's 3.0.19 and Debian 13's 3.5.9),
 * so its BIOs get the method too. */
#include <pthread.h>

#include "biossl.h"

struct biossl biossl_real;

static const BIO_METHOD *real_method;
static biossl_read_fn new_read;
static biossl_write_fn new_write;
static BIO_METHOD *method;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static BIO_METHOD *make(void)
{
    const BIO_METHOD *r = real_method;
    biossl_real = (struct biossl){R(BIO_meth_get_read_ex)(r), R(BIO_meth_get_write_ex)(r),
                                  R(BIO_meth_get_ctrl)(r)};
    if (biossl_real.read == NULL || biossl_real.write == NULL || biossl_real.ctrl == NULL)
        return NULL;
    /* The type and name libssl gives it (BIO_method_type and
     * BIO_find_type look for BIO_TYPE_SSL). */
    BIO_METHOD *m = R(BIO_meth_new)(BIO_TYPE_SSL, "ssl");
    if (m == NULL)
        return NULL;
    if (R(BIO_meth_set_read_ex)(m, new_read) == 1 && R(BIO_meth_set_write_ex)(m, new_write) == 1 &&
        R(BIO_meth_set_puts)(m, R(BIO_meth_get_puts)(r)) == 1 &&
        R(BIO_meth_set_gets)(m, R(BIO_meth_get_gets)(r)) == 1 &&
        R(BIO_meth_set_ctrl)(m, biossl_real.ctrl) == 1 &&
        R(BIO_meth_set_create)(m, R(BIO_meth_get_create)(r)) == 1 &&
        R(BIO_meth_set_destroy)(m, R(BIO_meth_get_destroy)(r)) == 1 &&
        R(BIO_meth_set_callback_ctrl)(m, R(BIO_meth_get_callback_ctrl)(r)) == 1)
        return m;
    R(BIO_meth_free)(m);
    return NULL;
}

static void make_once(void)
{
    method = make();
}

const BIO_METHOD *biossl_method(const BIO_METHOD *real, biossl_read_fn read,
                                biossl_write_fn write)
{
    if (real == NULL)
        return NULL;
    /* Every caller passes the same three (libssl's method, the hooks'
     * functions). Made once and kept for the process: BIOs point at it. A
     * failure is final too: libssl's own method then serves every BIO. */
    real_method = real, new_read = read, new_write = write;
    pthread_once(&once, make_once);
    return method;
}
