/* probe_deps.cu — issue 18: does a copy cost its engine more when a kernel in its stream waits
 * for it, or when it waits for a kernel, and does that depend on the host issuing while the
 * engines run? Plain CUDA, nothing of streamlab's code. 128 MiB (2^25 floats; PROBE_LOG2=22: 16
 * MiB) in S chunks, chunk i in blocking stream i, the legacy stream's events around each rep as the
 * seeds time it, and
 * an empty one-block kernel where a pattern has one (no work, so only the dependency counts):
 *   h2d        H2D_i
 *   h2d.k      H2D_i, then the kernel K_i in the same stream (depth-first)
 *   h2d|k      every H2D_i, then every K_i (breadth-first)
 *   h2d.own    H2D_i; K_i in a stream of its own (nothing waits)
 *   h2d.d2h    H2D_i, D2H_i (no kernel)
 *   h2d.k.d2h  H2D_i, K_i, D2H_i (the seeds' pipeline with an empty kernel)
 *   d2h        D2H_i
 *   k.d2h      K_i, then D2H_i in the same stream (the copy waits for a kernel)
 *   h2d/d2h    H2D_i in stream i, D2H_i in a stream of its own (both ways, nothing waits)
 *   seeds      H2D_i, the seeds' kernel, D2H_i, the array memset before each rep (the seeds' pipeline)
 *   seeds.kept the same without the memset (no H2D reads lines the CPU has just written)
 * each issued as the seeds issue it (the engines start at the first call) and gated (a 4 ms
 * spin on the legacy stream first, so every op is queued before any runs). Reps alternate the
 * cases forward and backward; per case the median of REPS. Prints ms and, against its base (h2d,
 * h2d.d2h or d2h), us per chunk.
 * On a lent H100 (GPU-bcd35c3f, 2026-11-27, two passes of 21 reps): a kernel waiting for its
 * H2D made the H2Ds 4.4-5.2 us a chunk dearer at 8 MiB, 2.1-2.7 at 2 MiB, 1.5-1.8 at 1 MiB and
 * 1.3-1.8 at 512 KiB, issued and gated alike; kernels in streams of their own 0.1-0.3 issued. A lent
 * H200 (GPU-9b8f4456) the same, 1.8-5.4 us at 2^25, and 1.0-1.4 at every chunk of 2^22 (2 MiB too).
 * usage: probe_deps [REPS] [S...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_seeds.cuh"

enum { MAXS = 256, NPAT = 11 };
static const char *PAT[NPAT] = {"h2d", "h2d.k", "h2d|k", "h2d.own", "h2d.d2h", "h2d.k.d2h", "d2h", "k.d2h", "h2d/d2h",
                                "seeds", "seeds.kept"};
/* each pattern's base: what it is held against */
static const int BASE[NPAT] = {0, 0, 0, 0, 4, 4, 6, 6, 4, 5, 5};
__global__ void empty_kernel(float *a, int off) {
    if (off < 0)
        a[0] = 1;
}

/* PROBE_WRAP_DEV=MIB, PROBE_WRAP_HOST=MIB (diagnostics): the chunks' device (or host) offsets
 * wrap at that many MiB, so the copies touch a smaller array on that side (timing only: the
 * chunks then overwrite one another). 0: none. In floats. */
static size_t wrap_dev, wrap_host;

static void issue(int pat, int S, size_t chunk, float *h, float *d, cudaStream_t *st, cudaStream_t *own) {
    for (int i = 0; i < S; i++) {
        size_t off = (size_t)i * chunk;
        size_t doff = wrap_dev ? off % wrap_dev : off, hoff = wrap_host ? off % wrap_host : off;
        if (pat <= 5 || pat >= 8)
            CK(cudaMemcpyAsync(d + doff, h + hoff, chunk * sizeof(float), cudaMemcpyHostToDevice, st[i]));
        if (pat == 1 || pat == 5 || pat == 7)
            empty_kernel<<<1, 32, 0, st[i]>>>(d, (int)doff);
        if (pat >= 9)
            kernel<<<(unsigned)(chunk / BLOCK), BLOCK, 0, st[i]>>>(d, (int)doff);
        if (pat == 3)
            empty_kernel<<<1, 32, 0, own[i]>>>(d, (int)doff);
        if (pat >= 4) /* the D2H reads back the chunk: h is the pinned array both ways, as the seeds' */
            CK(cudaMemcpyAsync(h + hoff, d + doff, chunk * sizeof(float), cudaMemcpyDeviceToHost,
                               pat == 8 ? own[i] : st[i]));
    }
    for (int i = 0; pat == 2 && i < S; i++) {
        size_t off = (size_t)i * chunk;
        empty_kernel<<<1, 32, 0, st[i]>>>(d, (int)(wrap_dev ? off % wrap_dev : off));
    }
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1 || reps > 200)
        reps = 15;
    int Ss[16], nS = 0;
    for (int k = 2; k < argc && nS < 16; k++) {
        int s = atoi(argv[k]);
        if (s >= 1 && s <= MAXS)
            Ss[nS++] = s;
    }
    if (!nS) {
        Ss[0] = 16, Ss[1] = 64, Ss[2] = 128, Ss[3] = 256;
        nS = 4;
    }
    int lg = getenv("PROBE_LOG2") ? atoi(getenv("PROBE_LOG2")) : 25;
    if (lg < 16 || lg > 28)
        lg = 25;
    size_t n = (size_t)1 << lg, bytes = n * sizeof(float);
    wrap_dev = getenv("PROBE_WRAP_DEV") ? strtoull(getenv("PROBE_WRAP_DEV"), NULL, 10) << 18 : 0; /* MiB in floats */
    wrap_host = getenv("PROBE_WRAP_HOST") ? strtoull(getenv("PROBE_WRAP_HOST"), NULL, 10) << 18 : 0;
    float *h, *d;
    CK(cudaMallocHost((void **)&h, bytes));
    CK(cudaMalloc((void **)&d, bytes));
    memset(h, 0, bytes);
    static cudaStream_t st[MAXS], own[MAXS];
    for (int i = 0; i < MAXS; i++) {
        CK(cudaStreamCreate(&st[i]));
        CK(cudaStreamCreate(&own[i]));
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int clk = 0;
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("probe_deps: %s, 2^%d floats, medians of %d reps; device offsets wrap at %zu MiB, host at %zu (0: none)\n",
           p.name, lg, reps, wrap_dev >> 18, wrap_host >> 18);
    int nc = nS * NPAT * 2;
    float *t = (float *)calloc((size_t)nc * reps, sizeof(float));
    if (!t)
        return 1;
    for (int r = -2; r < reps; r++)
        for (int k = 0; k < nc; k++) {
            int c = (r & 1) ? nc - 1 - k : k;
            int S = Ss[c / (NPAT * 2)], pat = (c / 2) % NPAT, gated = c % 2;
            if (pat == 9)
                memset(h, 0, bytes);
            CK(cudaDeviceSynchronize());
            if (gated)
                spin<<<1, 1>>>((long long)clk * 4); /* 4 ms on the legacy stream: the blocking streams wait */
            CK(cudaEventRecord(e0, 0));
            issue(pat, S, n / (size_t)S, h, d, st, own);
            CK(cudaGetLastError());
            CK(cudaEventRecord(e1, 0));
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 0)
                t[(size_t)c * reps + r] = ms;
        }
    for (int si = 0; si < nS; si++) {
        int S = Ss[si];
        float med[NPAT][2];
        for (int pat = 0; pat < NPAT; pat++)
            for (int g = 0; g < 2; g++) {
                float *v = t + (size_t)((si * NPAT + pat) * 2 + g) * reps;
                qsort(v, (size_t)reps, sizeof *v, cmp_float);
                med[pat][g] = v[reps / 2];
            }
        for (int pat = 0; pat < NPAT; pat++) {
            int base = BASE[pat];
            printf("S %3d %-10s issued %.4f ms gated %.4f ms  over %-7s issued %+6.2f us/chunk gated %+6.2f us/chunk\n", S,
                   PAT[pat], med[pat][0], med[pat][1], PAT[base], (med[pat][0] - med[base][0]) * 1e3 / S,
                   (med[pat][1] - med[base][1]) * 1e3 / S);
        }
    }
    free(t);
    return 0;
}
