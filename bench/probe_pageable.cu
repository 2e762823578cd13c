/* probe_pageable.cu — `make bench-wide`'s companion: what a pageable copy costs as a pipeline
 * makes it, against what the calibration measures. Plain CUDA, nothing of streamlab's code.
 * The calibration times 256 MiB of pageable memory faulted in once and copied back to back,
 * keeping the fastest of three; a pipeline's array is written by the CPU before every rep
 * (the seeds' memset) and read after it (the check). Per size (16 and 128 MiB), the median
 * and the best of REPS reps, GB/s (cases interleaved rep by rep):
 *   h2d-quiet   the calibration's way: cudaMemcpy H2D of memory nobody wrote since
 *   h2d-fresh   the array memset just before the copy
 *   d2h-quiet   cudaMemcpy D2H into memory nobody reads after
 *   d2h-read    the array read (summed) after each copy
 *   seq         the seeds' sequential step on pageable memory: memset, H2D, kernel, D2H,
 *               event-timed (ms), then the check; and its phases' host times (ms)
 * usage: probe_pageable [REPS] */
#include <cuda_runtime.h>

#include "probe_util.cuh"
#include "seed_kernel.cuh"

#define NCASES 5

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 9;
    if (reps < 1 || reps > 200)
        reps = 9;
    size_t sizes[2] = {16u << 20, 128u << 20};
    const char *names[NCASES] = {"h2d-quiet", "h2d-fresh", "d2h-quiet", "d2h-read", "seq"};
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int z = 0; z < 2; z++) {
        size_t bytes = sizes[z], n = bytes / sizeof(float);
        float *h = (float *)malloc(bytes), *d = NULL;
        double *v[NCASES], *ph[3];
        volatile double sink = 0;
        if (!h) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        memset(h, 0, bytes);
        CK(cudaMalloc((void **)&d, bytes));
        for (int c = 0; c < NCASES; c++)
            v[c] = (double *)calloc((size_t)reps, sizeof(double));
        for (int k = 0; k < 3; k++)
            ph[k] = (double *)calloc((size_t)reps, sizeof(double));
        for (int r = -2; r < reps; r++) {
            for (int c = 0; c < NCASES; c++) {
                float ms = 0;
                double t[4] = {0};
                if (c == 1 || c == 4)
                    memset(h, 0, bytes);
                t[0] = probe_now_us();
                CK(cudaEventRecord(e0, 0));
                if (c <= 1 || c == 4)
                    CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
                t[1] = probe_now_us();
                if (c == 4)
                    kernel<<<(unsigned)(n / BLOCK), BLOCK>>>(d, 0);
                if (c >= 2)
                    CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
                t[2] = probe_now_us();
                CK(cudaEventRecord(e1, 0));
                CK(cudaEventSynchronize(e1));
                CK(cudaEventElapsedTime(&ms, e0, e1));
                t[3] = probe_now_us();
                if (c == 3 || c == 4) {
                    double s = 0;
                    for (size_t i = 0; i < n; i += 16)
                        s += h[i];
                    sink = sink + s;
                }
                if (r < 0)
                    continue;
                v[c][r] = c == 4 ? ms : (double)bytes / (ms * 1e6);
                if (c == 4) {
                    ph[0][r] = (t[1] - t[0]) / 1e3;
                    ph[1][r] = (t[2] - t[1]) / 1e3;
                    ph[2][r] = (t[3] - t[2]) / 1e3;
                }
            }
        }
        printf("%zu MiB pageable, %d reps:", bytes >> 20, reps);
        for (int c = 0; c < NCASES; c++) {
            double best = 0;
            for (int r = 0; r < reps; r++)
                best = c == 4 ? (best == 0 || v[c][r] < best ? v[c][r] : best) : (v[c][r] > best ? v[c][r] : best);
            printf("  %s %.2f (best %.2f)%s", names[c], probe_median(v[c], reps), best, c == 4 ? " ms" : " GB/s");
        }
        printf("\n  seq phases (host ms): H2D call %.2f, kernel + D2H call %.2f, after %.2f (sink %g)\n",
               probe_median(ph[0], reps), probe_median(ph[1], reps), probe_median(ph[2], reps), (double)sink);
        CK(cudaFree(d));
        free(h);
        for (int c = 0; c < NCASES; c++)
            free(v[c]);
        for (int k = 0; k < 3; k++)
            free(ph[k]);
    }
    return 0;
}
