/* probe_host.cu — `make bench-host`: what issuing one chunk of the seeds' depth-first step
 * (cudaMemcpyAsync H2D, the seeds' kernel, cudaMemcpyAsync D2H, each into the chunk's
 * stream) costs the host, by array size (2^22, 2^25), streams (32, 128, 256), whether
 * the device is idle or busy (a spinning kernel queued first, so every op queues behind
 * it), and what the host did just before the rep: memset the array (as the seeds do),
 * nothing, or memset another 128 MiB (the caches taken). Per case the median per-chunk issue
 * time of REPS reps (least-most in brackets) and the median rep's total. Plain CUDA,
 * nothing of streamlab's code. On a lent H100 (2026-11-26, GPU-02ac6d78, the whole probe
 * twice, pinned to one CPU) a chunk cost the host either 6.3-7.2 us or 8.4-10.4 us, the
 * two levels flipping from one case to the next and between the two passes over the same
 * case (2^22 x128 idle: 6.76 then 10.23), whatever the size, the streams, the memset or
 * the device's queue: the host's rate is its own, two-level. docs/METHOD.md has the table.
 * usage: probe_host [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>
#include "probe_util.cuh"
#include "seed_kernel.cuh"
static double now_us() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
__global__ void spin(long long ns) { long long t0 = clock64(); while (clock64() - t0 < ns) {} }
static cudaStream_t st[256];
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
        printf("2^%d x%-3d %s", lg, S, busy ? "busy" : "idle");
        for (int pre = 0; pre < 3; pre++) {
            std::vector<double> per, tot;
            size_t n = (size_t)1 << lg, c = n / S;
            for (int r = -2; r < reps; r++) {
                if (pre == 0) memset(h, 0, n * 4);
                else if (pre == 2) memset(other, r & 0xff, big * 4);
                CK(cudaDeviceSynchronize());
                CK(cudaEventRecord(a, 0));
                if (busy) spin<<<1, 1>>>(3000000); /* 3M SM cycles: about 1.7 ms on an H100 */
                double t0 = now_us();
                for (int i = 0; i < S; i++) {
                    size_t o = i * c;
                    CK(cudaMemcpyAsync(d + o, h + o, c * 4, cudaMemcpyHostToDevice, st[i]));
                    kernel<<<c / BLOCK, BLOCK, 0, st[i]>>>(d, (int)o);
                    CK(cudaMemcpyAsync(h + o, d + o, c * 4, cudaMemcpyDeviceToHost, st[i]));
                }
                double t1 = now_us();
                CK(cudaEventRecord(b, 0)); CK(cudaEventSynchronize(b));
                float ms; CK(cudaEventElapsedTime(&ms, a, b));
                if (r >= 0) { per.push_back((t1 - t0) / S); tot.push_back(ms); }
            }
            std::sort(per.begin(), per.end()); std::sort(tot.begin(), tot.end());
            printf("  | %s: %.2f us/chunk (%.2f-%.2f) %.3f ms", pre_names[pre], per[per.size() / 2], per[0], per.back(), tot[tot.size() / 2]);
        }
        printf("\n");
    }
    return 0;
}
