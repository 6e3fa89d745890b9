/* resumeshim: runs a command with libresumeshim.so preloaded, the store of
 * sessions shared between processes switched on; `resumeshim list` and
 * `resumeshim clear` show and empty that store. See resumeshim(1).
 *
 * It exists for shell loops that run a program once per request, so it
 * does what the run needs and no more, in-process: no shell, no helper
 * processes, a handful of system calls, then it replaces itself with the
 * program, whose exit status and signals are then its own. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <fcntl.h>
#include <unistd.h>

#include "cmd.h"

/* The one place the version is written: the Makefile reads it from here
 * for the manual pages. */
#define VERSION "0.1.0"

static const char me[] = "resumeshim";

#ifdef LIBDIR
/* Where make install put the library, as the installed command says it
 * to strings(1) and to the suite's check of the install. */
__attribute__((used, retain)) static const char libdir_line[] = "libdir='" LIBDIR "'";
#endif

static void say(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", me);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    exit(1);
}

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
}

void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try '%s --help' for more information.\n", me);
    exit(2);
}

static void usage(void)
{
    fputs("Usage: resumeshim [OPTION]... [--] COMMAND [ARG]...\n"
          "       resumeshim [--store DIR] list [HOST[:PORT]]...\n"
          "       resumeshim [--store DIR] clear\n"
          "Run COMMAND with libresumeshim.so preloaded, so that its TLS connections\n"
          "resume sessions from earlier ones, in this process and, through the store,\n"
          "in earlier processes.\n"
          "\n"
          "Options:\n"
          "  -n, --pool-size N     TLS 1.3 tickets kept per server (1-64; default 8)\n"
          "  -a, --max-age SECONDS offer a session at most this long after the full\n"
          "                        handshake that verified the server (1-604800;\n"
          "                        default 3600)\n"
          "      --max-hosts N     servers remembered (1-1000000; default 1024)\n"
          "      --server          also resume for COMMAND's own TLS servers: their\n"
          "                        contexts share ticket keys (see resumeshim(1))\n"
          "      --ticket-key-rotate SECONDS\n"
          "                        with --server, a new ticket key this often\n"
          "                        (1-604800; default 3600)\n"
          "      --store DIR       keep the store of sessions in DIR\n"
          "      --no-store        keep sessions in memory only, for this process\n"
          "      --stats           print one summary line when COMMAND exits\n"
          "      --log LEVEL       off, error, warn, info or debug (default warn)\n"
          "      --log-file FILE   write log lines and the summary to FILE\n"
          "  -h, --help            show this help and exit\n"
          "  -V, --version         show the version and exit\n"
          "\n"
          "Subcommands (use '--' before a program named list or clear):\n"
          "  list [HOST[:PORT]]... show the sessions in the store; servers named on the\n"
          "                        command line (port 443 unless given) are shown by\n"
          "                        name, the others by a prefix of their hash\n"
          "  clear                 remove every session from the store\n"
          "\n"
          "The store is on by default: $XDG_RUNTIME_DIR/resumeshim, or else\n"
          "${XDG_CACHE_HOME:-~/.cache}/resumeshim. It holds secrets: see resumeshim(1).\n",
          stdout);
    exit(fflush(stdout) == 0 ? 0 : 1);
}

/* The strings of a run, never freed: kept in one static block rather than
 * the heap, whose first use costs system calls and page faults, each a
 * share of the run this command is a wrapper around. */
static char arena[8 * PATH_MAX];
static size_t used;

static char *keep(size_t n)
{
    if (n > sizeof arena - used)
        die("too long a file name, or LD_PRELOAD");
    used += n;
    return arena + used - n;
}

char *join(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *s = keep(la + lb + lc + 1);
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc + 1);
    return s;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The working directory as the shell names it ($PWD, when it is this
 * directory), which is what the user typed relative names against. */
static const char *cwd(void)
{
    static char *dir;
    if (dir == NULL) {
        const char *pwd = getenv("PWD");
        struct stat a, b;
        if (pwd != NULL && pwd[0] == '/' && stat(pwd, &a) == 0 && stat(".", &b) == 0 &&
            a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            dir = join(pwd, "", "");
        else if ((dir = getcwd(keep(PATH_MAX), PATH_MAX)) == NULL)
            die("cannot tell the working directory: %s", strerror(errno));
    }
    return dir;
}

static char *absolute(const char *path)
{
    return path[0] == '/' ? join(path, "", "") : join(cwd(), "/", path);
}

/* An inherited RESUMESHIM_STORE, else the user's runtime directory
 * (private and memory-backed), else the cache; or none. */
char *default_store(void)
{
    const char *s = getenv("RESUMESHIM_STORE");
    if (s != NULL && *s != '\0')
        return absolute(s);
    s = getenv("XDG_RUNTIME_DIR");
    if (s != NULL && s[0] == '/' && is_dir(s))
        return join(s, "/resumeshim", "");
    /* Relative XDG paths are ignored, as the XDG base directory spec says. */
    s = getenv("XDG_CACHE_HOME");
    if (s != NULL && s[0] == '/')
        return join(s, "/resumeshim", "");
    /* Not under a HOME that does not exist (Debian gives system users
     * /nonexistent, which must stay so). */
    s = getenv("HOME");
    if (s != NULL && s[0] == '/' && is_dir(s))
        return join(s, "/.cache/resumeshim", "");
    return NULL;
}

/* VALUE in plain decimal, or exit 2. */
static const char *number(const char *what, const char *val, long lo, long hi)
{
    const char *n = val;
    while (*n == '0')
        n++;
    size_t len = strlen(n);
    long v = len <= 7 ? atol(n) : 0;
    if (*val == '\0' || strspn(val, "0123456789") != strlen(val) || len > 7 || v < lo ||
        v > hi)
        usage_error("invalid %s '%s' (a number from %ld to %ld)", what, val, lo, hi);
    return len > 0 ? n : "0";
}

/* mkdir -p, private: the library refuses the store otherwise, and says so. */
static bool make_dirs(const char *path)
{
    char p[PATH_MAX];
    if (strlen(path) >= sizeof p)
        return false;
    strcpy(p, path);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            break;
        *s = c;
        if (c == '\0')
            break;
    }
    return is_dir(path);
}

#ifndef LIBDIR
/* The library of the tree this command was built in: beside the directory
 * of the file it runs as, as when it was a script. make writes
 * scripts/resumeshim, a file whose first line names build/resumeshim, the
 * program, which the kernel then runs with that file's name (AT_EXECFN) as
 * its first argument: the library is found from there, through symbolic
 * links, so that a copy of the file looks beside itself. */
static char *tree_lib(int *argc, char ***argv)
{
    const char *fn = (const char *)getauxval(AT_EXECFN);
    char *self = keep(PATH_MAX);
    bool found;
    if (*argc >= 2 && fn != NULL && strcmp(fn, (*argv)[1]) == 0 &&
        strcmp((*argv)[0], (*argv)[1]) != 0) {
        found = realpath((*argv)[1], self) != NULL;
        (*argv)[1] = (*argv)[0];
        (*argv)++;
        (*argc)--;
    } else {
        /* Resolved already: one system call, where realpath makes one per
         * component. */
        ssize_t n = readlink("/proc/self/exe", self, PATH_MAX - 1);
        found = n > 0;
        self[found ? n : 0] = '\0';
    }
    if (!found)
        die("cannot find where I am: %s", strerror(errno));
    /* Two levels up; at the root, the root. */
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(self, '/');
        if (slash != NULL)
            *slash = '\0';
    }
    return join(self, "/libresumeshim.so", "");
}
#endif

/* COMMAND found as exec finds it, to judge the program that would run;
 * a file that is not executable is kept only if no other is found, for
 * exec to fail on (126). NULL: not found. */
static char *find(const char *cmd, struct stat *st)
{
    if (strchr(cmd, '/') != NULL)
        return stat(cmd, st) == 0 ? join(cmd, "", "") : NULL;
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/bin:/bin";
    char *prog = NULL, p[PATH_MAX];
    for (const char *d = path;; d++) {
        size_t n = strcspn(d, ":");
        struct stat s;
        /* An empty entry is the working directory. */
        int len = snprintf(p, sizeof p, "%.*s/%s", n > 0 ? (int)n : 1, n > 0 ? d : ".", cmd);
        if (len < (int)sizeof p && stat(p, &s) == 0 && S_ISREG(s.st_mode)) {
            bool x = faccessat(AT_FDCWD, p, X_OK, AT_EACCESS) == 0;
            if (prog == NULL || x) {
                prog = join(p, "", "");
                *st = s;
            }
            if (x)
                break;
        }
        d += n;
        if (*d == '\0')
            break;
    }
    return prog;
}

/* The dynamic loader runs such programs in secure mode and drops
 * LD_PRELOAD: say so instead of running them without the shim. */
static void judge(const char *prog, const struct stat *st)
{
    const char *why = st->st_mode & S_ISUID   ? "is setuid"
                      : st->st_mode & S_ISGID ? "is setgid"
                      : S_ISREG(st->st_mode) &&
                              getxattr(prog, "security.capability", NULL, 0) > 0
                          ? "has file capabilities"
                          : NULL;
    if (why == NULL)
        return;
    fprintf(stderr,
            "%s: %s %s: the dynamic loader would ignore LD_PRELOAD for it; not running it "
            "without the shim\n",
            me, prog, why);
    exit(126);
}

/* The variables the program's environment gets (NAME=VALUE) or loses
 * (NAME): handed to execve with the rest of this one's, not set one by
 * one, which would copy the environment onto the heap. */
static const char *changes[12];
static int n_changes;

static void put(const char *name, const char *val)
{
    if (val != NULL)
        changes[n_changes++] = join(name, "=", val);
}

static void drop(const char *name)
{
    changes[n_changes++] = name;
}

/* The environment with the changes made. */
static char **environment(char **env, char **out)
{
    int n = 0;
    for (; *env != NULL; env++) {
        bool changed = false;
        for (int i = 0; i < n_changes && !changed; i++) {
            size_t len = strcspn(changes[i], "=");
            changed = strncmp(*env, changes[i], len) == 0 && (*env)[len] == '=';
        }
        if (!changed)
            out[n++] = *env;
    }
    for (int i = 0; i < n_changes; i++)
        if (strchr(changes[i], '=') != NULL)
            out[n++] = (char *)changes[i];
    out[n] = NULL;
    return out;
}

/* Preloaded first, unless the program's LD_PRELOAD already has it (where
 * another library, such as a sanitizer runtime, may have to come first):
 * by this path, or by another naming the same file. */
static void preload(const char *lib, const struct stat *st)
{
    const char *old = getenv("LD_PRELOAD");
    for (const char *e = old != NULL ? old : ""; *e != '\0';) {
        size_t n = strcspn(e, " :");
        char name[PATH_MAX];
        struct stat s;
        if (n > 0 && n < sizeof name) {
            memcpy(name, e, n);
            name[n] = '\0';
            if (strcmp(name, lib) == 0 ||
                (stat(name, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino))
                return;
        }
        e += n + (e[n] != '\0');
    }
    put("LD_PRELOAD", old != NULL && *old != '\0' ? join(lib, " ", old) : lib);
}

int main(int argc, char **argv)
{
#ifdef LIBDIR
    const char *lib = LIBDIR "/libresumeshim.so";
#else
    const char *lib = tree_lib(&argc, &argv);
#endif
    /* Options. Each sets a variable; none is put in the environment
     * before all have parsed. */
    const char *pool_size = NULL, *max_age = NULL, *max_hosts = NULL, *rotate = NULL;
    char *store = NULL;
    const char *log = NULL;
    char *log_file = NULL;
    bool server = false, stats = false, no_store = false, dashdash = false;
    int i = 1;
    while (i < argc) {
        char *arg = argv[i], *eq;
        char opt[64];
        const char *val = NULL;
        if (strcmp(arg, "--") == 0) {
            i++;
            dashdash = true;
            break;
        }
        if (strncmp(arg, "--", 2) == 0 && (eq = strchr(arg, '=')) != NULL) {
            snprintf(opt, sizeof opt, "%.*s", (int)(eq - arg), arg);
            val = eq + 1;
        } else if (arg[0] == '-' && (arg[1] == 'n' || arg[1] == 'a') && arg[2] != '\0') {
            snprintf(opt, sizeof opt, "-%c", arg[1]);
            val = arg + 2;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            snprintf(opt, sizeof opt, "%s", arg);
        } else {
            break;
        }
        /* An option name too long for opt is unknown anyway. */
        if (strlen(arg) >= sizeof opt && val == NULL)
            usage_error("unknown option '%s'", arg);
#define IS(a, b) (strcmp(opt, a) == 0 || strcmp(opt, b) == 0)
        if (IS("-h", "--help") || IS("-V", "--version") || IS("--no-store", "--stats") ||
            IS("--server", "--server")) {
            if (val != NULL)
                usage_error("option '%s' takes no value", opt);
        } else if (IS("-n", "--pool-size") || IS("-a", "--max-age") ||
                   IS("--max-hosts", "--ticket-key-rotate") || IS("--store", "--log") ||
                   IS("--log-file", "--log-file")) {
            if (val == NULL) {
                if (i + 1 >= argc)
                    usage_error("option '%s' needs a value", opt);
                val = argv[++i];
            }
        } else {
            usage_error("unknown option '%s'", opt);
        }
        i++;
        if (IS("-h", "--help")) {
            usage();
        } else if (IS("-V", "--version")) {
            printf("%s %s\n", me, VERSION);
            return fflush(stdout) == 0 ? 0 : 1;
        } else if (IS("-n", "--pool-size")) {
            pool_size = number("pool size", val, 1, 64);
        } else if (IS("-a", "--max-age")) {
            max_age = number("max age", val, 1, 604800);
        } else if (IS("--max-hosts", "--max-hosts")) {
            max_hosts = number("max hosts", val, 1, 1000000);
        } else if (IS("--server", "--server")) {
            server = true;
        } else if (IS("--ticket-key-rotate", "--ticket-key-rotate")) {
            rotate = number("ticket key period", val, 1, 604800);
        } else if (IS("--store", "--store")) {
            if (*val == '\0')
                usage_error("option '--store' needs a directory");
            store = absolute(val);
            no_store = false;
        } else if (IS("--no-store", "--no-store")) {
            store = NULL;
            no_store = true;
        } else if (IS("--stats", "--stats")) {
            stats = true;
        } else if (IS("--log", "--log")) {
            static const char *const levels[] = {"off", "error", "warn", "info", "debug",
                                                 "0",   "1",     "2",    "3",    "4"};
            log = NULL;
            for (size_t l = 0; l < sizeof levels / sizeof *levels; l++)
                if (strcmp(val, levels[l]) == 0)
                    log = val;
            if (log == NULL)
                usage_error("invalid log level '%s' (off, error, warn, info or debug)", val);
        } else if (IS("--log-file", "--log-file")) {
            if (*val == '\0')
                usage_error("option '--log-file' needs a file name");
            log_file = absolute(val);
        }
#undef IS
    }
    if (i >= argc)
        usage_error("no command given");

    /* list and clear, unless after '--'. */
    if (!dashdash && (strcmp(argv[i], "list") == 0 || strcmp(argv[i], "clear") == 0)) {
        const char *sub = argv[i++];
        if (i < argc && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0))
            usage();
        if (i < argc && strcmp(argv[i], "--") == 0)
            i++;
        else if (i < argc && argv[i][0] == '-' && argv[i][1] != '\0')
            usage_error("%s: unknown option '%s' (options go before '%s')", sub, argv[i], sub);
        return sub[0] == 'l' ? cmd_list(store, no_store, argv + i, argc - i)
                             : cmd_clear(store, no_store, argc - i);
    }

    struct stat lst;
    if (stat(lib, &lst) != 0 || !S_ISREG(lst.st_mode))
        die("%s: no such library (run make, or make install)", lib);
    if (strpbrk(lib, " :") != NULL)
        die("%s: LD_PRELOAD cannot name a path with a space or a colon", lib);

    struct stat st;
    char *prog = find(argv[i], &st);
    if (prog == NULL) {
        fprintf(stderr, "%s: '%s': command not found\n", me, argv[i]);
        return 127;
    }
    judge(prog, &st);

    /* The environment. */
    put("RESUMESHIM_POOL_SIZE", pool_size);
    put("RESUMESHIM_MAX_AGE", max_age);
    put("RESUMESHIM_MAX_HOSTS", max_hosts);
    put("RESUMESHIM_SERVER", server ? "1" : NULL);
    put("RESUMESHIM_TICKET_KEY_ROTATE", rotate);
    put("RESUMESHIM_STATS", stats ? "1" : NULL);
    put("RESUMESHIM_LOG", log);
    put("RESUMESHIM_LOG_FILE", log_file);
    if (!no_store && store == NULL && (store = default_store()) == NULL)
        warn("no store: no XDG_RUNTIME_DIR, XDG_CACHE_HOME or HOME directory; sessions stay in "
             "memory");
    if (store == NULL) {
        drop("RESUMESHIM_STORE");
    } else {
        if (!is_dir(store) && !make_dirs(store))
            warn("%s: cannot create the store directory", store);
        put("RESUMESHIM_STORE", store);
    }
    preload(lib, &lst);

    extern char **environ;
    int n_env = 0;
    while (environ[n_env] != NULL)
        n_env++;
    char *envv[n_env + n_changes + 1];
    char **env = environment(environ, envv);
    execve(prog, argv + i, env);
    /* A file without #! is a shell script, to exec as to the shell. */
    if (errno == ENOEXEC) {
        char **args = calloc((size_t)(argc - i) + 2, sizeof *args);
        if (args != NULL) {
            args[0] = "/bin/sh";
            args[1] = prog;
            memcpy(args + 2, argv + i + 1, (size_t)(argc - i - 1) * sizeof *args);
            execve("/bin/sh", args, env);
        }
    }
    int e = errno;
    fprintf(stderr, "%s: %s: %s\n", me, prog, strerror(e));
    return e == ENOENT ? 127 : 126;
}
