/* prio: the priority string behind each priority cache the program made,
 * so that a session's priorities can join its key whichever way they were
 * set (there is no getter for a session's priority string). */
#ifndef RESUMESHIM_GNUTLS_PRIO_H
#define RESUMESHIM_GNUTLS_PRIO_H

void prio_init(void);
void prio_made(const void *prio, const char *text);
void prio_gone(const void *prio);
/* A malloc'd copy of the cache's string; NULL when unknown. */
char *prio_text(const void *prio);

/* The file GnuTLS reads its system configuration from:
 * GNUTLS_SYSTEM_PRIORITY_FILE as it was when GnuTLS was loaded, else
 * /etc/gnutls/config. */
const char *prio_config_path(void);
/* A digest of that configuration as it is now, its absence included;
 * false when it cannot be read. */
bool prio_system(unsigned char out[32]);

#endif
