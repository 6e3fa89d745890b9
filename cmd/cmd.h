/* The resumeshim command's rooms: resumeshim.c parses the command line and
 * runs the program; list.c lists and empties the store. */
#ifndef RESUMESHIM_CMD_H
#define RESUMESHIM_CMD_H

#include <stdbool.h>

/* A message, then exit 1. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A message and the hint to --help, then exit 2. */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* a, b and c one after another, kept for the run (never freed). */
char *join(const char *a, const char *b, const char *c);

/* The store the program would be given when no option names one (NULL:
 * none), kept as join's: an inherited RESUMESHIM_STORE, else the user's
 * runtime directory, else the cache. */
char *default_store(void);

/* The subcommands, on the store named by --store (store), by default
 * (store NULL, none false), or refused (none: --no-store). Return the
 * command's exit status. */
int cmd_list(const char *store, bool none, char **names, int n);
int cmd_clear(const char *store, bool none, int n);

#endif
