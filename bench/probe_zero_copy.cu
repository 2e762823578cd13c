/* probe_zero_copy.cu — can a kernel that reads and writes pinned host memory directly
 * (zero-copy, mapped memory) run closer to the PCIe floor than a chunked copy-engine
 * pipeline? Plain CUDA, nothing of streamlab's code, like ref_overlap.cu.
 *
 * In one process: DMA H2D alone, D2H alone, both at once (the floor's basis), then the
 * blog kernel (a[i] += sqrt(sin^2 + cos^2)) in place on a mapped pinned array in several
 * shapes (scalar grid-stride, float4, float4 with U loads in flight per thread, grids of
 * k blocks per SM), the array memset before each rep as the seeds do, every rep checked.
 * Prints one line per case: median/min/max ms of REPS, and floor/median.
 *
 * usage: probe_zero_copy [REPS] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_util.cuh"

__device__ __forceinline__ float blog(unsigned i, float a) {
    float x = (float)i;
    float s = sinf(x), c = cosf(x);
    return a + sqrtf(s * s + c * c);
}

__global__ void zc_scalar(float *a, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        a[i] = blog(i, a[i]);
}

/* U float4 loads issued before any is used: U x 16 bytes in flight per thread */
template <int U>
__global__ void zc_vec(float *a, unsigned n) {
    float4 *v = (float4 *)a;
    unsigned nv = n / 4;
    unsigned step = blockDim.x * gridDim.x;
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    for (; j + (U - 1) * step < nv; j += U * step) {
        float4 r[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            r[u] = v[j + u * step];
#pragma unroll
        for (int u = 0; u < U; u++) {
            unsigned i = 4 * (j + u * step);
            r[u].x = blog(i, r[u].x);
            r[u].y = blog(i + 1, r[u].y);
            r[u].z = blog(i + 2, r[u].z);
            r[u].w = blog(i + 3, r[u].w);
            v[j + u * step] = r[u];
        }
    }
    for (; j < nv; j += step) {
        float4 r = v[j];
        unsigned i = 4 * j;
        r.x = blog(i, r.x);
        r.y = blog(i + 1, r.y);
        r.z = blog(i + 2, r.z);
        r.w = blog(i + 3, r.w);
        v[j] = r;
    }
    for (unsigned i = 4 * nv + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        a[i] = blog(i, a[i]);
}

static void summary(float *t, int n, float *med, float *mn, float *mx) {
    qsort(t, n, sizeof *t, cmp_float);
    *med = t[n / 2];
    *mn = t[0];
    *mx = t[n - 1];
}

static int check(const float *a, unsigned n) {
    for (unsigned i = 0; i < n; i++)
        if (fabsf(a[i] - 1.0f) > 1e-4f)
            return 0;
    return 1;
}

typedef void (*kfn)(float *, unsigned);

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device %s, %d SMs, canMapHostMemory %d, unifiedAddressing %d, pageableMemoryAccess %d\n", p.name,
           p.multiProcessorCount, p.canMapHostMemory, p.unifiedAddressing, p.pageableMemoryAccess);
    const size_t maxn = 1u << 25, bytes_max = maxn * sizeof(float);
    float *h, *h2, *d, *d2;
    CK(cudaHostAlloc((void **)&h, bytes_max, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&h2, bytes_max, cudaHostAllocMapped));
    CK(cudaMalloc((void **)&d, bytes_max));
    CK(cudaMalloc((void **)&d2, bytes_max));
    cudaStream_t s1, s2;
    CK(cudaStreamCreate(&s1));
    CK(cudaStreamCreate(&s2));
    cudaEvent_t e0, e1, e2, e3;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
    CK(cudaEventCreate(&e3));
    float *t = (float *)malloc(sizeof(float) * (size_t)reps);
    float med, mn, mx;
    memset(h, 0, bytes_max);
    memset(h2, 0, bytes_max);

    for (int lg = 22; lg <= 25; lg += 3) {
        size_t n = (size_t)1 << lg, bytes = n * sizeof(float);
        /* DMA: H2D alone, D2H alone, both at once (peak and median over reps) */
        float h2d[64], d2h[64], bi[64];
        for (int r = 0; r < reps + 2; r++) {
            CK(cudaEventRecord(e0, s1));
            CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s1));
            CK(cudaEventRecord(e1, s1));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventRecord(e2, s1));
            CK(cudaMemcpyAsync(h2, d2, bytes, cudaMemcpyDeviceToHost, s1));
            CK(cudaEventRecord(e3, s1));
            CK(cudaEventSynchronize(e3));
            float a1, a2;
            CK(cudaEventElapsedTime(&a1, e0, e1));
            CK(cudaEventElapsedTime(&a2, e2, e3));
            /* both directions: start together, time to the later end */
            CK(cudaEventRecord(e0, s1));
            CK(cudaStreamWaitEvent(s2, e0, 0));
            CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s1));
            CK(cudaMemcpyAsync(h2, d2, bytes, cudaMemcpyDeviceToHost, s2));
            CK(cudaEventRecord(e2, s2));
            CK(cudaStreamWaitEvent(s1, e2, 0));
            CK(cudaEventRecord(e1, s1));
            CK(cudaEventSynchronize(e1));
            float a3;
            CK(cudaEventElapsedTime(&a3, e0, e1));
            if (r >= 2 && r - 2 < 64) {
                h2d[r - 2] = (float)(bytes / a1 / 1e6);
                d2h[r - 2] = (float)(bytes / a2 / 1e6);
                bi[r - 2] = (float)(bytes / a3 / 1e6);
            }
        }
        int m = reps < 64 ? reps : 64;
        float bmed, bmin, bmax, hmed, hmin, hmax, dmed, dmin, dmax;
        summary(bi, m, &bmed, &bmin, &bmax);
        summary(h2d, m, &hmed, &hmin, &hmax);
        summary(d2h, m, &dmed, &dmin, &dmax);
        double floor_ms = bytes / (double)bmax / 1e6;
        printf("2^%d DMA GB/s: h2d %.1f (peak %.1f)  d2h %.1f (peak %.1f)  both %.1f each (peak %.1f, min %.1f)  "
               "floor %.3f ms\n",
               lg, hmed, hmax, dmed, dmax, bmed, bmax, bmin, floor_ms);

        struct {
            const char *name;
            kfn fn;
            int block, per_sm; /* per_sm 0: one thread per element (scalar) */
        } cases[] = {
            {"scalar  b256 grid=elements", zc_scalar, 256, 0},
            {"scalar  b256 occ x1", zc_scalar, 256, -1},
            {"vec4 U1 b256 occ x1", zc_vec<1>, 256, -1},
            {"vec4 U2 b256 occ x1", zc_vec<2>, 256, -1},
            {"vec4 U4 b256 occ x1", zc_vec<4>, 256, -1},
            {"vec4 U4 b256 4/SM", zc_vec<4>, 256, 4},
            {"vec4 U8 b256 occ x1", zc_vec<8>, 256, -1},
            {"vec4 U2 b512 occ x1", zc_vec<2>, 512, -1},
            {"vec4 U4 b1024 occ x1", zc_vec<4>, 1024, -1},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            int occ;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, cases[c].fn, cases[c].block, 0));
            unsigned grid = cases[c].per_sm == 0    ? (unsigned)((n + cases[c].block - 1) / cases[c].block)
                            : cases[c].per_sm < 0 ? (unsigned)(occ * p.multiProcessorCount)
                                                  : (unsigned)(cases[c].per_sm * p.multiProcessorCount);
            int ok = 1;
            for (int r = 0; r < reps + 2; r++) {
                memset(h, 0, bytes);
                CK(cudaEventRecord(e0, s1));
                cases[c].fn<<<grid, cases[c].block, 0, s1>>>(h, (unsigned)n);
                CK(cudaGetLastError());
                CK(cudaEventRecord(e1, s1));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 2)
                    t[r - 2] = ms;
                ok &= check(h, (unsigned)n);
            }
            summary(t, reps, &med, &mn, &mx);
            printf("2^%d zero-copy %-28s grid %6u: %.3f ms (min %.3f max %.3f)  %.1f GB/s each way  eff %.3f  %s\n",
                   lg, cases[c].name, grid, med, mn, mx, bytes / (double)med / 1e6, floor_ms / med,
                   ok ? "verified" : "WRONG");
        }
    }
    return 0;
}
