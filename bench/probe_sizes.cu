/* probe_sizes.cu — `make bench-copies`: the seeds' pipeline on small arrays, 2^20 to 2^23
 * elements (4 to 32 MiB), where the sim has run 22-29% quick at 2^20 async v1/v2 x4 on every
 * lent GPU (`make bench-wide`). Plain CUDA, nothing of streamlab's code. Per size, async v1
 * over 1 stream and async v1/v2 over 4 and 16, each:
 *   issued  as the seeds run it, the array memset before the rep
 *   gated   every op queued behind a 3 ms spin before any runs: the device's floor
 * Printed per case: the device's ms (start event to the join's end event), issued over
 * gated, and the host's issue of the rep in us (the start event's record to the end
 * event's, issued cases). The median of REPS, cases interleaved.
 * usage: probe_sizes [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_seeds.cuh"

enum { PS = 16, NSIZE = 4, NCASE_SIZE = 5, NC = NSIZE * NCASE_SIZE * 2, MAXREP = 64 };

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1 || reps > MAXREP) reps = 15;
    size_t maxn = (size_t)1 << 23;
    char *h0, *h1, *d0, *d1;
    probe_copy_arrays(maxn * sizeof(float), &h0, &h1, &d0, &d1);
    static cudaStream_t ps[PS];
    static cudaEvent_t pe[PS];
    probe_seeds_streams(PS, ps, pe);
    cudaStream_t s0;
    cudaEvent_t e0, e1;
    CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int clk = 0;
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    float *hf = (float *)h0, *df = (float *)d0;
    const int Ss[NCASE_SIZE] = {1, 4, 4, 16, 16}, V2[NCASE_SIZE] = {0, 0, 1, 0, 1};
    static float t[NC][MAXREP];
    static double iss[NC][MAXREP];
    for (int r = -1; r < reps; r++)
        for (int k = 0; k < NC; k++) {
            int c = (r & 1) ? NC - 1 - k : k;
            int si = c / (NCASE_SIZE * 2), cs = (c / 2) % NCASE_SIZE, gated = c % 2;
            size_t n = (size_t)1 << (20 + si);
            memset(hf, 0, n * sizeof(float));
            CK(cudaDeviceSynchronize());
            if (gated) spin<<<1, 1, 0, s0>>>((long long)clk * 3); /* 3 ms */
            double a = probe_now_us();
            probe_seeds_issue(hf, df, n, Ss[cs], V2[cs], s0, ps, pe, e0, e1);
            double b = probe_now_us();
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 0) {
                t[c][r] = ms;
                iss[c][r] = b - a;
            }
        }
    printf("%-6s %-10s %3s %9s %9s %9s %10s\n", "size", "variant", "S", "issued", "gated", "issued/", "issue_us");
    for (int c = 0; c < NC; c += 2) {
        int si = c / (NCASE_SIZE * 2), cs = (c / 2) % NCASE_SIZE;
        qsort(t[c], reps, sizeof(float), cmp_float);
        qsort(t[c + 1], reps, sizeof(float), cmp_float);
        double is = probe_median(iss[c], reps);
        float mi = t[c][reps / 2], mg = t[c + 1][reps / 2];
        printf("2^%-4d %-10s %3d %9.4f %9.4f %9.3f %10.1f\n", 20 + si,
               V2[cs] ? "async_v2" : "async_v1", Ss[cs], mi, mg, mi / mg, is);
    }
    return 0;
}
