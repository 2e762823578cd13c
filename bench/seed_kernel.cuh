/* seed_kernel.cuh — the seeds' kernel as bench/'s plain CUDA programs run it (ref_overlap.cu,
 * probe_modes.cu): block 256, one thread per element of the chunk at `offset`, each element
 * a[i] + sqrt(sin(i)^2 + cos(i)^2). Shared between those programs only: nothing of
 * streamlab's code is in them. */
#ifndef STREAMLAB_BENCH_SEED_KERNEL_CUH
#define STREAMLAB_BENCH_SEED_KERNEL_CUH

#define BLOCK 256

/* element i of the seeds' step */
__device__ __forceinline__ void seed_step(float *a, int i) {
    float x = (float)i;
    float s = sinf(x);
    float c = cosf(x);
    a[i] = a[i] + sqrtf(s * s + c * c);
}

__global__ void kernel(float *a, int offset) {
    seed_step(a, offset + threadIdx.x + blockIdx.x * blockDim.x);
}

#endif
