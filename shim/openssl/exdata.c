/* The ex_data callbacks several rooms share: state that is plain heap
 * memory, and state that a copy made by SSL_dup must not share (the copy
 * starts without any; ex_data pointers would otherwise be copied). */
#include <stdlib.h>

#include "exdata.h"

void exdata_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    free(ptr);
}

int exdata_dup_none(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                    long argl, void *argp)
{
    (void)to, (void)from, (void)idx, (void)argl, (void)argp;
    *from_d = NULL;
    return 1;
}
