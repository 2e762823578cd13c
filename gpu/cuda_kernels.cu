/* cuda_kernels.cu — the device kernels (blog, fill, compute) in the two launch modes
 * of the seeds: one thread per element over a chunk, or a grid-stride loop sized by
 * the occupancy API (seed 000's max-occupancy launch). The per-element formula is
 * kernels.h's, shared with the CPU reference, so verification checks the same thing.
 * Only launching lives here; streams, timing and memory belong to cuda_backend.cu. */
#include "cuda_internal.h"
#include "kernels.h"

/* One thread per element. Idx is uint32_t where every global index fits in 32 bits
 * (the blog's `int i`: cheaper index arithmetic), uint64_t otherwise. */
template <int K, typename Idx>
__global__ void kernel_chunk(float *__restrict__ a, uint64_t first, uint64_t count, int iters) {
    uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j < count) {
        Idx i = (Idx)(first + j);
        a[j] = kernel_apply(K, iters, (uint64_t)i, a[j]);
    }
}

/* Grid-stride loop: a fixed grid walks the whole chunk. */
template <int K, typename Idx>
__global__ void kernel_stride(float *__restrict__ a, uint64_t first, uint64_t count, int iters) {
    uint64_t step = (uint64_t)blockDim.x * gridDim.x;
    for (uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; j < count; j += step) {
        Idx i = (Idx)(first + j);
        a[j] = kernel_apply(K, iters, (uint64_t)i, a[j]);
    }
}

typedef void (*kernel_fn)(float *, uint64_t, uint64_t, int);

static kernel_fn kernel_pick(int kernel, bool stride, bool wide) {
#define PICK(K)                                                                           \
    case K:                                                                               \
        if (stride)                                                                       \
            return wide ? kernel_stride<K, uint64_t> : kernel_stride<K, uint32_t>;        \
        return wide ? kernel_chunk<K, uint64_t> : kernel_chunk<K, uint32_t>;
    switch (kernel) {
        PICK(KERNEL_BLOG)
        PICK(KERNEL_FILL)
        PICK(KERNEL_COMPUTE)
    default: return NULL;
    }
#undef PICK
}

cudaError_t cuda_kernel_occupancy(int kernel, int block_size, int *blocks_per_sm) {
    kernel_fn fn = kernel_pick(kernel, true, true);
    if (!fn)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, fn, block_size, 0);
}

cudaError_t cuda_kernel_launch(int kernel, int iters, launch_t launch, uint64_t grid, int block_size,
                               float *chunk, uint64_t first, uint64_t count, cudaStream_t stream) {
    if (count == 0)
        return cudaSuccess;
    bool stride = launch == LAUNCH_MAX_OCCUPANCY;
    bool wide = first + count - 1 > 0xffffffffull;
    kernel_fn fn = kernel_pick(kernel, stride, wide);
    if (!fn || block_size <= 0)
        return cudaErrorInvalidValue;
    uint64_t need = (count + (uint64_t)block_size - 1) / (uint64_t)block_size;
    /* max_occupancy: the occupancy grid, but no more blocks than have work */
    uint64_t blocks = stride && grid < need ? grid : need;
    if (blocks < 1)
        blocks = 1;
    if (blocks > 0x7fffffffull)
        return cudaErrorInvalidConfiguration;
    /* cudaLaunchKernel returns the launch's own error: no cudaGetLastError call after
     * every launch (the seeds check once per pipeline; the issue loop is timed) */
    void *args[] = {&chunk, &first, &count, &iters};
    return cudaLaunchKernel((const void *)fn, dim3((unsigned)blocks), dim3((unsigned)block_size), args, 0, stream);
}

/* The zero-copy calibration: a light read and write of every element, so that what is
 * timed is PCIe carrying the loads and stores both ways, not arithmetic. */
__global__ void zero_copy_touch(float *__restrict__ a, uint64_t n) {
    uint64_t step = (uint64_t)blockDim.x * gridDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        a[i] = a[i] * 0.5f + 1.0f;
}

cudaError_t cuda_zero_copy_touch(float *mapped, uint64_t n, int block_size, cudaStream_t stream) {
    int dev = 0, sms = 0, bps = 0;
    cudaError_t e;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, zero_copy_touch, block_size, 0)) != cudaSuccess)
        return e;
    if (sms < 1 || bps < 1)
        return cudaErrorInvalidConfiguration;
    void *args[] = {&mapped, &n};
    return cudaLaunchKernel((const void *)zero_copy_touch, dim3((unsigned)(sms * bps)), dim3((unsigned)block_size),
                            args, 0, stream);
}
