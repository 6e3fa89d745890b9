/* exdata: the ex_data callbacks several rooms share. */
#ifndef RESUMESHIM_EXDATA_H
#define RESUMESHIM_EXDATA_H

#include "real.h"

/* State that is plain heap memory. */
void exdata_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp);
/* State a copy made by SSL_dup starts without. */
int exdata_dup_none(CRYPTO_EX_DATA *to, const CRYPTO_EX_DATA *from, void **from_d, int idx,
                    long argl, void *argp);

#endif
