/* State per credentials object (credtab.h). */
#include <stdlib.h>

#include "credtab.h"
#include "fork.h"

void credtab_init(struct credtab *t)
{
    fork_guard(&t->lock);
}

void *credtab_find(struct credtab *t, const void *cred)
{
    struct credent *e;
    HASH_FIND_PTR(t->head, &cred, e);
    return e;
}

void credtab_new(struct credtab *t, const void *cred, size_t size)
{
    struct credent *e = calloc(1, size), *old;
    pthread_mutex_lock(&t->lock);
    if ((old = credtab_find(t, cred)) != NULL)
        HASH_DEL(t->head, old);
    if (e != NULL) {
        e->cred = cred;
        HASH_ADD_PTR(t->head, cred, e);
        if (e->hh.tbl == NULL)
            free(e);
    }
    pthread_mutex_unlock(&t->lock);
    free(old);
}

void credtab_gone(struct credtab *t, const void *cred)
{
    pthread_mutex_lock(&t->lock);
    struct credent *e = credtab_find(t, cred);
    if (e != NULL)
        HASH_DEL(t->head, e);
    pthread_mutex_unlock(&t->lock);
    free(e);
}
