/* probe_issue.cu — `make bench-host`, its second part: the seeds' depth-first step over 256
 * streams at 2^22 and 2^25, blocks of REPS reps of one size (the array memset before each, as
 * the seeds do), in sixteen set-ups: blocking streams or not, the array read after each rep or
 * not, events on the legacy stream around the issue or not. Per set-up and size the median
 * host time to issue the step (to its last call, and with the closing event) and the
 * median total where events were recorded. On a lent H100 (GPU-1bad40cf, 2026-11-26, two
 * passes) 2^25 cost 1.07-1.51 times 2^22 in every set-up, where reps alternated one by one
 * cost the same (the calibration's first try, GPU-60ad1d4f): a rep pays for the host caches
 * the rep before it left. gpu/cuda_calibrate.cu measures issue_scale_large so.
 * Plain CUDA, nothing of streamlab's code.
 * usage: probe_issue [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>
#include "probe_util.cuh"
#include "seed_kernel.cuh"
static cudaStream_t sb[256], snb[256];
static volatile float sink; /* the read after a rep is not optimised away */
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15, S = 256;
    size_t big = (size_t)1 << 25;
    float *h, *d; CK(cudaHostAlloc((void **)&h, big * 4, 0)); CK(cudaMalloc((void **)&d, big * 4));
    for (int i = 0; i < S; i++) { CK(cudaStreamCreate(&sb[i])); CK(cudaStreamCreateWithFlags(&snb[i], cudaStreamNonBlocking)); }
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    printf("%-6s %-8s %-7s %-6s | issue to last call, to stop; total ms\n", "size", "streams", "verify", "events");
    for (int pass = 0; pass < 2; pass++)
    for (int blocking = 1; blocking >= 0; blocking--)
    for (int verify = 1; verify >= 0; verify--)
    for (int events = 1; events >= 0; events--)
    for (int lg = 22; lg <= 25; lg += 3) {
        size_t n = (size_t)1 << lg, c = n / S;
        cudaStream_t *st = blocking ? sb : snb;
        std::vector<double> a, b, tot;
        for (int r = -3; r < reps; r++) {
            memset(h, 0, n * 4);
            double t0 = probe_now_us();
            if (events) CK(cudaEventRecord(e0, 0));
            for (int i = 0; i < S; i++) {
                size_t o = i * c;
                CK(cudaMemcpyAsync(d + o, h + o, c * 4, cudaMemcpyHostToDevice, st[i]));
                kernel<<<c / BLOCK, BLOCK, 0, st[i]>>>(d, (int)o);
                CK(cudaMemcpyAsync(h + o, d + o, c * 4, cudaMemcpyDeviceToHost, st[i]));
            }
            double t1 = probe_now_us();
            if (events) CK(cudaEventRecord(e1, 0));
            double t2 = probe_now_us();
            CK(cudaDeviceSynchronize());
            float ms = 0;
            if (events) CK(cudaEventElapsedTime(&ms, e0, e1));
            if (verify) { float s = 0; for (size_t i = 0; i < n; i++) s += h[i]; sink = s; }
            if (r >= 0) { a.push_back(t1 - t0); b.push_back(t2 - t0); tot.push_back(ms); }
        }
        std::sort(a.begin(), a.end()); std::sort(b.begin(), b.end()); std::sort(tot.begin(), tot.end());
        printf("2^%d   %-8s %-7s %-6s | %7.1f %7.1f %7.3f\n", lg, blocking ? "blocking" : "nonblock", verify ? "read" : "-", events ? "legacy" : "-",
               a[a.size() / 2], b[b.size() / 2], tot[tot.size() / 2]);
    }
    return 0;
}
