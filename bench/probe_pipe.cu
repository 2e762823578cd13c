/* probe_pipe.cu — `make bench-copies`, its third part: what a kernel between a stream's
 * copies adds. The seeds' async_v1 pipeline at 2^25 over S = 32..256 streams (H2D, kernel,
 * D2H per stream, the legacy stream's events around it, the array memset before each rep as
 * the seeds do), four ways: the seeds' kernel; an empty kernel of one block; an empty kernel
 * of the seeds' grid; no kernel (H2D then D2H in stream order). Plain CUDA, nothing of
 * streamlab's code. Per case the median of REPS reps (least-most in brackets), cases
 * interleaved. On a lent H100 (2026-11-26, GPU-7e51e059, the steadiest of three runs):
 * x128 3.719 ms with the seeds' kernel, 3.706 with an empty one-block kernel, 3.330 with
 * none; x256 4.226, 4.269, 3.954. The sim, from the lent-h100 profile, gives the kernel's
 * presence almost nothing (x128 3.401 ms; with a kernel of no work 3.398).
 * usage: probe_pipe [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "probe_util.cuh"
#include "seed_kernel.cuh"
__global__ void empty(float *a, int off) { if (threadIdx.x == 0 && blockIdx.x == 0 && off < 0) a[0] = 1; }
static cudaStream_t st[256];
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 11;
    size_t n = (size_t)1 << 25;
    float *h, *d; CK(cudaHostAlloc((void **)&h, n * 4, 0)); CK(cudaMalloc((void **)&d, n * 4));
    memset(h, 0, n * 4);
    for (int i = 0; i < 256; i++) CK(cudaStreamCreate(&st[i]));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    const char *names[] = {"real kernel", "empty kernel (1 block)", "no kernel", "real kernel, full grid empty"};
    for (int S : {32, 64, 128, 256}) {
        std::vector<float> t[4];
        for (int r = -2; r < reps; r++)
            for (int w = 0; w < 4; w++) {
                memset(h, 0, n * 4);
                size_t c = n / S;
                CK(cudaEventRecord(a, 0));
                for (int i = 0; i < S; i++) {
                    size_t o = i * c;
                    CK(cudaMemcpyAsync(d + o, h + o, c * 4, cudaMemcpyHostToDevice, st[i]));
                    if (w == 0) kernel<<<c / BLOCK, BLOCK, 0, st[i]>>>(d, (int)o);
                    else if (w == 1) empty<<<1, 32, 0, st[i]>>>(d, (int)o);
                    else if (w == 3) empty<<<c / BLOCK, BLOCK, 0, st[i]>>>(d, (int)o);
                    CK(cudaMemcpyAsync(h + o, d + o, c * 4, cudaMemcpyDeviceToHost, st[i]));
                }
                CK(cudaEventRecord(b, 0)); CK(cudaEventSynchronize(b));
                float ms; CK(cudaEventElapsedTime(&ms, a, b));
                if (r >= 0) t[w].push_back(ms);
            }
        printf("2^25 v1 x%-3d", S);
        for (int w = 0; w < 4; w++) { std::sort(t[w].begin(), t[w].end()); printf("  %s %.3f (%.3f-%.3f)", names[w], t[w][t[w].size() / 2], t[w][0], t[w].back()); }
        printf("\n");
    }
    return 0;
}
