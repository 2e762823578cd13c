/* probe_host.cu — `make bench-host`: what issuing one chunk of the seeds' depth-first step
 * (cudaMemcpyAsync H2D, the seeds' kernel, cudaMemcpyAsync D2H, each into the chunk's
 * stream) costs the host. Plain CUDA, nothing of streamlab's code.
 * Part 1, case after case: by array size (2^22, 2^25), streams (32, 128, 256), whether the
 * device is idle or busy (a spinning kernel queued first, so every op queues behind it),
 * and what the host did just before the rep: memset the array (as the seeds do), nothing,
 * or memset another 128 MiB. Per case the median per-chunk issue time of REPS reps
 * (least-most in brackets) and the median rep's total.
 * Part 2, blocks of REPS consecutive reps per condition as the reference runs a case, the
 * blocks alternated four times (so that the host's drift falls on all alike): the array
 * memset before and checked after each rep as bench/ref_overlap does, at 2^22 and 2^25;
 * 2^22 with 128 MiB of another buffer read first; 2^25 memset only; both with neither.
 * On lent H100s (2026-11-26): part 1 on GPU-02ac6d78 gave 6.3-7.2 or 8.4-10.4 us a chunk,
 * the level flipping from case to case and between two passes over one case, whatever the
 * size, memset or queue; part 2 on GPU-0db07a0e: 6.29 us at 2^22 x256, 6.81 at 2^25, and
 * 6.81 at 2^22 after 128 MiB read through the caches (the reference there: 6.4-6.6 and
 * 7.3-7.4): a rep's array streamed through the host's caches makes its calls cost more.
 * docs/METHOD.md has the tables.
 * usage: probe_host [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <algorithm>
#include <vector>
#include "probe_seeds.cuh"
static cudaStream_t st[256];
static volatile float sink;
/* the seeds' depth-first step over n elements in S chunks, chunk i into stream i */
static void issue_step(float *h, float *d, size_t n, int S) {
    size_t c = n / S;
    for (int i = 0; i < S; i++) {
        size_t o = i * c;
        CK(cudaMemcpyAsync(d + o, h + o, c * 4, cudaMemcpyHostToDevice, st[i]));
        kernel<<<c / BLOCK, BLOCK, 0, st[i]>>>(d, (int)o);
        CK(cudaMemcpyAsync(h + o, d + o, c * 4, cudaMemcpyDeviceToHost, st[i]));
    }
}
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 9;
    size_t big = (size_t)1 << 25;
    float *h, *d, *other; CK(cudaMallocHost((void **)&h, big * 4)); CK(cudaMalloc((void **)&d, big * 4));
    other = (float *)malloc(big * 4);
    if (!other) { fprintf(stderr, "probe_host: out of memory\n"); return 1; }
    memset(other, 1, big * 4);
    memset(h, 0, big * 4);
    for (int i = 0; i < 256; i++) CK(cudaStreamCreate(&st[i]));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    const char *pre_names[] = {"memset array", "nothing", "memset other 128MiB"};
    for (int lg : {22, 25})
    for (int S : {32, 128, 256})
    for (int busy = 0; busy < 2; busy++) {
        printf("part 1 2^%d x%-3d %s", lg, S, busy ? "busy" : "idle");
        for (int pre = 0; pre < 3; pre++) {
            std::vector<double> per, tot;
            size_t n = (size_t)1 << lg;
            for (int r = -2; r < reps; r++) {
                if (pre == 0) memset(h, 0, n * 4);
                else if (pre == 2) memset(other, r & 0xff, big * 4);
                CK(cudaDeviceSynchronize());
                CK(cudaEventRecord(a, 0));
                if (busy) spin<<<1, 1>>>(3000000); /* 3M SM cycles: about 1.7 ms on an H100 */
                double t0 = probe_now_us();
                issue_step(h, d, n, S);
                double t1 = probe_now_us();
                CK(cudaEventRecord(b, 0)); CK(cudaEventSynchronize(b));
                float ms; CK(cudaEventElapsedTime(&ms, a, b));
                if (r >= 0) { per.push_back((t1 - t0) / S); tot.push_back(ms); }
            }
            std::sort(per.begin(), per.end()); std::sort(tot.begin(), tot.end());
            printf("  | %s: %.2f us/chunk (%.2f-%.2f) %.3f ms", pre_names[pre], per[per.size() / 2], per[0], per.back(), tot[tot.size() / 2]);
        }
        printf("\n");
    }
    /* part 2: blocks of consecutive reps per condition, alternated */
    float *hs;
    size_t small = (size_t)1 << 22;
    CK(cudaMallocHost((void **)&hs, small * 4));
    memset(hs, 0, small * 4);
    const char *cond[] = {"2^22 memset+check", "2^25 memset+check", "2^22 read 128MiB, memset+check", "2^25 memset only",
                          "2^22 neither", "2^25 neither"};
    enum { CONDS = 6 };
    for (int S : {64, 256}) {
        std::vector<double> per[CONDS], tot[CONDS];
        for (int round = 0; round < 4; round++)
            for (int c = 0; c < CONDS; c++)
                for (int r = -3; r < reps; r++) {
                    bool is25 = c == 1 || c == 3 || c == 5, ms = c <= 3, check = c <= 2;
                    size_t n = is25 ? big : small;
                    float *hh = is25 ? h : hs;
                    if (c == 2) { /* another 128 MiB through the caches first */
                        double acc = 0;
                        for (size_t i = 0; i < big; i += 4) acc += other[i];
                        sink = (float)acc;
                    }
                    if (ms) memset(hh, 0, n * 4);
                    double t0 = probe_now_us();
                    CK(cudaEventRecord(a, 0));
                    issue_step(hh, d, n, S);
                    CK(cudaEventRecord(b, 0));
                    double t1 = probe_now_us();
                    CK(cudaEventSynchronize(b));
                    float ms_; CK(cudaEventElapsedTime(&ms_, a, b));
                    if (check) { /* as the reference checks its output */
                        size_t bad = 0;
                        for (size_t i = 0; i < n; i++) bad += !(fabsf(hh[i] - 1.0f) <= 1e-4f);
                        sink = (float)bad;
                    }
                    if (r >= 0) { per[c].push_back((t1 - t0) / S); tot[c].push_back(ms_); }
                }
        for (int c = 0; c < CONDS; c++) {
            std::sort(per[c].begin(), per[c].end()); std::sort(tot[c].begin(), tot[c].end());
            size_t m = per[c].size() / 2;
            printf("part 2 x%-3d %-31s %.2f us/chunk (quartiles %.2f-%.2f) %.3f ms\n", S, cond[c], per[c][m], per[c][m / 2],
                   per[c][m + m / 2], tot[c][m]);
        }
    }
    return 0;
}
