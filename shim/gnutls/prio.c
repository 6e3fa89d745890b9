/* Priority caches' strings (prio.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "fork.h"
#include "prio.h"

struct prio_state {
    UT_hash_handle hh;
    const void *prio;
    char text[];
};

static struct prio_state *prios;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void prio_init(void)
{
    fork_guard(&lock);
}

void prio_made(const void *prio, const char *text)
{
    size_t len = text != NULL ? strlen(text) : 0;
    struct prio_state *p = text != NULL ? malloc(sizeof *p + len + 1) : NULL, *old;
    if (p != NULL) {
        p->prio = prio;
        memcpy(p->text, text, len + 1);
    }
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(prios, &prio, old);
    if (old != NULL)
        HASH_DEL(prios, old);
    if (p != NULL)
        HASH_ADD_PTR(prios, prio, p);
    pthread_mutex_unlock(&lock);
    free(old);
}

void prio_gone(const void *prio)
{
    struct prio_state *p;
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(prios, &prio, p);
    if (p != NULL)
        HASH_DEL(prios, p);
    pthread_mutex_unlock(&lock);
    free(p);
}

char *prio_text(const void *prio)
{
    struct prio_state *p;
    char *copy = NULL;
    pthread_mutex_lock(&lock);
    HASH_FIND_PTR(prios, &prio, p);
    if (p != NULL)
        copy = strdup(p->text);
    pthread_mutex_unlock(&lock);
    return copy;
}
