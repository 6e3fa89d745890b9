/* vmemo: the verdicts of GnuTLS's verification of a server's chain
 * (gnutls_certificate_verify_peers), kept inside a judgment (judge.c) and
 * answered again for exactly the same inputs. */
#ifndef RESUMESHIM_GNUTLS_VMEMO_H
#define RESUMESHIM_GNUTLS_VMEMO_H

#include <stdbool.h>

#include "real.h"
#include "verdict.h"

/* The judgment of session s under set, on this thread, begins and ends. */
void vmemo_judge_begin(gnutls_session_t s, const struct gsettings *set);
void vmemo_judge_end(void);
/* Whether s is the session this thread judges now. */
bool vmemo_judging(gnutls_session_t s);
/* gnutls_certificate_verify_peers inside the judgment: from the memo, or
 * real's answer (kept when it passed). */
int vmemo_verify_peers(__typeof__(gnutls_certificate_verify_peers) *real, gnutls_session_t s,
                       gnutls_typed_vdata_st *data, unsigned elements, unsigned *status);
/* The program set what the verification reads and the memo cannot key (a
 * clock, a printer of the path): nothing is kept or answered again. */
void vmemo_off(void);
/* Around a priority initialisation or gnutls_global_init (GnuTLS reads its
 * system configuration again there): whether the file is absent now, and after the call. */
bool vmemo_config_absent(void);
void vmemo_config_read(bool absent_before);

#endif
