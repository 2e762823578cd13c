/* test_cpu.c — the host's OpenMP work runs on the process's CPUs, not on the one CPU the
 * thread that starts it is pinned to (--worker-cpu, the benchmarks' issuing thread). Each
 * test runs on a thread of its own: libgomp keeps a team per thread that starts parallel
 * regions, made with that thread's CPUs at the time, so a fresh thread makes a fresh team. */
#include <jansson.h>
#include <pthread.h>
#include <sched.h>

#include "check.h"
#include "../../gpu/cpu.h"

static int process_cpus(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

static int thread_cpus(void) {
    cpu_set_t set;
    return pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

/* Pin the calling thread to the first CPU the process may use; 0 on success. */
static int pin_to_first_cpu(void) {
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            return pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        }
    return -1;
}

typedef struct {
    int team_cpus, after_cpus, pinned_rc, run_rc, result_cpus, threads;
} pinned_run_t;

static void *pinned_team(void *arg) {
    pinned_run_t *r = (pinned_run_t *)arg;
    r->pinned_rc = pin_to_first_cpu();
    r->team_cpus = cpu_team_cpus(4);
    r->after_cpus = thread_cpus();
    return NULL;
}

static void *pinned_cpu_run(void *arg) {
    pinned_run_t *r = (pinned_run_t *)arg;
    r->pinned_rc = pin_to_first_cpu();
    spec_t s;
    spec_defaults(&s, VARIANT_CPU);
    s.size = 1 << 16;
    s.reps = 2;
    s.reps_auto = false;
    s.warmup = 0;
    result_t res;
    memset(&res, 0, sizeof res);
    sl_error_t err = {0};
    machine_info_t m;
    memset(&m, 0, sizeof m);
    r->run_rc = cpu_run(&s, &m, &res, &err);
    json_t *cpus = res.extra ? json_object_get(res.extra, "cpus") : NULL;
    json_t *threads = res.extra ? json_object_get(res.extra, "threads") : NULL;
    r->result_cpus = cpus ? (int)json_integer_value(cpus) : -1;
    r->threads = threads ? (int)json_integer_value(threads) : -1;
    r->after_cpus = thread_cpus();
    result_free(&res);
    return NULL;
}

static pinned_run_t on_a_thread(void *(*fn)(void *)) {
    pinned_run_t r = {-1, -1, -1, -1, -1, -1};
    pthread_t t;
    if (pthread_create(&t, NULL, fn, &r) != 0) {
        fprintf(stderr, "  cannot start a thread\n");
        return r;
    }
    pthread_join(t, NULL);
    return r;
}

TEST(a_pinned_threads_team_runs_on_every_cpu_and_the_thread_stays_pinned) {
    int n = process_cpus();
    pinned_run_t r = on_a_thread(pinned_team);
    CHECK_INT(0, r.pinned_rc);
    /* a team of 4 on one CPU would say 1: libgomp's threads start with their maker's CPUs */
    CHECK_INT(n, r.team_cpus);
    CHECK_INT(1, r.after_cpus);
    if (n < 2)
        printf("  (this machine has one CPU: the team's spread cannot differ here)\n");
}

TEST(the_cpu_baseline_from_a_pinned_thread_uses_every_cpu_and_says_so) {
    int n = process_cpus();
    pinned_run_t r = on_a_thread(pinned_cpu_run);
    CHECK_INT(0, r.pinned_rc);
    CHECK_INT(0, r.run_rc);
    CHECK_INT(n, r.result_cpus);
    CHECK(r.threads >= 1);
    CHECK_INT(1, r.after_cpus);
}

static const check_test_t tests[] = {
    TEST_ENTRY(a_pinned_threads_team_runs_on_every_cpu_and_the_thread_stays_pinned),
    TEST_ENTRY(the_cpu_baseline_from_a_pinned_thread_uses_every_cpu_and_says_so),
};

CHECK_MAIN("unit-cpu", tests)
