/* probe_pipe.cu — `make bench-copies`, its third part: what a kernel beside a stream's copies
 * adds. The seeds' async_v1 pipeline at 2^25 over S = 32..256 streams (H2D, kernel, D2H per
 * stream, the legacy stream's events around it, the array memset before each rep as the seeds
 * do), five ways: the seeds' kernel; an empty one-block kernel in its place; no kernel (H2D
 * then D2H); the empty kernel after the D2H, where nothing waits for it; the empty kernel in a
 * stream of its own. Plain CUDA, nothing of streamlab's code. Per case the median of REPS reps
 * (least-most in brackets), cases interleaved. On a lent H100 (2026-11-26, GPU-35b032b0, the
 * median of three runs) at x128: 3.736, 3.701, 3.277, 3.419 and 3.308 ms. The sim, from the
 * lent-h100 profile, charges the kernel almost nothing (3.401 ms; with a kernel of no work 3.398).
 * usage: probe_pipe [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "probe_util.cuh"
#include "seed_kernel.cuh"
__global__ void empty(float *a, int off) { if (threadIdx.x == 0 && blockIdx.x == 0 && off < 0) a[0] = 1; }
static cudaStream_t st[256], own[256];
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 11;
    size_t n = (size_t)1 << 25;
    float *h, *d; CK(cudaHostAlloc((void **)&h, n * 4, 0)); CK(cudaMalloc((void **)&d, n * 4));
    memset(h, 0, n * 4);
    for (int i = 0; i < 256; i++) {
        CK(cudaStreamCreate(&st[i]));
        CK(cudaStreamCreate(&own[i]));
    }
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    const char *names[] = {"seeds' kernel", "empty kernel", "no kernel", "empty kernel after the D2H", "empty kernel, own stream"};
    enum { WAYS = 5 };
    for (int S : {32, 64, 128, 256}) {
        std::vector<float> t[WAYS];
        for (int r = -2; r < reps; r++)
            for (int w = 0; w < WAYS; w++) {
                memset(h, 0, n * 4);
                size_t c = n / S;
                CK(cudaEventRecord(a, 0));
                for (int i = 0; i < S; i++) {
                    size_t o = i * c;
                    CK(cudaMemcpyAsync(d + o, h + o, c * 4, cudaMemcpyHostToDevice, st[i]));
                    if (w == 0) kernel<<<c / BLOCK, BLOCK, 0, st[i]>>>(d, (int)o);
                    else if (w == 1) empty<<<1, 32, 0, st[i]>>>(d, (int)o);
                    else if (w == 4) empty<<<1, 32, 0, own[i]>>>(d, (int)o);
                    CK(cudaMemcpyAsync(h + o, d + o, c * 4, cudaMemcpyDeviceToHost, st[i]));
                    if (w == 3) empty<<<1, 32, 0, st[i]>>>(d, (int)o);
                }
                CK(cudaEventRecord(b, 0)); CK(cudaEventSynchronize(b));
                float ms; CK(cudaEventElapsedTime(&ms, a, b));
                if (r >= 0) t[w].push_back(ms);
            }
        printf("2^25 v1 x%-3d", S);
        for (int w = 0; w < WAYS; w++) { std::sort(t[w].begin(), t[w].end()); printf("  %s %.3f (%.3f-%.3f)", names[w], t[w][t[w].size() / 2], t[w][0], t[w].back()); }
        printf("\n");
    }
    return 0;
}
