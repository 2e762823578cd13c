/* cuda_internal.h — what gpu/cuda_*.cu share among themselves, and nothing else
 * includes: the one CUDA_CHECK macro, the kernels' launcher, host helpers (clock,
 * CPU reference, verification), the measurement conditions (NVML) and the CUPTI
 * activity collector. The door to the rest of gpu/ is cuda.h. CUDA C++ only. */
#ifndef STREAMLAB_CUDA_INTERNAL_H
#define STREAMLAB_CUDA_INTERNAL_H

#ifndef __CUDACC__
#error "cuda_internal.h is for gpu/cuda_*.cu only"
#endif

#include <cuda_runtime.h>
#include <jansson.h>

#include "core.h"
#include "plan.h"

/* Check a CUDA call; on failure fill err (file, line, call, cudaGetErrorString), set
 * `rc` and jump to `cleanup`. The caller declares `int rc` and a `cleanup:` label that
 * frees everything (SQLite's one error path). Never exits. */
#define CUDA_CHECK(call)                                                          \
    do {                                                                          \
        cudaError_t cuda_check_e_ = (call);                                       \
        if (cuda_check_e_ != cudaSuccess) {                                       \
            rc = cuda_fail(err, cuda_check_e_, #call, __FILE__, __LINE__);        \
            goto cleanup;                                                         \
        }                                                                         \
    } while (0)

/* Same, for a non-CUDA failure with a code and a message. */
#define SL_FAIL(code, ...)                                                        \
    do {                                                                          \
        rc = sl_error_set(err, (code), "", __VA_ARGS__);                          \
        goto cleanup;                                                             \
    } while (0)

/* Fill err with "file:line: call: error string" as SL_E_DEVICE (SL_E_NOMEM for an
 * allocation failure) and return that code. Clears the runtime's last error. */
int cuda_fail(sl_error_t *err, cudaError_t e, const char *call, const char *file, int line);

/* ---- cuda_objects.cu: every CUDA object streamlab makes or frees, counted (cuda.h's
 * cuda_objects reads the counts). The CUDA calls of the same names, flags as given. ---- */
cudaError_t sl_stream_create(cudaStream_t *s, unsigned flags);
cudaError_t sl_stream_destroy(cudaStream_t s);
cudaError_t sl_event_create(cudaEvent_t *ev, unsigned flags);
cudaError_t sl_event_destroy(cudaEvent_t ev);
cudaError_t sl_stream_end_capture(cudaStream_t s, cudaGraph_t *g);
cudaError_t sl_graph_destroy(cudaGraph_t g);
cudaError_t sl_graph_instantiate(cudaGraphExec_t *x, cudaGraph_t g);
cudaError_t sl_graph_exec_destroy(cudaGraphExec_t x);
cudaError_t sl_host_alloc(void **p, size_t bytes, unsigned flags);
cudaError_t sl_free_host(void *p);
cudaError_t sl_malloc_bytes(void **p, size_t bytes);
cudaError_t sl_free(void *p);
template <class T> static inline cudaError_t sl_malloc(T **p, size_t bytes) {
    return sl_malloc_bytes((void **)p, bytes);
}

/* ---- cuda_kernels.cu ---- */
/* Blocks per SM the grid-stride kernel of `kernel` reaches at block_size threads
 * (cudaOccupancyMaxActiveBlocksPerMultiprocessor on the current device). */
cudaError_t cuda_kernel_occupancy(int kernel, int block_size, int *blocks_per_sm);
/* Launch kernel `kernel` over chunk[0, count), element j being global element
 * first + j. LAUNCH_CHUNK: one thread per element, grid = ceil(count / block_size);
 * LAUNCH_MAX_OCCUPANCY: `grid` blocks in a grid-stride loop. Returns the launch error. */
cudaError_t cuda_kernel_launch(int kernel, int iters, launch_t launch, uint64_t grid, int block_size,
                               float *chunk, uint64_t first, uint64_t count, cudaStream_t stream);

/* A grid-stride read and write of mapped[0, n) (host memory through its device mapping),
 * grid = SMs x occupancy: the zero-copy rate's calibration. Returns the launch error. */
cudaError_t cuda_zero_copy_touch(float *mapped, uint64_t n, int block_size, cudaStream_t stream);

/* ---- cuda_host.cu: host-side helpers (threads; OpenMP for the host's timed share) ---- */
double cuda_now_us(void); /* CLOCK_MONOTONIC, microseconds */
/* buf[i] = kernel_input(kernel, i) for i in [0, n): memset on the calling thread, as
 * the seeds do before each pipeline. Before every rep: the kernels work in place, so
 * this restores the input and leaves every element whose D2H is lost holding a value
 * its output never equals. */
void cuda_host_fill_input(int kernel, float *buf, uint64_t n);
/* The CPU reference: ref[i] = kernel_apply(kernel, iters, i, in[i]) for i in [0, n).
 * Returns how many elements' input already passes as their output (kernel_output_ok):
 * verification could not tell those from a lost copy, so a run needs 0. */
uint64_t cuda_host_reference(int kernel, int iters, const float *in, float *ref, uint64_t n);
/* The host's share of host_overlap (OpenMP, timed): out[i] = kernel_apply(kernel, iters,
 * i, in[i]) for i in [first, first + count) */
void cuda_host_apply(int kernel, int iters, const float *in, float *out, uint64_t first, uint64_t count);
/* Elements of out[0, n) that do not match ref (kernel_output_ok); first bad in *first_bad. */
uint64_t cuda_host_verify(int kernel, const float *out, const float *ref, uint64_t n, uint64_t *first_bad);

/* ---- cuda_conditions.cu: what a measurement was taken under ---- */
typedef struct cuda_conditions cuda_conditions_t;
/* Snapshot NVML (and the device's properties) of CUDA ordinals[0..n) now: "before". */
cuda_conditions_t *cuda_conditions_begin(const machine_info_t *m, const int *ordinals, int n);
/* Read again ("after") and return the JSON of both (NULL-safe); frees c. */
json_t *cuda_conditions_end(cuda_conditions_t *c);
/* The device's UUID as NVML names it ("GPU-xxxxxxxx-xxxx-..."), from the runtime. */
void cuda_uuid_string(const cudaUUID_t *u, char *buf, size_t n);

/* ---- cuda_cupti.cu: CUPTI activity records, loaded with dlopen ---- */
typedef struct cupti_record {
    int ordinal;           /* CUDA device */
    op_kind_t op;          /* OP_H2D, OP_KERNEL, OP_D2H */
    uint32_t correlation;  /* the API call that issued it */
    uint32_t stream_id;
    uint64_t start_ns, end_ns; /* CUPTI's timebase (cupti_timestamp_ns) */
    uint64_t bytes;
} cupti_record_t;

/* Take the process's CUPTI (one run at a time) and enable memcpy and kernel records,
 * with record buffers ready for about expected_records. SL_E_UNAVAILABLE with the
 * reason where CUPTI cannot be loaded. */
int cupti_begin(size_t expected_records, sl_error_t *err);
/* Now, in CUPTI's timebase (ns). */
uint64_t cupti_timestamp_ns(void);
/* Flush and hand over every record gathered since the last call (caller frees *recs);
 * records dropped by CUPTI make this fail. A flush disturbs the next op (CUPTI rearms
 * its buffers), so call it after the timed reps, not between them. */
int cupti_collect(cupti_record_t **recs, size_t *n, sl_error_t *err);
/* Disable the records and release CUPTI for the next run. */
void cupti_end(void);
/* Which library was loaded, or why none ("libcupti.so.13", "unavailable: ..."). */
const char *cupti_library(void);

/* ---- cuda_peer.cu ---- */
/* Peer copies between CUDA devices a and b without and with peer access enabled:
 * {"devices":[a,b], "can_access_peer":.., "bytes":.., "without_peer_access_gbps":..,
 *  "with_peer_access_gbps":..}. Leaves peer access as it found it. */
int cuda_peer_measure(int a, int b, json_t **out, sl_error_t *err);

#endif
