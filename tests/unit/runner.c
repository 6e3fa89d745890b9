/* The runner (unit.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake.h"
#include "log.h"
#include "unit.h"

#define TESTS_MAX 128
static struct unit_test tests[TESTS_MAX];
static int n_tests;
bool unit_failed;

void unit_register(const char *name, void (*fn)(void), const char *todo)
{
    if (n_tests == TESTS_MAX) {
        fprintf(stderr, "unit: more than %d tests\n", TESTS_MAX);
        exit(2);
    }
    tests[n_tests++] = (struct unit_test){name, fn, todo};
}

void unit_fail(const char *file, int line, const char *what)
{
    printf("# %s:%d: %s\n", file, line, what);
    fflush(stdout);
    unit_failed = true;
}

bool in_child(bool (*fn)(void *), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        bool ok = fn(arg);
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The child's verdict: the test's checks, then the fake backend's books. */
static int run_one(const struct unit_test *t)
{
    t->fn();
    if (fake_live() != 0)
        printf("# %ld fake sessions still referenced\n", fake_live());
    if (fake_certs_live() != 0)
        printf("# %ld fake chains still referenced\n", fake_certs_live());
    if (fake_errors() != 0)
        printf("# %ld frees or uses of a fake object after its last reference\n",
               fake_errors());
    bool ok = !unit_failed && fake_live() == 0 && fake_certs_live() == 0 && fake_errors() == 0;
    fake_reset();
    fflush(stdout);
    return ok ? 0 : 1;
}

/* Registration order is the files' order; tests run by name order within
 * a run so the numbering is stable. */
static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct unit_test *)a)->name, ((const struct unit_test *)b)->name);
}

int main(int argc, char **argv)
{
    /* The core's warnings (a refused store) are expected here. */
    log_level = LOG_OFF;
    qsort(tests, (size_t)n_tests, sizeof *tests, by_name);
    /* unit [WORD]: only the tests whose names contain WORD. */
    if (argc > 1) {
        int kept = 0;
        for (int i = 0; i < n_tests; i++)
            if (strstr(tests[i].name, argv[1]) != NULL)
                tests[kept++] = tests[i];
        n_tests = kept;
    }
    int failed = 0, todo = 0, run = 0;
    printf("1..%d\n", n_tests);
    for (int i = 0; i < n_tests; i++) {
        const struct unit_test *t = &tests[i];
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            exit(run_one(t));
        int status = 0;
        bool ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0;
        if (pid > 0 && WIFSIGNALED(status))
            printf("# killed by signal %d\n", WTERMSIG(status));
        run++;
        if (t->todo != NULL) {
            printf("%s %d %s # TODO %s\n", ok ? "ok" : "not ok", run, t->name, t->todo);
            todo += !ok;
        } else {
            printf("%s %d %s\n", ok ? "ok" : "not ok", run, t->name);
            failed += !ok;
        }
    }
    printf("# %d tests, %d passed, %d failed, %d known bugs (TODO)\n", run, run - failed - todo,
           failed, todo);
    return failed == 0 ? 0 : 1;
}
