/* probe_check.c — what a rep's output check costs on this host (issue 19).
 *
 * Between reps the GPU idles while the host checks the rep's output and refills the input,
 * and a longer wait costs the next rep (docs/METHOD.md, "The time between reps"). On a lent
 * H100 streamlab's time between reps was 3.0-4.0 ms at 2^22 where the plain reference's was
 * 2.1-2.4. This times each way of reading the output, right after a D2H copy has written it
 * (as after a rep), round by round in turn, on the calling thread:
 *   checksum      cpu_checksum, streamlab's check (gpu/cpu.c), the path it takes here
 *   sse2, avx2    its SSE2 and AVX2 paths alone (0 where the CPU lacks one)
 *   portable      cpu_checksum_portable, the same sums in plain C
 *   reference     bench/ref_overlap's check: |x - 1| <= 1e-4 for every element, counted
 *   sum32         the words summed in 32-bit lanes: the read alone
 *   memset        the refill both programs do before a rep (no D2H before it)
 * usage: probe_check [LOG2_SIZE ...] (default 22 25), ROUNDS=N (default 21). Prints per size
 * and way the median, least and most ms over the rounds, and the GB/s of the median. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/cpu.h"

#define MAX_ROUNDS 201

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile uint64_t sink;

__attribute__((optimize("O3"))) static uint64_t reference_check(const float *a, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(__builtin_fabsf(a[i] - 1.0f) <= 1e-4f))
            bad++;
    return bad;
}

__attribute__((optimize("O3"))) static uint64_t sum32(const float *buf, size_t n) {
    const uint32_t *w = (const uint32_t *)(const void *)buf;
    uint32_t s[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += w[i + k];
    uint64_t t = 0;
    for (int k = 0; k < 8; k++)
        t += s[k];
    return t;
}

enum { CHECKSUM, SSE2, AVX2, PORTABLE, REFERENCE, SUM32, MEMSET, WAYS };
static const char *way_name[WAYS] = {"checksum", "sse2", "avx2", "portable", "reference", "sum32", "memset"};

static int probe(int lg, int rounds) {
    size_t n = (size_t)1 << lg, bytes = n * sizeof(float);
    float *h = NULL, *d = NULL;
    double ms[WAYS][MAX_ROUNDS];
    int gpu = cudaHostAlloc((void **)&h, bytes, cudaHostAllocDefault) == cudaSuccess &&
              cudaMalloc((void **)&d, bytes) == cudaSuccess;
    if (!gpu) { /* a build machine: plain memory, no copy before each way */
        (void)cudaGetLastError();
        if (h)
            cudaFreeHost(h);
        h = (float *)malloc(bytes);
        if (!h) {
            fprintf(stderr, "probe_check: allocating 2^%d floats failed\n", lg);
            return 1;
        }
        printf("probe_check: no GPU, 2^%d in pageable memory, no D2H before each way\n", lg);
    }
    for (size_t i = 0; i < n; i++)
        h[i] = 1.0f;
    if (gpu && cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        return 1;
    uint64_t want = cpu_checksum_portable(h, n), sum = 0;
    bool have[WAYS];
    for (int w = 0; w < WAYS; w++)
        have[w] = w == SSE2 ? cpu_checksum_sse2(h, 1, &sum) : w == AVX2 ? cpu_checksum_avx2(h, 1, &sum) : true;
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < WAYS; j++) {
            int w = (j + r) % WAYS;
            if (!have[w]) {
                ms[w][r] = 0;
                continue;
            }
            if (gpu && w != MEMSET && cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
                return 1;
            double t0 = now_ms();
            uint64_t v = 0;
            switch (w) {
            case CHECKSUM: v = cpu_checksum(h, n) != want; break;
            case PORTABLE: v = cpu_checksum_portable(h, n) != want; break;
            case REFERENCE: v = reference_check(h, n); break;
            case SSE2: v = !cpu_checksum_sse2(h, n, &sum) || sum != want; break;
            case AVX2: v = !cpu_checksum_avx2(h, n, &sum) || sum != want; break;
            case SUM32: v = sum32(h, n); break;
            default: memset(h, 0, bytes); break;
            }
            ms[w][r] = now_ms() - t0;
            if (w == MEMSET) { /* the array back as the copies read it */
                for (size_t i = 0; i < n; i++)
                    h[i] = 1.0f;
            } else if (w != SUM32 && v) {
                fprintf(stderr, "probe_check: %s found the output wrong\n", way_name[w]);
                return 1;
            }
            sink += v;
        }
    printf("| 2^%d | way | median ms | least | most | GB/s |\n| --- | --- | --- | --- | --- | --- |\n", lg);
    for (int w = 0; w < WAYS; w++) {
        stats_t st;
        stats_compute(ms[w], (size_t)rounds, &st); /* gpu/core.h: the median as every result's */
        if (!have[w])
            printf("| 2^%d | %s | (not on this CPU) | | | |\n", lg, way_name[w]);
        else
            printf("| 2^%d | %s | %.3f | %.3f | %.3f | %.1f |\n", lg, way_name[w], st.median, st.min, st.max,
                   bytes / st.median / 1e6);
    }
    if (gpu) {
        cudaFreeHost(h);
        cudaFree(d);
    } else {
        free(h);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *r = getenv("ROUNDS");
    printf("probe_check: cpu_checksum takes its %s path here\n", cpu_checksum_path());
    int rounds = r ? atoi(r) : 21;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "probe_check: ROUNDS 1-%d\n", MAX_ROUNDS);
        return 2;
    }
    int rc = 0;
    if (argc < 2) {
        rc |= probe(22, rounds);
        rc |= probe(25, rounds);
    }
    for (int i = 1; i < argc && !rc; i++) {
        int lg = atoi(argv[i]);
        if (lg < 10 || lg > 30) {
            fprintf(stderr, "probe_check: LOG2_SIZE 10-30\n");
            return 2;
        }
        rc |= probe(lg, rounds);
    }
    return rc;
}
