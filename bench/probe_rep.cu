/* probe_rep.cu — `make bench-host`: what a 2^25 rep of the seeds' async_v1 costs the host over a
 * 2^22 one, fitted as issue_first_large_us and issue_call_large_us are (a head plus a cost per
 * call past each kind's first, over 1, 4, 16, 64 and 256 streams, Theil-Sen), and whether the
 * rep's surroundings move it. Six ways, plain CUDA: 0, the array memset, the start event on the
 * legacy stream, the ops, a sync; 1, with the reference's stop event before the issue's end; 2,
 * with the output read back on this thread after the sync, as ref_overlap checks it and
 * streamlab sums it; 3, with both (ref_overlap's rep); 4, a sync between the memset and the
 * step (the calibration's order until 2026-11-26); 5, way 0 in the calibration's blocks (each
 * stream count's five reps of 2^22, then five of 2^25, the first two of each left out, three
 * times over). Ways 0-4: per point REPS reps after 3 warm-ups, one point's reps together. Each
 * row: each stream count's medians (µs) at 2^22 / 2^25, then the fit.
 * On a lent H200 (GPU-af990897, 2026-11-26, five passes) the head came to 45-88 µs by way 0,
 * 47-86 by 1, 46-79 by 2, 46-91 by 3; on a lent H100 (GPU-e338a685, two passes) 36 and 72, 31
 * and 67, 36 and 68, 77 and 62. None moves it past the passes' own spread: the head moves by
 * tens of µs from one pass to the next on one host. On lent H200 GPU-c6f60d55 way 4 gave 55.6
 * and 66.0 beside way 0's 72.3 and 67.3; on GPU-5bce4520, three passes interleaved with
 * streamlab's calibration, way 0 82.4, 62.7, 82.5, way 5 64.2, 62.4, 53.6, the calibration
 * (its memset now after the sync) 66.5, 50.5, 45.7; on lent H100 GPU-b7fdb19f way 0 53.3, 42.2,
 * 16.2, way 4 38.6, 33.4, 24.7, way 5 34.3, 19.3, 37.9, the calibration 28.2, 48.6, 46.2, where
 * the reference's table measured minutes later fits 68.5.
 * usage: probe_rep [REPS [WAYS]]   WAYS: the ways to run, in order, as digits 0-5 (default 012345) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_util.cuh"
#include "seed_kernel.cuh"
enum { NS = 5, MAXREPS = 64, BLOCKS = 3, BLOCK_REPS = 5, BLOCK_SKIP = 2 };
static const int S[NS] = {1, 4, 16, 64, 256};
static float *a, *d;
static cudaStream_t st[256];
static cudaEvent_t start, stop;
static volatile float sink = 0;

/* One async_v1 rep of n elements over `streams` streams, way w (way[] below; 5 as 0): the
 * host's issue time, us. */
static double rep_us(int w, size_t n, int streams) {
    size_t chunk = n / (size_t)streams;
    memset(a, 0, n * 4);
    if (w == 4) CK(cudaDeviceSynchronize());
    double t0 = probe_now_us();
    CK(cudaEventRecord(start, 0));
    for (int i = 0; i < streams; i++) {
        size_t off = i * chunk;
        CK(cudaMemcpyAsync(d + off, a + off, chunk * 4, cudaMemcpyHostToDevice, st[i]));
        kernel<<<(unsigned)(chunk / BLOCK), BLOCK, 0, st[i]>>>(d, (int)off);
        CK(cudaMemcpyAsync(a + off, d + off, chunk * 4, cudaMemcpyDeviceToHost, st[i]));
    }
    if (w == 1 || w == 3) CK(cudaEventRecord(stop, 0));
    double t1 = probe_now_us();
    CK(cudaDeviceSynchronize());
    if (w == 2 || w == 3) {
        float s = 0;
        for (size_t i = 0; i < n; i++) s += a[i];
        sink = sink + s;
    }
    return t1 - t0;
}

int main(int argc, char **argv) {
    static const char *const way[6] = {"memset, the step",       "+ stop event", "+ output read back",
                                       "+ both (the reference)", "memset, a sync, the step",
                                       "the calibration's blocks"};
    int reps = argc > 1 ? atoi(argv[1]) : 21, warm = 3;
    const char *ways = argc > 2 ? argv[2] : "012345";
    if (reps < 1 || reps > MAXREPS) reps = 21;
    size_t big = (size_t)1 << 25;
    CK(cudaMallocHost((void **)&a, big * 4));
    CK(cudaMalloc((void **)&d, big * 4));
    memset(a, 0, big * 4);
    for (int i = 0; i < 256; i++) CK(cudaStreamCreate(&st[i]));
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    printf("probe-rep: the host's issue of an async_v1 rep, us, median of %d: x streams 2^22/2^25 | fit\n", reps);
    for (const char *wc = ways; *wc; wc++) {
        int w = *wc - '0';
        if (w < 0 || w > 5) continue;
        double x[NS], y[NS], slopes[NS * NS], rest[NS], m[NS][2], kept[NS][2][MAXREPS];
        int ns = 0, nk[NS][2] = {{0}};
        printf("%-24s", way[w]);
        if (w < 5) /* one point's reps together, after `warm` */
            for (int k = 0; k < NS; k++)
                for (int lg = 0; lg < 2; lg++)
                    for (int r = -warm; r < reps; r++) {
                        double us = rep_us(w, lg ? big : (size_t)1 << 22, S[k]);
                        if (r >= 0) kept[k][lg][nk[k][lg]++] = us;
                    }
        else /* as gpu/cuda_calibrate.cu's large-array block: blocks of BLOCK_REPS, the first skipped */
            for (int b = 0; b < BLOCKS; b++)
                for (int k = 0; k < NS; k++)
                    for (int lg = 0; lg < 2; lg++)
                        for (int r = 0; r < BLOCK_REPS; r++) {
                            double us = rep_us(w, lg ? big : (size_t)1 << 22, S[k]);
                            if (r >= BLOCK_SKIP) kept[k][lg][nk[k][lg]++] = us;
                        }
        for (int k = 0; k < NS; k++) {
            for (int lg = 0; lg < 2; lg++) m[k][lg] = probe_median(kept[k][lg], nk[k][lg]);
            x[k] = 3.0 * S[k] - 3;
            y[k] = m[k][1] - m[k][0];
            printf("  x%d %.0f/%.0f", S[k], m[k][0], m[k][1]);
        }
        for (int i = 0; i < NS; i++)
            for (int j = i + 1; j < NS; j++) slopes[ns++] = (y[j] - y[i]) / (x[j] - x[i]);
        double slope = probe_median(slopes, ns);
        for (int i = 0; i < NS; i++) rest[i] = y[i] - slope * x[i];
        printf("  | head %.1f, a call %.3f\n", probe_median(rest, NS), slope);
        fflush(stdout);
    }
    return 0;
}
