/* check.h — a tiny unit-test harness in plain C (curl's tests/unit style): each test
 * is a function; CHECK prints the expression, expected and actual on failure; main()
 * runs every test and prints "<suite>: N passed, N failed". One header, no library. */
#ifndef STREAMLAB_CHECK_H
#define STREAMLAB_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures_in_test;
static const char *check_current_test;

#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "  FAIL %s (%s:%d): %s\n", check_current_test, __FILE__, __LINE__, #cond); \
            check_failures_in_test++;                                                            \
        }                                                                                        \
    } while (0)

#define CHECK_INT(expected, actual)                                                              \
    do {                                                                                         \
        long long e_ = (long long)(expected), a_ = (long long)(actual);                          \
        if (e_ != a_) {                                                                          \
            fprintf(stderr, "  FAIL %s (%s:%d): %s: expected %lld, got %lld\n", check_current_test, \
                    __FILE__, __LINE__, #actual, e_, a_);                                        \
            check_failures_in_test++;                                                            \
        }                                                                                        \
    } while (0)

#define CHECK_NEAR(expected, actual, tol)                                                        \
    do {                                                                                         \
        double e_ = (double)(expected), a_ = (double)(actual);                                   \
        if (!(fabs(e_ - a_) <= (tol))) {                                                         \
            fprintf(stderr, "  FAIL %s (%s:%d): %s: expected %.6f, got %.6f (tolerance %g)\n",   \
                    check_current_test, __FILE__, __LINE__, #actual, e_, a_, (double)(tol));     \
            check_failures_in_test++;                                                            \
        }                                                                                        \
    } while (0)

#define CHECK_STR(expected, actual)                                                              \
    do {                                                                                         \
        const char *e_ = (expected), *a_ = (actual);                                             \
        if (!a_ || strcmp(e_, a_) != 0) {                                                        \
            fprintf(stderr, "  FAIL %s (%s:%d): %s: expected \"%s\", got \"%s\"\n",              \
                    check_current_test, __FILE__, __LINE__, #actual, e_, a_ ? a_ : "(null)");    \
            check_failures_in_test++;                                                            \
        }                                                                                        \
    } while (0)

typedef struct check_test {
    const char *name;
    void (*fn)(void);
} check_test_t;

#define TEST(name) static void name(void)
#define TEST_ENTRY(name) {#name, name}

/* Run the tests; a filter argument runs only tests whose name contains it. */
static int check_main(const char *suite, const check_test_t *tests, size_t n, int argc, char **argv) {
    int passed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1]))
            continue;
        check_current_test = tests[i].name;
        check_failures_in_test = 0;
        tests[i].fn();
        if (check_failures_in_test) {
            failed++;
            fprintf(stderr, "not ok %s\n", tests[i].name);
        } else {
            passed++;
        }
    }
    printf("%s: %d passed, %d failed\n", suite, passed, failed);
    return failed ? 1 : 0;
}

#define CHECK_MAIN(suite, tests)                                                                 \
    int main(int argc, char **argv) {                                                            \
        return check_main(suite, tests, sizeof tests / sizeof tests[0], argc, argv);             \
    }

#endif
