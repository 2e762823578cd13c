/* kernels.h — the per-element work of each kernel, written once for the GPU (CUDA
 * kernels in gpu/cuda_*.cu), the CPU baseline (gpu/cpu.c) and verification.
 * Compiled as C by cc and as CUDA C++ by nvcc: the same formula on both sides, so the
 * CPU reference checks what the GPU computed (within float tolerance for sin/cos).
 *
 * Element i's input is kernel_input(kernel, i); the output is kernel_apply(...). */
#ifndef STREAMLAB_KERNELS_H
#define STREAMLAB_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core.h"

#ifdef __CUDACC__
#define SL_HD __host__ __device__ __forceinline__
#else
#define SL_HD static inline
#endif

/* The host input is one byte repeated, so that it is written with memset before every
 * rep, as the seeds do: 0x00 (0.0f) for blog and compute (the blog's memset); 0xff for
 * fill, which overwrites: a NaN, which no output equals and kernel_output_ok fails. */
SL_HD unsigned char kernel_input_byte(int kernel) {
    return kernel == KERNEL_FILL ? 0xff : 0x00;
}

SL_HD float kernel_input(int kernel, uint64_t i) {
    (void)i;
    uint32_t bits = 0x01010101u * kernel_input_byte(kernel);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* blog: the kernel of "How to Overlap Data Transfers in CUDA C/C++" and the seeds:
 *   x = (float)i; a[i] = a[i] + sqrt(sin(x)^2 + cos(x)^2)
 * fill: a[i] = (float)i
 * compute: iters rounds of v = 0.5 sin(v) + 0.5 cos(v) + a, a contraction, so GPU and
 *   CPU stay within tolerance however many rounds run. */
SL_HD float kernel_apply(int kernel, int iters, uint64_t i, float a) {
    if (kernel == KERNEL_FILL)
        return (float)i;
    if (kernel == KERNEL_BLOG) {
        float x = (float)i;
        float s = sinf(x), c = cosf(x);
        return a + sqrtf(s * s + c * c);
    }
    float v = a + (float)(i & 1023u) * (1.0f / 1024.0f);
    for (int r = 0; r < iters; r++)
        v = 0.5f * sinf(v) + 0.5f * cosf(v) + a;
    return v;
}

/* Does got match the reference for element i? fill is exact; blog and compute allow
 * float differences between the GPU's and the C library's sin/cos. */
SL_HD int kernel_output_ok(int kernel, float got, float want) {
    if (kernel == KERNEL_FILL)
        return got == want;
    float d = got > want ? got - want : want - got;
    float scale = want > 1.0f ? want : (want < -1.0f ? -want : 1.0f);
    return d <= 1e-4f * scale; /* NaN fails: the comparison is false */
}

#endif
