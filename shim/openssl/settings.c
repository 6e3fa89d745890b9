/* Recorded settings (settings.h). */
#include <stdlib.h>
#include <string.h>

#include "exdata.h"
#include "settings.h"

static int index_ = -1;

/* SSL_dup copies ex_data pointers; the copy gets settings of its own,
 * equal to the original's. SSL_dup may already have made them (it sets
 * the session id context through our hook). */
static int dup_settings(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                        long argl, void *argp)
{
    (void)from, (void)argl, (void)argp;
    const struct recorded *src = *from_d;
    struct recorded *r = R(CRYPTO_get_ex_data)(to, idx);
    if (src != NULL && r == NULL)
        r = malloc(sizeof *r);
    if (src != NULL && r != NULL)
        *r = *src;
    *from_d = r;
    return 1;
}

void settings_init(void)
{
    index_ = R(CRYPTO_get_ex_new_index)(CRYPTO_EX_INDEX_SSL, 0, NULL, NULL, dup_settings,
                                        exdata_free);
}

struct recorded *settings_of(SSL *s)
{
    if (index_ < 0)
        return NULL;
    struct recorded *r = R(SSL_get_ex_data)(s, index_);
    if (r != NULL || (r = calloc(1, sizeof *r)) == NULL)
        return r;
    if (R(SSL_set_ex_data)(s, index_, r) != 1) {
        free(r);
        return NULL;
    }
    return r;
}

const struct recorded *settings_peek(const SSL *s)
{
    return index_ >= 0 ? R(SSL_get_ex_data)(s, index_) : NULL;
}

void settings_set_sid(struct recorded *r, const unsigned char *sid, unsigned len)
{
    if (r != NULL && len <= sizeof r->sid) {
        memcpy(r->sid, sid, len);
        r->sid_len = len;
        r->sid_set = true;
    }
}

void settings_set_int(struct recorded *r, enum setting which, int value)
{
    if (r == NULL)
        return;
    if (which == SET_PURPOSE) {
        r->purpose = value;
        r->purpose_set = true;
    } else {
        r->trust = value;
        r->trust_set = true;
    }
}

const struct recorded *recorded_sid(const struct recorded *conn, const struct recorded *ctx)
{
    static const struct recorded none;
    return conn != NULL && conn->sid_set ? conn : ctx != NULL ? ctx : &none;
}

bool settings_method_kept(const SSL *s)
{
    const struct recorded *r = settings_peek(s);
    return (r == NULL || !r->moved) &&
           R(SSL_get_ssl_method)(s) == R(SSL_CTX_get_ssl_method)(R(SSL_get_SSL_CTX)(s));
}
