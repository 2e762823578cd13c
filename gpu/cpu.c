/* cpu.c — the CPU baseline (seed 000's "CPU*" solver): the same per-element kernel as
 * the GPU (kernels.h) over the whole array with OpenMP threads, timed by the wall clock,
 * one host op per thread in the timeline, every repetition verified: the output starts
 * as NaN, so an element no thread wrote, or wrote wrong, fails the run. Also the checksum
 * by which the CUDA backend checks a rep's output against one checked in full. */
#include <jansson.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"
#include "cpu.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(STREAMLAB_NO_AVX2)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1 /* built with a target attribute, run where the CPU says it has AVX2 */
#endif

/* The CPUs the process may use, read before main runs (before any thread is pinned). */
static cpu_set_t process_cpus;
static bool process_cpus_known;

__attribute__((constructor)) static void read_process_cpus(void) {
    process_cpus_known = sched_getaffinity(0, sizeof process_cpus, &process_cpus) == 0;
}

#define CHECKSUM_LANES 8

typedef uint32_t __attribute__((may_alias)) word_t; /* a float's bits, read as they are */

static uint64_t checksum_fold(uint64_t s, uint64_t v) {
    return (s ^ v) * 0x100000001b3ull; /* FNV-1a's prime, a word at a time: for a fixed s, v -> result is one-to-one */
}

/* The lanes' sums folded into one, then the last words (fewer than a row), each with its
 * position. Each lane gives a + 2b: a word changed by d at row j of m changes it by
 * d(1 + 2(m - j)), an odd multiple of d; two words x, y of a lane swapped change it by
 * 2(x - y)(rows apart), below 2^62 for n below 2^32. Neither is 0 mod 2^64, and each fold is
 * one-to-one in the lane it takes in, so either change always changes the result. */
static uint64_t checksum_finish(const uint64_t *a, const uint64_t *b, const word_t *w, uint64_t i, uint64_t n) {
    uint64_t s = checksum_fold(0xcbf29ce484222325ull, n);
    for (int k = 0; k < CHECKSUM_LANES; k++)
        s = checksum_fold(s, a[k] + 2 * b[k]);
    for (; i < n; i++)
        s = checksum_fold(checksum_fold(s, i), w[i]);
    return s;
}

uint64_t cpu_checksum_portable(const float *buf, uint64_t n) {
    const word_t *w = (const word_t *)buf;
    uint64_t a[CHECKSUM_LANES] = {0}, b[CHECKSUM_LANES] = {0}, i = 0;
    for (; i + CHECKSUM_LANES <= n; i += CHECKSUM_LANES)
        for (int k = 0; k < CHECKSUM_LANES; k++) {
            a[k] += w[i + k];
            b[k] += a[k];
        }
    return checksum_finish(a, b, w, i, n);
}

bool cpu_checksum_sse2(const float *buf, uint64_t n, uint64_t *sum) {
#ifdef __SSE2__
    const word_t *w = (const word_t *)buf;
    uint64_t a[CHECKSUM_LANES], b[CHECKSUM_LANES], i = 0;
    /* lanes 0-1, 2-3, 4-5, 6-7 in four pairs of registers: cpu_checksum_portable's sums */
    __m128i zero = _mm_setzero_si128(), va[4], vb[4];
    for (int k = 0; k < 4; k++)
        va[k] = vb[k] = zero;
    for (; i + CHECKSUM_LANES <= n; i += CHECKSUM_LANES) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(w + i));
        __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(w + i + 4));
        va[0] = _mm_add_epi64(va[0], _mm_unpacklo_epi32(x0, zero));
        va[1] = _mm_add_epi64(va[1], _mm_unpackhi_epi32(x0, zero));
        va[2] = _mm_add_epi64(va[2], _mm_unpacklo_epi32(x1, zero));
        va[3] = _mm_add_epi64(va[3], _mm_unpackhi_epi32(x1, zero));
        for (int k = 0; k < 4; k++)
            vb[k] = _mm_add_epi64(vb[k], va[k]);
    }
    for (int k = 0; k < 4; k++) {
        _mm_storeu_si128((__m128i *)(void *)(a + 2 * k), va[k]);
        _mm_storeu_si128((__m128i *)(void *)(b + 2 * k), vb[k]);
    }
    *sum = checksum_finish(a, b, w, i, n);
    return true;
#else
    (void)buf, (void)n, (void)sum;
    return false;
#endif
}

#ifdef HAVE_AVX2_PATH
/* lanes 0-3 and 4-7 in two pairs of registers, each word widened to 64 bits as it is loaded:
 * half the SSE2 path's instructions, which on the lent H100s' hosts kept it from the memory's
 * pace (docs/METHOD.md, "The time between reps") */
__attribute__((target("avx2"))) static void checksum_avx2_sums(const word_t *w, uint64_t n, uint64_t *a,
                                                                uint64_t *b, uint64_t *i_out) {
    __m256i va0 = _mm256_setzero_si256(), va1 = va0, vb0 = va0, vb1 = va0;
    uint64_t i = 0;
    for (; i + CHECKSUM_LANES <= n; i += CHECKSUM_LANES) {
        va0 = _mm256_add_epi64(va0, _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(w + i))));
        va1 = _mm256_add_epi64(va1,
                               _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(w + i + 4))));
        vb0 = _mm256_add_epi64(vb0, va0);
        vb1 = _mm256_add_epi64(vb1, va1);
    }
    _mm256_storeu_si256((__m256i *)(void *)a, va0);
    _mm256_storeu_si256((__m256i *)(void *)(a + 4), va1);
    _mm256_storeu_si256((__m256i *)(void *)b, vb0);
    _mm256_storeu_si256((__m256i *)(void *)(b + 4), vb1);
    *i_out = i;
}
#endif

bool cpu_checksum_avx2(const float *buf, uint64_t n, uint64_t *sum) {
#ifdef HAVE_AVX2_PATH
    if (!__builtin_cpu_supports("avx2"))
        return false;
    const word_t *w = (const word_t *)buf;
    uint64_t a[CHECKSUM_LANES], b[CHECKSUM_LANES], i = 0;
    checksum_avx2_sums(w, n, a, b, &i);
    *sum = checksum_finish(a, b, w, i, n);
    return true;
#else
    (void)buf, (void)n, (void)sum;
    return false;
#endif
}

uint64_t cpu_checksum(const float *buf, uint64_t n) {
    uint64_t sum = 0;
    if (cpu_checksum_avx2(buf, n, &sum) || cpu_checksum_sse2(buf, n, &sum))
        return sum;
    return cpu_checksum_portable(buf, n);
}

const char *cpu_checksum_path(void) {
    uint64_t sum = 0;
    float one = 1.0f;
    return cpu_checksum_avx2(&one, 1, &sum) ? "avx2" : cpu_checksum_sse2(&one, 1, &sum) ? "sse2" : "portable";
}

void cpu_team_open(cpu_team_t *t) {
    t->widened = false;
    if (!process_cpus_known || pthread_getaffinity_np(pthread_self(), sizeof t->saved, &t->saved) != 0 ||
        CPU_EQUAL(&t->saved, &process_cpus))
        return;
    t->widened = pthread_setaffinity_np(pthread_self(), sizeof process_cpus, &process_cpus) == 0;
}

void cpu_team_close(cpu_team_t *t) {
    if (t->widened && pthread_setaffinity_np(pthread_self(), sizeof t->saved, &t->saved) == 0)
        t->widened = false;
}

int cpu_team_cpus(int nthreads) {
    cpu_set_t all;
    CPU_ZERO(&all);
    cpu_team_t team;
    cpu_team_open(&team);
#pragma omp parallel num_threads(nthreads)
    {
        cpu_set_t mine;
        if (pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) == 0) {
#pragma omp critical(cpu_team_cpus)
            CPU_OR(&all, &all, &mine);
        }
    }
    cpu_team_close(&team);
    return CPU_COUNT(&all);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One timed pass; per-thread start/end (µs from t0) into tstart/tend. */
static double cpu_pass(const spec_t *spec, const float *in, float *out, double *tstart, double *tend,
                       uint64_t *tlo, uint64_t *tcount, int nthreads) {
    uint64_t n = spec->size;
    int kernel = (int)spec->kernel, iters = spec->kernel_iters;
    double t0 = now_us();
#pragma omp parallel num_threads(nthreads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        uint64_t base = n / (uint64_t)nt, extra = n % (uint64_t)nt, ut = (uint64_t)t;
        uint64_t lo = ut * base + (ut < extra ? ut : extra);
        uint64_t cnt = base + (ut < extra ? 1 : 0);
        tstart[t] = now_us() - t0;
        for (uint64_t i = lo; i < lo + cnt; i++)
            out[i] = kernel_apply(kernel, iters, i, in[i]);
        tend[t] = now_us() - t0;
        tlo[t] = lo;
        tcount[t] = cnt;
    }
    return now_us() - t0;
}

int cpu_run(const spec_t *spec, const machine_info_t *m, result_t *res, sl_error_t *err) {
    (void)m;
    uint64_t n = spec->size;
    int nthreads = omp_get_max_threads();
    cpu_team_t team = {.widened = false};
    int cap = spec->reps_auto ? (spec->reps > 0 ? spec->reps : REPS_AUTO_MAX) : spec->reps;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    double *tstart = calloc((size_t)nthreads, sizeof(double)), *tend = calloc((size_t)nthreads, sizeof(double));
    uint64_t *tlo = calloc((size_t)nthreads, sizeof(uint64_t)), *tcount = calloc((size_t)nthreads, sizeof(uint64_t));
    res->rep_ms = calloc((size_t)cap, sizeof *res->rep_ms);
    res->timelines = calloc((size_t)cap, sizeof *res->timelines);
    int rc = SL_OK;
    if (!in || !out || !tstart || !tend || !tlo || !tcount || !res->rep_ms || !res->timelines) {
        rc = sl_error_set(err, SL_E_NOMEM, "size", "out of memory for %llu elements on the host",
                          (unsigned long long)n);
        goto cleanup;
    }
    res->backend = BACKEND_CPU;
    int cpus = cpu_team_cpus(nthreads); /* the team's CPUs, said in the result */
    cpu_team_open(&team);
#pragma omp parallel for num_threads(nthreads)
    for (uint64_t i = 0; i < n; i++)
        in[i] = kernel_input((int)spec->kernel, i);
    for (int w = 0; w < spec->warmup; w++)
        cpu_pass(spec, in, out, tstart, tend, tlo, tcount, nthreads);
    double spent_ms = 0;
    int r;
    for (r = 0; r < cap; r++) {
        memset(out, 0xff, n * sizeof *out); /* NaN: an element nobody wrote fails */
        double us = cpu_pass(spec, in, out, tstart, tend, tlo, tcount, nthreads);
        res->rep_ms[r] = us / 1000.0;
        spent_ms += us / 1000.0;
        for (int t = 0; t < nthreads; t++) {
            op_event_t ev = {.device = 0, .stream = t, .chunk = t, .op = OP_HOST,
                             .start_us = tstart[t], .end_us = tend[t], .bytes = 0};
            if (tcount[t] && timeline_push(&res->timelines[r], &ev)) {
                rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory for the timeline");
                res->reps = r + 1;
                goto cleanup;
            }
        }
        res->timelines[r].total_us = us;
        uint64_t bad = 0, first_bad = 0;
#pragma omp parallel for reduction(+ : bad) num_threads(nthreads)
        for (uint64_t i = 0; i < n; i++)
            if (!kernel_output_ok((int)spec->kernel, out[i], kernel_apply((int)spec->kernel, spec->kernel_iters, i, in[i])))
                bad++;
        if (bad) {
            for (first_bad = 0; first_bad < n; first_bad++)
                if (!kernel_output_ok((int)spec->kernel, out[first_bad],
                                      kernel_apply((int)spec->kernel, spec->kernel_iters, first_bad, in[first_bad])))
                    break;
            res->reps = r + 1;
            rc = sl_error_set(err, SL_E_VERIFY, "", "rep %d: %llu elements wrong, first at %llu (got %g)", r,
                              (unsigned long long)bad, (unsigned long long)first_bad, (double)out[first_bad]);
            goto cleanup;
        }
        if (spec->reps_auto && (stats_median_known(res->rep_ms, (size_t)r + 1, 0.005) || spent_ms > REPS_AUTO_BUDGET_MS)) {
            r++;
            break;
        }
    }
    res->reps = r;
    result_summarise(res);
    res->verified = true;
    snprintf(res->verification, sizeof res->verification, "cpu_reference");
    res->extra = json_pack("{s:i, s:i, s:s, s:b}", "threads", nthreads, "cpus", cpus, "timer", "clock_monotonic",
                           "reps_auto", spec->reps_auto);
cleanup:
    cpu_team_close(&team);
    free(in);
    free(out);
    free(tstart);
    free(tend);
    free(tlo);
    free(tcount);
    return rc;
}
