/* probe_copies.cu — `make bench-copies`: what a copy costs beyond its bytes, the cost
 * that bounds every chunked pipeline (bench-gpu's "at best" line). Plain CUDA, nothing
 * of streamlab's code, like ref_overlap.cu.
 * 16 MiB (and 128 MiB) copied in pieces of 256 KiB .. 16 MiB, H2D alone, D2H alone and
 * both at once, the pieces of a direction spread round-robin over S = 1, 2, 4 streams
 * (do copies from other streams hide the cost?), issued call by call or launched as one
 * CUDA graph (does the host's issue cause it?). Per case the median of REPS, cases
 * interleaved (forward, then backward); per piece: the median over the pieces' count.
 * On the lent H100 (2026-11-24, GPU-5d7eec07): 2.4-2.8 us per H2D piece, 3.3-3.9 per
 * piece both ways, the same over 1, 2 or 4 streams and from a graph.
 * usage: probe_copies [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_util.cuh"
enum { MS = 8 };
static cudaStream_t s0, sh[MS], sd[MS];
static cudaEvent_t e0, e1, ej[2 * MS];
static char *h0, *h1, *d0, *d1;
static void issue(size_t b, size_t piece, int dir, int S) {
    CK(cudaEventRecord(e0, s0));
    for (int i = 0; i < S; i++) { CK(cudaStreamWaitEvent(sh[i], e0, 0)); CK(cudaStreamWaitEvent(sd[i], e0, 0)); }
    int n = 0;
    for (size_t off = 0; off < b; off += piece, n++) {
        size_t len = b - off < piece ? b - off : piece;
        if (dir != 1) CK(cudaMemcpyAsync(d0 + off, h0 + off, len, cudaMemcpyHostToDevice, sh[n % S]));
        if (dir != 0) CK(cudaMemcpyAsync(h1 + off, d1 + off, len, cudaMemcpyDeviceToHost, sd[n % S]));
    }
    for (int i = 0; i < S; i++) {
        CK(cudaEventRecord(ej[2 * i], sh[i])); CK(cudaStreamWaitEvent(s0, ej[2 * i], 0));
        CK(cudaEventRecord(ej[2 * i + 1], sd[i])); CK(cudaStreamWaitEvent(s0, ej[2 * i + 1], 0));
    }
}
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    size_t maxb = (size_t)128 << 20;
    probe_copy_arrays(maxb, &h0, &h1, &d0, &d1);
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    printf("bench-copies: %s, %d async engines; medians of %d reps\n", p.name, p.asyncEngineCount, reps);
    probe_copy_streams(MS, &s0, sh, sd, &e0, &e1, ej);
    typedef struct { size_t b, piece; int dir, S, graph; } cs;
    cs c[256]; int nc = 0;
    size_t pieces[] = {(size_t)256 << 10, (size_t)512 << 10, (size_t)1 << 20, (size_t)2 << 20, (size_t)4 << 20, (size_t)16 << 20};
    int Ss[] = {1, 2, 4};
    for (int dir = 0; dir < 3; dir++) for (int p = 0; p < 6; p++) for (int s = 0; s < 3; s++) {
        if (pieces[p] == ((size_t)16 << 20) && s) continue;
        c[nc++] = (cs){(size_t)16 << 20, pieces[p], dir, Ss[s], 0};
    }
    for (int p = 2; p < 4; p++) for (int s = 0; s < 2; s++) c[nc++] = (cs){(size_t)16 << 20, pieces[p], 2, Ss[s], 1};
    c[nc++] = (cs){maxb, maxb, 2, 1, 0};
    c[nc++] = (cs){maxb, (size_t)8 << 20, 2, 1, 0};
    c[nc++] = (cs){maxb, (size_t)8 << 20, 2, 2, 0};
    c[nc++] = (cs){maxb, (size_t)4 << 20, 2, 1, 0};
    c[nc++] = (cs){maxb, (size_t)4 << 20, 2, 2, 0};
    cudaGraphExec_t *ge = (cudaGraphExec_t *)calloc(nc, sizeof *ge);
    for (int i = 0; i < nc; i++) if (c[i].graph) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
        issue(c[i].b, c[i].piece, c[i].dir, c[i].S);
        CK(cudaStreamEndCapture(s0, &g));
        CK(cudaGraphInstantiate(&ge[i], g, 0));
    }
    float *t = (float *)calloc((size_t)nc * reps, 4);
    for (int r = 0; r < reps + 2; r++)
        for (int i0 = 0; i0 < nc; i0++) {
            int i = (r & 1) ? nc - 1 - i0 : i0;
            if (c[i].graph) { CK(cudaEventRecord(e0, s0)); CK(cudaGraphLaunch(ge[i], s0)); }
            else issue(c[i].b, c[i].piece, c[i].dir, c[i].S);
            CK(cudaEventRecord(e1, s0)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 2) t[(size_t)i * reps + r - 2] = ms;
        }
    /* the bytes arrived: the H2D source (all 1s) is on the device, the D2H source (0s) on the host */
    {
        char *chk = (char *)malloc(maxb);
        if (!chk) return 1;
        CK(cudaMemcpy(chk, d0, maxb, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < maxb; i++) if (chk[i] != 1 || h1[i] != 0) { printf("WRONG: byte %zu did not arrive\n", i); return 1; }
        free(chk);
        printf("every byte arrived both ways (verified)\n");
    }
    const char *dn[3] = {"H2D", "D2H", "both"};
    for (int i = 0; i < nc; i++) {
        float *tc = t + (size_t)i * reps; qsort(tc, reps, 4, cmp_float);
        size_t np = (c[i].b + c[i].piece - 1) / c[i].piece;
        printf("%3zu MiB %-4s piece %5zu KiB x%3zu S %d %s: median %.4f ms min %.4f  GB/s each way %.1f  (per piece %.2f us)\n", c[i].b >> 20, dn[c[i].dir],
               c[i].piece >> 10, np, c[i].S, c[i].graph ? "graph" : "issue", tc[reps / 2], tc[0], c[i].b / tc[reps / 2] / 1e6, tc[reps / 2] * 1e3 / np);
    }
    return 0;
}
