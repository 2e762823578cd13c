/* probe_rep.cu — `make bench-host`: what a 2^25 rep of the seeds' async_v1 costs the host over a
 * 2^22 one, fitted as issue_first_large_us and issue_call_large_us are (a head plus a cost per
 * call past each kind's first, over 1, 4, 16, 64 and 256 streams, Theil-Sen), and whether the
 * rep's surroundings move it. Four ways, plain CUDA: the calibration's step (memset the array,
 * the start event on the legacy stream, the ops, a sync); with the reference's stop event
 * before the issue's end; with the output read back on this thread after the sync, as
 * ref_overlap checks it and streamlab sums it; with both (ref_overlap's rep). Per point REPS reps
 * after 3 warm-ups, one point's reps together; each row: each stream count's medians (µs) at
 * 2^22 / 2^25, then the fit.
 * On a lent H200 (GPU-af990897, 2026-11-26, five passes) the head came to 45-88 µs the
 * calibration's way, 47-86 with the stop event, 46-79 read back, 46-91 both; on a lent H100
 * (GPU-e338a685, two passes of this form) 36 and 72, 31 and 67, 36 and 68, 77 and 62. Neither
 * moves it past the passes' own spread: the head moves by tens of µs from one pass to the
 * next on one host, where the calibration of another H200 had fitted 18 and 32 and the tables
 * fit 37-102.
 * usage: probe_rep [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_util.cuh"
#include "seed_kernel.cuh"
enum { NS = 5, MAXREPS = 64 };
int main(int argc, char **argv) {
    static const int S[NS] = {1, 4, 16, 64, 256};
    static const char *const way[4] = {"the calibration's step", "+ stop event", "+ output read back",
                                       "+ both (the reference)"};
    int reps = argc > 1 ? atoi(argv[1]) : 21, warm = 3;
    if (reps < 1 || reps > MAXREPS) reps = 21;
    size_t big = (size_t)1 << 25;
    float *a, *d;
    volatile float sink = 0;
    CK(cudaMallocHost((void **)&a, big * 4));
    CK(cudaMalloc((void **)&d, big * 4));
    memset(a, 0, big * 4);
    cudaStream_t st[256];
    for (int i = 0; i < 256; i++) CK(cudaStreamCreate(&st[i]));
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    printf("probe-rep: the host's issue of an async_v1 rep, us, median of %d: x streams 2^22/2^25 | fit\n", reps);
    for (int w = 0; w < 4; w++) {
        double x[NS], y[NS], slopes[NS * NS], rest[NS], issue[MAXREPS];
        int ns = 0;
        printf("%-24s", way[w]);
        for (int k = 0; k < NS; k++) {
            double m[2];
            for (int lg = 0; lg < 2; lg++) {
                size_t n = lg ? big : (size_t)1 << 22, chunk = n / S[k];
                for (int r = -warm; r < reps; r++) {
                    memset(a, 0, n * 4);
                    double t0 = probe_now_us();
                    CK(cudaEventRecord(start, 0));
                    for (int i = 0; i < S[k]; i++) {
                        size_t off = i * chunk;
                        CK(cudaMemcpyAsync(d + off, a + off, chunk * 4, cudaMemcpyHostToDevice, st[i]));
                        kernel<<<(unsigned)(chunk / BLOCK), BLOCK, 0, st[i]>>>(d, (int)off);
                        CK(cudaMemcpyAsync(a + off, d + off, chunk * 4, cudaMemcpyDeviceToHost, st[i]));
                    }
                    if (w & 1) CK(cudaEventRecord(stop, 0));
                    double t1 = probe_now_us();
                    CK(cudaDeviceSynchronize());
                    if (w & 2) {
                        float s = 0;
                        for (size_t i = 0; i < n; i++) s += a[i];
                        sink = sink + s;
                    }
                    if (r >= 0) issue[r] = t1 - t0;
                }
                m[lg] = probe_median(issue, reps);
            }
            x[k] = 3.0 * S[k] - 3;
            y[k] = m[1] - m[0];
            printf("  x%d %.0f/%.0f", S[k], m[0], m[1]);
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
