/* probe_head.cu — `make bench-copies`: where the seeds' 2^25 pipelines issued lose time
 * against their device's floor (plain CUDA, nothing of streamlab's code). Per point (async_v1
 * x64, x128, x256; async_v2 x32, x256), the median of REPS of each case, cases interleaved:
 *   issued          as the seeds run it, the array memset before the rep
 *   gated           every op queued behind a 3 ms spin before any runs: the device's floor
 *   prewarm         issued, right after one tiny H2D, kernel and D2H on a side stream
 *                   (each kind's first call of the rep is then not its first call)
 *   nomemset        issued, the array not written before the rep
 *   gated-nomemset  gated, the array not written
 *   head100/300     the streams gated by a 0.1 / 0.3 ms spin while the host issues: the
 *                   host starts that far ahead of the device
 * Every time is the device's work after its gate (the start event is recorded behind it).
 * On a lent H100 (GPU-b0f1c24c, 2026-11-26, medians of three passes): async_v1 x128 issued
 * 3.67 ms, gated 3.40, prewarm 3.73, nomemset 3.77, head100 3.67, head300 3.48.
 * usage: probe_head [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_seeds.cuh"
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 9;
    size_t n = (size_t)1 << 25;
    float *hf, *df, *hw, *dw;
    CK(cudaMallocHost((void **)&hf, n * 4)); CK(cudaMalloc((void **)&df, n * 4));
    CK(cudaMallocHost((void **)&hw, 1 << 16)); CK(cudaMalloc((void **)&dw, 1 << 16));
    memset(hf, 0, n * 4);
    int clk = 0; CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    enum { PS = 256 };
    static cudaStream_t ps[PS]; static cudaEvent_t pe[PS];
    cudaStream_t s0, sw; cudaEvent_t e0, e1;
    CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&sw, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    probe_seeds_streams(PS, ps, pe);
    struct { int v2, S; } pts[] = {{0, 64}, {0, 128}, {0, 256}, {1, 32}, {1, 256}};
    const char *cn[] = {"issued", "gated", "prewarm", "nomemset", "gated-nomemset", "head100", "head300"};
    enum { NP = 5, NC = 7 };
    static float tt[NP][NC][64];
    for (int r = -1; r < reps; r++)
        for (int pk = 0; pk < NP * NC; pk++) {
            int k = (r & 1) ? NP * NC - 1 - pk : pk;
            int p = k / NC, c = k % NC, v2 = pts[p].v2, S = pts[p].S;
            if (c != 3 && c != 4) memset(hf, 0, n * sizeof(float));
            CK(cudaDeviceSynchronize());
            if (c == 2) {
                CK(cudaMemcpyAsync(dw, hw, 4096, cudaMemcpyHostToDevice, sw));
                kernel<<<1, BLOCK, 0, sw>>>(dw, 0);
                CK(cudaMemcpyAsync(hw, dw, 4096, cudaMemcpyDeviceToHost, sw));
                CK(cudaStreamSynchronize(sw));
            }
            if (c == 1 || c == 4) spin<<<1, 1, 0, s0>>>((long long)clk * 3);
            if (c == 5) spin<<<1, 1, 0, s0>>>((long long)clk / 10);
            if (c == 6) spin<<<1, 1, 0, s0>>>((long long)clk * 3 / 10);
            float ms = probe_seeds_pipeline(hf, df, n, S, v2, s0, ps, pe, e0, e1);
            if (r >= 0) tt[p][c][r] = ms;
        }
    for (int p = 0; p < NP; p++) {
        printf("2^25 %s x%3d:", pts[p].v2 ? "async_v2" : "async_v1", pts[p].S);
        for (int c = 0; c < NC; c++) {
            qsort(tt[p][c], reps, sizeof(float), cmp_float);
            printf("  %s %.3f (%.3f-%.3f)", cn[c], tt[p][c][reps / 2], tt[p][c][0], tt[p][c][reps - 1]);
        }
        printf("\n");
    }
    return 0;
}
