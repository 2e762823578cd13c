/* probe_split.cu — `make bench-split`: can zero-copy traffic add to the copy engines'?
 * Plain CUDA, nothing of streamlab's code, like ref_overlap.cu.
 *
 * 1. "copies": H2D and D2H of a fraction f of the array at once on the copy engines (no
 *    kernels), beside a zero-copy kernel (the blog kernel in place on mapped pinned memory)
 *    over the rest: if PCIe carried more than the copy engines move, the aggregate rate
 *    would rise above the copy engines' alone (f = 1).
 * 2. "hybrid": an engine_streams pipeline (H2D, kernel, D2H chained by events over three
 *    streams, k chunks) over the fraction f, the zero-copy kernel over the rest at the same
 *    time, so that its traffic could fill the pipeline's fill and drain.
 * Every case in every rep, interleaved (forward, then backward), the array memset before
 * each as the seeds do; every element of every kernel case verified.
 * usage: probe_split [REPS] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_util.cuh"
__device__ __forceinline__ float blog(unsigned i, float a) { float x = (float)i; float s = sinf(x), c = cosf(x); return a + sqrtf(s * s + c * c); }
__global__ void k_chunk(float *d, unsigned first, unsigned cnt) { unsigned j = blockIdx.x * blockDim.x + threadIdx.x; if (j < cnt) d[j] = blog(first + j, d[j]); }
__global__ void k_zc(float *h, unsigned first, unsigned last) {
    for (unsigned i = first + blockIdx.x * blockDim.x + threadIdx.x; i < last; i += blockDim.x * gridDim.x) h[i] = blog(i, h[i]);
}

enum { MAXC = 64 };
static float *h, *d, *h2, *d2;
static cudaStream_t sh, sk, sd, sz;
static cudaEvent_t eh[MAXC], ek[MAXC], e0, e1, ez, eend;
static int nsm, occ;

/* One rep: the zero-copy kernel over [m, n) with zc_per_sm blocks per SM, and over [0, m)
 * either k chunks of the pipeline or (copies_only) k pairs of H2D and D2H at once. */
static float run(unsigned n, unsigned m, int k, int zc_per_sm, int copies_only) {
    memset(h, 0, (size_t)n * 4);
    CK(cudaEventRecord(e0, sh));
    CK(cudaStreamWaitEvent(sk, e0, 0));
    CK(cudaStreamWaitEvent(sd, e0, 0));
    CK(cudaStreamWaitEvent(sz, e0, 0));
    if (m < n) {
        unsigned g = (unsigned)(zc_per_sm * nsm);
        k_zc<<<g, 256, 0, sz>>>(h, m, n);
        CK(cudaGetLastError());
    }
    CK(cudaEventRecord(ez, sz));
    for (int c = 0; c < k && m > 0; c++) {
        unsigned first = (unsigned)((uint64_t)m * c / k), last = (unsigned)((uint64_t)m * (c + 1) / k), cnt = last - first;
        CK(cudaMemcpyAsync(d + first, h + first, (size_t)cnt * 4, cudaMemcpyHostToDevice, sh));
        CK(cudaEventRecord(eh[c], sh));
        if (copies_only) { /* the other direction at once, from other buffers */
            CK(cudaMemcpyAsync(h2 + first, d2 + first, (size_t)cnt * 4, cudaMemcpyDeviceToHost, sd));
            continue;
        }
        CK(cudaStreamWaitEvent(sk, eh[c], 0));
        k_chunk<<<(cnt + 255) / 256, 256, 0, sk>>>(d + first, first, cnt);
        CK(cudaGetLastError());
        CK(cudaEventRecord(ek[c], sk));
        CK(cudaStreamWaitEvent(sd, ek[c], 0));
        CK(cudaMemcpyAsync(h + first, d + first, (size_t)cnt * 4, cudaMemcpyDeviceToHost, sd));
    }
    CK(cudaEventRecord(eend, sd));
    CK(cudaStreamWaitEvent(sh, eend, 0));
    CK(cudaStreamWaitEvent(sh, ez, 0));
    CK(cudaEventRecord(e1, sh));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

/* every element of [lo, n) (the kernels' share) is 1 */
static int verify(unsigned lo, unsigned n) {
    for (unsigned i = lo; i < n; i++) if (fabsf(h[i] - 1.0f) > 1e-4f) return 0;
    return 1;
}

typedef struct { const char *label; double f; int k, per_sm, copies_only; } cs;

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 11;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    nsm = p.multiProcessorCount;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_zc, 256, 0));
    printf("device %s, %d SMs, zc occupancy %d blocks/SM\n", p.name, nsm, occ);
    size_t maxn = 1u << 25;
    CK(cudaHostAlloc((void **)&h, maxn * 4, cudaHostAllocMapped));
    CK(cudaMalloc((void **)&d, maxn * 4));
    CK(cudaHostAlloc((void **)&h2, maxn * 4, cudaHostAllocDefault));
    CK(cudaMalloc((void **)&d2, maxn * 4));
    CK(cudaMemset(d2, 0, maxn * 4));
    CK(cudaStreamCreateWithFlags(&sh, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sk, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sd, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sz, cudaStreamNonBlocking));
    for (int i = 0; i < MAXC; i++) { CK(cudaEventCreateWithFlags(&eh[i], cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&ek[i], cudaEventDisableTiming)); }
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    CK(cudaEventCreateWithFlags(&ez, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&eend, cudaEventDisableTiming));
    for (int lg = 22; lg <= 25; lg += 3) {
        unsigned n = 1u << lg;
        int kA = lg == 22 ? 8 : 16, kB = lg == 22 ? 16 : 32;
        cs cases[64]; int nc = 0;
        cases[nc++] = (cs){"copies both ways", 1.0, 1, 0, 1};
        cases[nc++] = (cs){"zc alone occ", 0.0, 0, occ, 0};
        cases[nc++] = (cs){"zc alone 2/SM", 0.0, 0, 2, 0};
        for (double f = 0.5; f < 0.95; f += 0.1) {
            cases[nc++] = (cs){"copies f + zc occupancy", f, 1, occ, 1};
            cases[nc++] = (cs){"copies f + zc 2/SM", f, 1, 2, 1};
        }
        cases[nc++] = (cs){"engine_streams", 1.0, kA, 0, 0};
        cases[nc++] = (cs){"engine_streams", 1.0, kB, 0, 0};
        double fs[] = {0.6, 0.7, 0.75, 0.8, 0.85, 0.9};
        int pss[] = {1, 2, 4};
        for (int a = 0; a < 6; a++) for (int b = 0; b < 3; b++) for (int kk = 0; kk < 2; kk++)
            cases[nc++] = (cs){"hybrid", fs[a], kk ? kB : kA, pss[b], 0};
        float *t = (float *)calloc((size_t)nc * reps, sizeof(float));
        int *ok = (int *)calloc((size_t)nc, sizeof(int));
        for (int c = 0; c < nc; c++) ok[c] = 1;
        for (int r = 0; r < reps + 2; r++)
            for (int c0 = 0; c0 < nc; c0++) {
                int c = (r & 1) ? nc - 1 - c0 : c0;
                unsigned m = (unsigned)((uint64_t)(cases[c].f * n) / 1024 * 1024);
                float ms = run(n, m, cases[c].k, cases[c].per_sm, cases[c].copies_only);
                if (r >= 2) t[(size_t)c * reps + r - 2] = ms;
                if (!verify(cases[c].copies_only ? m : 0, n)) ok[c] = 0;
            }
        float floor_ms = 0;
        for (int c = 0; c < nc; c++) {
            float *tc = t + (size_t)c * reps;
            qsort(tc, reps, 4, cmp_float);
            if (c == 0) floor_ms = tc[0];
            printf("2^%d %-24s f %.2f k %2d zc %d/SM: %.3f ms (min %.3f max %.3f)  %.1f GB/s each way  copies-both min/median %.3f %s\n", lg,
                   cases[c].label, cases[c].f, cases[c].k, cases[c].per_sm, tc[reps / 2], tc[0], tc[reps - 1],
                   (double)n * 4 / tc[reps / 2] / 1e6, floor_ms / tc[reps / 2], ok[c] ? "verified" : "WRONG");
        }
        free(t); free(ok);
    }
    return 0;
}
