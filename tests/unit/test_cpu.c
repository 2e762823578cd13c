/* test_cpu.c — the host's OpenMP work runs on the process's CPUs, not on the one CPU the
 * thread that starts it is pinned to (--worker-cpu, the benchmarks' issuing thread). Each
 * test runs on a thread of its own: libgomp keeps a team per thread that starts parallel
 * regions, made with that thread's CPUs at the time, so a fresh thread makes a fresh team. */
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

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

/* cpu_checksum's sums as gpu/cpu.c describes them, one word at a time: eight lanes, each
 * a += word, b += a in 64 bits, each lane's a + 2b folded in lane order, then the last words
 * keyed by position. */
static uint64_t fold(uint64_t s, uint64_t v) {
    return (s ^ v) * 0x100000001b3ull;
}

static uint64_t checksum_as_described(const float *buf, uint64_t n) {
    uint64_t a[8] = {0}, b[8] = {0}, whole = n - n % 8;
    for (uint64_t i = 0; i < whole; i++) {
        uint32_t w;
        memcpy(&w, &buf[i], sizeof w);
        a[i % 8] += w;
        b[i % 8] += a[i % 8];
    }
    uint64_t s = fold(0xcbf29ce484222325ull, n);
    for (int k = 0; k < 8; k++)
        s = fold(s, a[k] + 2 * b[k]);
    for (uint64_t i = whole; i < n; i++) {
        uint32_t w;
        memcpy(&w, &buf[i], sizeof w);
        s = fold(fold(s, i), w);
    }
    return s;
}

static void blog_output(float *v, uint64_t n) { /* what a blog-kernel rep leaves: 1 + tiny steps */
    for (uint64_t i = 0; i < n; i++)
        v[i] = 1.0f + (float)(i % 977) * 1e-6f;
}

TEST(the_output_checksum_is_the_sums_it_documents_at_every_length) {
    float v[4099];
    blog_output(v, 4099);
    const uint64_t lengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 1005, 4096, 4099};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        CHECK(cpu_checksum(v, lengths[k]) == checksum_as_described(v, lengths[k]));
        CHECK(cpu_checksum_portable(v, lengths[k]) == checksum_as_described(v, lengths[k])); /* no SSE2 */
        for (int path = 0; path < 2; path++) { /* each vector path alone, where this CPU has it */
            uint64_t sum = 0, sum1 = 0;
            bool have = path ? cpu_checksum_avx2(v, lengths[k], &sum) : cpu_checksum_sse2(v, lengths[k], &sum);
            bool have1 = path ? cpu_checksum_avx2(v + 1, lengths[k] - (lengths[k] > 0), &sum1)
                              : cpu_checksum_sse2(v + 1, lengths[k] - (lengths[k] > 0), &sum1);
            CHECK(have == have1);
            CHECK(!have || sum == checksum_as_described(v, lengths[k]));
            CHECK(!have || sum1 == checksum_as_described(v + 1, lengths[k] - (lengths[k] > 0)));
        }
        CHECK(cpu_checksum(v + 1, lengths[k] - (lengths[k] > 0)) == /* an array not 16-byte aligned */
              checksum_as_described(v + 1, lengths[k] - (lengths[k] > 0)));
    }
    CHECK(cpu_checksum(v, 4098) != cpu_checksum(v, 4099)); /* the length is in it */
}

TEST(the_output_checksum_names_the_path_it_takes_and_that_path_runs_here) {
    uint64_t sum = 0;
    float one = 1.0f;
    const char *path = cpu_checksum_path();
    CHECK(strcmp(path, "avx2") == 0 || strcmp(path, "sse2") == 0 || strcmp(path, "portable") == 0);
    CHECK(strcmp(path, "portable") != 0 || !cpu_checksum_sse2(&one, 1, &sum));
#if defined(__x86_64__)
    CHECK(strcmp(path, "portable") != 0); /* every x86-64 CPU has SSE2 */
#if !defined(STREAMLAB_NO_AVX2)
    /* the AVX2 path wherever the CPU has AVX2, as the CPU itself says, and only there */
    __builtin_cpu_init();
    CHECK((strcmp(path, "avx2") == 0) == (__builtin_cpu_supports("avx2") != 0));
    CHECK((strcmp(path, "avx2") == 0) == cpu_checksum_avx2(&one, 1, &sum));
#endif
#endif
    printf("  cpu_checksum takes its %s path here\n", path);
}

TEST(the_output_checksum_changes_with_any_one_word_changed) {
    enum { N = 1029 }; /* 128 rows of lanes and 5 words after */
    float v[N];
    blog_output(v, N);
    uint64_t base = cpu_checksum(v, N);
    int missed = 0;
    for (int p = 0; p < N; p++) {
        uint32_t w, saved;
        memcpy(&saved, &v[p], sizeof saved);
        for (int bit = 0; bit < 32; bit += 7) {
            w = saved ^ (1u << bit);
            memcpy(&v[p], &w, sizeof w);
            missed += cpu_checksum(v, N) == base;
        }
        v[p] = 0.0f; /* a chunk whose D2H never ran keeps the input fill */
        missed += cpu_checksum(v, N) == base;
        memcpy(&v[p], &saved, sizeof saved);
    }
    CHECK_INT(0, missed);
    CHECK(cpu_checksum(v, N) == base);
}

TEST(the_output_checksum_changes_when_two_different_words_swap) {
    enum { N = 1029 };
    float v[N];
    blog_output(v, N);
    uint64_t base = cpu_checksum(v, N);
    int missed = 0, tried = 0;
    for (int p = 0; p < N; p += 3)
        for (int q = p + 1; q < N; q += 5) {
            if (v[p] == v[q])
                continue;
            float t = v[p];
            v[p] = v[q], v[q] = t;
            missed += cpu_checksum(v, N) == base;
            tried++;
            v[q] = v[p], v[p] = t;
        }
    CHECK(tried > 10000);
    CHECK_INT(0, missed);
    /* Same lane, words 2^31 apart at two rows' distance: 32-bit sums would lose it (2 x 2^31
     * is 0 mod 2^32); the 64-bit lanes keep it. */
    uint32_t lo = 0x00000001u, hi = 0x80000001u;
    memcpy(&v[16], &lo, sizeof lo);
    memcpy(&v[32], &hi, sizeof hi);
    uint64_t before = cpu_checksum(v, N);
    memcpy(&v[16], &hi, sizeof hi);
    memcpy(&v[32], &lo, sizeof lo);
    CHECK(cpu_checksum(v, N) != before);
}

static const check_test_t tests[] = {
    TEST_ENTRY(the_output_checksum_is_the_sums_it_documents_at_every_length),
    TEST_ENTRY(the_output_checksum_names_the_path_it_takes_and_that_path_runs_here),
    TEST_ENTRY(the_output_checksum_changes_with_any_one_word_changed),
    TEST_ENTRY(the_output_checksum_changes_when_two_different_words_swap),
    TEST_ENTRY(a_pinned_threads_team_runs_on_every_cpu_and_the_thread_stays_pinned),
    TEST_ENTRY(the_cpu_baseline_from_a_pinned_thread_uses_every_cpu_and_says_so),
};

CHECK_MAIN("unit-cpu", tests)
