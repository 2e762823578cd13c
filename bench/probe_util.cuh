/* probe_util.cuh — what the plain-CUDA programs in bench/ share besides the seeds' kernel
 * (seed_kernel.cuh): a checked CUDA call, floats and doubles compared for qsort, the host's
 * clock in µs, the median of a sample, and the copy probes' arrays and streams (probe_copies,
 * probe_streams, probe_small).
 * CK(call): on failure, file, line, the call and CUDA's message on stderr, then exit(1).
 * ref_overlap.cu answers an error line and goes on serving instead: it defines its own
 * CK before including this file, and this one then stands aside, with the copy helpers
 * (they exit on an error). */
#ifndef STREAMLAB_PROBE_UTIL_CUH
#define STREAMLAB_PROBE_UTIL_CUH

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef CK
#define PROBE_UTIL_EXITS /* CK exits: the helpers below may use it */
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

static inline int cmp_double(const void *x, const void *y) {
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

/* The host's monotonic clock, µs. */
static inline double probe_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The median of n > 0 values (sorted in place; of an even n, the mean of the middle two). */
static inline double probe_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#ifdef PROBE_UTIL_EXITS
/* Two pinned host arrays and two device arrays of `bytes` each, every page written before
 * timing: h0 the H2D source, h1 the D2H target, d1 the D2H source (zeros). */
static inline void probe_copy_arrays(size_t bytes, char **h0, char **h1, char **d0, char **d1) {
    CK(cudaHostAlloc((void **)h0, bytes, 0));
    CK(cudaHostAlloc((void **)h1, bytes, 0));
    CK(cudaMalloc((void **)d0, bytes));
    CK(cudaMalloc((void **)d1, bytes));
    memset(*h0, 1, bytes);
    memset(*h1, 2, bytes);
    CK(cudaMemset(*d1, 0, bytes));
}

/* The stream that gates and joins a case (s0, with its timing events e0 and e1) and n
 * non-blocking streams a direction (sh: H2D, sd: D2H), each with a join event (ej[2i] for
 * sh[i], ej[2i + 1] for sd[i]; only waited on, so without timing). */
static inline void probe_copy_streams(int n, cudaStream_t *s0, cudaStream_t *sh, cudaStream_t *sd, cudaEvent_t *e0,
                                      cudaEvent_t *e1, cudaEvent_t *ej) {
    CK(cudaStreamCreateWithFlags(s0, cudaStreamNonBlocking));
    for (int i = 0; i < n; i++) {
        CK(cudaStreamCreateWithFlags(&sh[i], cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&sd[i], cudaStreamNonBlocking));
    }
    CK(cudaEventCreate(e0));
    CK(cudaEventCreate(e1));
    for (int i = 0; i < 2 * n; i++)
        CK(cudaEventCreateWithFlags(&ej[i], cudaEventDisableTiming));
}
#endif

#endif
