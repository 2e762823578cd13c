/* probe_small.cu — `make bench-copies`: what a small copy costs on its engine, queued
 * behind others (plain CUDA, nothing of streamlab's code, like ref_overlap.cu).
 * 16 MiB in pieces of 64 KiB .. 1 MiB: H2D alone, D2H alone, both at once; the pieces of
 * a direction in 1 stream or spread over 8 (each direction its own streams); every copy
 * queued before any runs (the streams wait on an event recorded behind a 3 ms spin), so
 * the engines, not the host, set the pace. Per case the median of REPS, cases interleaved.
 * Prints per piece us: (the last copy's end - the gate) / pieces. Then the seeds' 2^22
 * pipeline over 32-256 streams, gated (every op queued first: the device's floor, no host
 * in it) and issued as the seeds do.
 * On a lent H100 (2026-11-26, GPU-244be7e1), per piece both ways from 1 / 8 streams:
 * 64 KiB 4.9 / 5.0 us, 128 KiB 6.7 / 6.9, 256 KiB 9.8 / 10.1, 512 KiB 15.1 / 15.5; D2H
 * alone at 64 KiB 3.1-3.3, H2D alone 3.8-4.0. The gated pipeline: 0.53, 0.68-0.70,
 * 0.91-0.93 and 1.34-1.43 ms at 32, 64, 128 and 256 streams.
 * usage: probe_small [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_seeds.cuh"
enum { MS = 8 };
static cudaStream_t s0, sh[MS], sd[MS];
static cudaEvent_t e0, e1, ej[2 * MS];
static char *h0, *h1, *d0, *d1;
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1 || reps > 64) reps = 15;
    size_t b = (size_t)16 << 20;
    probe_copy_arrays(b, &h0, &h1, &d0, &d1);
    probe_copy_streams(MS, &s0, sh, sd, &e0, &e1, ej);
    int clk = 0; CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    size_t pieces[] = {64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20};
    const char *dn[] = {"h2d", "d2h", "both"};
    int Ss[] = {1, 8};
    enum { NC = 5 * 3 * 2 };
    float t[NC][64];
    for (int r = -1; r < reps; r++)
        for (int k = 0; k < NC; k++) {
            int c = (r & 1) ? NC - 1 - k : k;
            size_t piece = pieces[c / 6]; int dir = (c / 2) % 3, S = Ss[c % 2];
            CK(cudaDeviceSynchronize());
            spin<<<1, 1, 0, s0>>>((long long)clk * 3); /* 3 ms */
            CK(cudaEventRecord(e0, s0));
            for (int i = 0; i < S; i++) { CK(cudaStreamWaitEvent(sh[i], e0, 0)); CK(cudaStreamWaitEvent(sd[i], e0, 0)); }
            int n = 0;
            for (size_t off = 0; off < b; off += piece, n++) {
                if (dir != 1) CK(cudaMemcpyAsync(d0 + off, h0 + off, piece, cudaMemcpyHostToDevice, sh[n % S]));
                if (dir != 0) CK(cudaMemcpyAsync(h1 + off, d1 + off, piece, cudaMemcpyDeviceToHost, sd[n % S]));
            }
            for (int i = 0; i < S; i++) {
                CK(cudaEventRecord(ej[2 * i], sh[i])); CK(cudaStreamWaitEvent(s0, ej[2 * i], 0));
                CK(cudaEventRecord(ej[2 * i + 1], sd[i])); CK(cudaStreamWaitEvent(s0, ej[2 * i + 1], 0));
            }
            CK(cudaEventRecord(e1, s0));
            CK(cudaEventSynchronize(e1));
            float ms = 0; CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 0) t[c][r] = ms;
        }
    for (int c = 0; c < NC; c++) {
        qsort(t[c], reps, sizeof(float), cmp_float);
        size_t piece = pieces[c / 6]; int dir = (c / 2) % 3, S = Ss[c % 2];
        size_t np = b / piece;
        printf("piece %5zu KiB x%3zu %-4s S %d: median %.4f ms min %.4f  GB/s each way %.1f  per piece %.2f us\n", piece >> 10, np, dn[dir], S,
               t[c][reps / 2], t[c][0], b / t[c][reps / 2] / 1e6, t[c][reps / 2] * 1e3 / np);
    }
    /* part 2: the seeds' 2^22 pipeline (H2D, the seeds' kernel, D2H per chunk) over S
     * streams, v1 or v2 issue order, gated (every op queued before any runs: the device's
     * floor, no host in it) or issued as the seeds do (the streams start at once) */
    {
        enum { PS = 256 };
        static cudaStream_t ps[PS]; static cudaEvent_t pe[PS];
        probe_seeds_streams(PS, ps, pe);
        size_t n = (size_t)1 << 22;
        float *hf = (float *)h0, *df = (float *)d0;
        int SS[] = {32, 64, 128, 256};
        enum { PC = 4 * 2 * 2 };
        static float tt[PC][64];
        for (int r = -1; r < reps; r++)
            for (int k = 0; k < PC; k++) {
                int c = (r & 1) ? PC - 1 - k : k;
                int S = SS[c / 4], v2 = (c / 2) % 2, gated = c % 2;
                memset(hf, 0, n * sizeof(float));
                CK(cudaDeviceSynchronize());
                if (gated) spin<<<1, 1, 0, s0>>>((long long)clk * 3);
                float ms = probe_seeds_pipeline(hf, df, n, S, v2, s0, ps, pe, e0, e1);
                if (r >= 0) tt[c][r] = ms;
            }
        for (int c = 0; c < PC; c++) {
            qsort(tt[c], reps, sizeof(float), cmp_float);
            printf("seeds 2^22 %s x%3d %s: median %.4f ms min %.4f\n", (c / 2) % 2 ? "async_v2" : "async_v1", SS[c / 4],
                   c % 2 ? "gated (device floor)" : "issued", tt[c][reps / 2], tt[c][0]);
        }
    }
    return 0;
}
