/* The unit tier's runner: TEST(name) registers a function; main runs each
 * in a forked child (the core keeps its state in statics, and a crash then
 * fails one test, not the run) and prints TAP. A test fails when a CHECK
 * fails, or when it ends with a fake session or chain still referenced, or
 * one freed or used after its last reference. */
#ifndef RESUMESHIM_UNIT_H
#define RESUMESHIM_UNIT_H

#include <stdbool.h>
#include <stdio.h>

struct unit_test {
    const char *name;
    void (*fn)(void);
    const char *todo; /* a known bug of the core: reported, not counted */
};

void unit_register(const char *name, void (*fn)(void), const char *todo);
void unit_fail(const char *file, int line, const char *what);
extern bool unit_failed;

#define TEST_(name, todo)                                                      \
    static void test_##name(void);                                             \
    __attribute__((constructor)) static void register_##name(void)             \
    {                                                                          \
        unit_register(#name, test_##name, todo);                               \
    }                                                                          \
    static void test_##name(void)
#define TEST(name) TEST_(name, NULL)
/* A test of a bug not fixed yet: it runs, and its failure is shown as TAP's
 * TODO, so that the tier stays green and the bug stays in sight. */
#define TEST_TODO(name, why) TEST_(name, why)

#define CHECK(expr)                                                            \
    do {                                                                       \
        if (!(expr)) {                                                         \
            unit_fail(__FILE__, __LINE__, #expr);                              \
            return;                                                            \
        }                                                                      \
    } while (0)

/* Runs fn in a child of its own (a fresh process, as far as the core's
 * statics go, when the caller has not set the core up): true when it
 * exited 0. */
bool in_child(bool (*fn)(void *), void *arg);

#endif
