/* Chains and pooled sessions, through their backend's operations. */
#include <stdlib.h>
#include <string.h>

#include "pooled.h"

void chain_free(struct chain *c)
{
    if (c->certs != NULL)
        c->ops->certs_free(c->certs);
    free(c->der);
    free(c->staple);
    *c = (struct chain){0};
}

static bool copy_bytes(const unsigned char *from, size_t len, unsigned char **to, size_t *to_len)
{
    if (from == NULL || (*to = malloc(len)) == NULL)
        return false;
    memcpy(*to, from, len);
    *to_len = len;
    return true;
}

struct chain chain_copy(const struct chain *c)
{
    struct chain copy = {0};
    if (c->certs != NULL) {
        copy.ops = c->ops;
        copy.certs = c->ops->certs_up_ref(c->certs);
    } else {
        copy_bytes(c->der, c->der_len, &copy.der, &copy.der_len);
    }
    copy.lost = c->lost;
    if (c->staple != NULL && !copy_bytes(c->staple, c->staple_len, &copy.staple, &copy.staple_len))
        copy.lost = true;
    return copy;
}

unsigned char *chain_encode(const struct chain *c, size_t *len)
{
    *len = 0;
    if (c->certs != NULL)
        return c->ops->certs_encode(c->certs, len);
    unsigned char *der = NULL;
    copy_bytes(c->der, c->der_len, &der, len);
    return der;
}

void pooled_free(struct pooled *p)
{
    if (p->sess != NULL)
        p->ops->free(p->sess);
    p->sess = NULL;
    chain_free(&p->chain);
}
