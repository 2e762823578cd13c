/* probe_util.cuh — what the plain-CUDA programs in bench/ share besides the seeds' kernel
 * (seed_kernel.cuh): a checked CUDA call and floats compared for qsort.
 * CK(call): on failure, file, line, the call and CUDA's message on stderr, then exit(1).
 * ref_overlap.cu answers an error line and goes on serving instead: it defines its own
 * CK before including this file, and this one then stands aside. */
#ifndef STREAMLAB_PROBE_UTIL_CUH
#define STREAMLAB_PROBE_UTIL_CUH

#include <stdio.h>
#include <stdlib.h>

#ifndef CK
#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)
#endif

static inline int cmp_float(const void *x, const void *y) {
    float p = *(const float *)x, q = *(const float *)y;
    return (p > q) - (p < q);
}

#endif
