/* plan.h — an experiment's work as the host issues it: a list of operations in issue
 * order (copy, kernel, host work, event record/wait, stream query, synchronise), each
 * with its stream, chunk and element range. One plan serves every backend: the CUDA
 * backend executes it call by call, the simulator and the predictor replay it on the
 * engine-queue model. Chunking is exact: chunk c covers [offset, offset + count) and
 * the chunks of a plan cover every element once (plan_check_coverage proves it). */
#ifndef STREAMLAB_PLAN_H
#define STREAMLAB_PLAN_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PLAN_H2D,        /* copy host -> device */
    PLAN_KERNEL,     /* kernel over [offset, offset+count) */
    PLAN_D2H,        /* copy device -> host */
    PLAN_HOST,       /* the host computes [offset, offset+count) itself */
    PLAN_QUERY,      /* cudaStreamQuery(stream): the WDDM flush */
    PLAN_SYNC,       /* host waits for every issued op (cudaDeviceSynchronize on each device) */
} plan_kind_t;

#define PLAN_STREAM_DEFAULT (-1) /* the default stream (legacy or per-thread per spec) */

typedef struct plan_op {
    plan_kind_t kind;
    int device;       /* index into spec->devices (0 for single-device variants) */
    int stream;       /* 0..streams-1, or PLAN_STREAM_DEFAULT */
    int chunk;
    uint64_t offset;  /* first element */
    uint64_t count;   /* elements */
    bool blocking;    /* the host waits for this op to finish (cudaMemcpy, pageable copies) */
    int wait_event;   /* before this op the stream waits for that event (-1: none) */
    int record_event; /* after this op an event is recorded in its stream (-1: none) */
} plan_op_t;

typedef struct plan {
    plan_op_t *ops;
    size_t count, cap;
    int streams;       /* streams per device created by the pipeline (0: default stream only) */
    int devices;       /* devices used */
    int events;        /* events used by wait/record */
    bool legacy_default; /* default-stream ops follow legacy semantics */
    bool zero_copy;    /* kernels read and write the pinned host array through its device
                        * mapping: no copies, no device buffer */
    uint64_t size;
    char why[256];     /* tuned: what was chosen and why */
} plan_t;

/* Build the issue order of spec's variant. The tuned variant is resolved by the caller
 * (gpu/tuned.c) into a concrete spec first. */
int plan_build(const spec_t *spec, plan_t *plan, sl_error_t *err);
void plan_free(plan_t *plan);
/* Every element in [0, size) is covered by exactly one kernel or host op, and each
 * device-side kernel chunk has its H2D and D2H over the same range (zero_copy: none). */
int plan_check_coverage(const plan_t *plan, sl_error_t *err);
/* A copy or a kernel: the ops that run on the device, in a stream. */
static inline bool plan_is_device_op(plan_kind_t kind) {
    return kind == PLAN_H2D || kind == PLAN_KERNEL || kind == PLAN_D2H;
}
/* Each of device's streams' last copy or kernel in the plan: last[st] its index, -1 where
 * the stream has none (last holds plan->streams entries). The CUDA backend records an
 * event there on non-blocking streams, and the sim charges it. */
void plan_stream_last_ops(const plan_t *plan, int device, int *last);
/* Chunk c of n over size elements: the first size % n chunks get one more element. */
void plan_chunk_range(uint64_t size, int n, int c, uint64_t *offset, uint64_t *count);
/* Chunk c of a spec's chunks over size elements: even, or with the first and last
 * chunks spec->chunk_edge times the others (the tuned variant). Exact either way. */
void plan_spec_chunk(const spec_t *spec, uint64_t size, int c, uint64_t *offset, uint64_t *count);
/* What a copy that starts while the other direction copies costs the model beyond its
 * alone time and the derate (model_device_t.bidir_copy_us), from the calibration's cost
 * per copy alone and both ways; 0 where either is unmeasured. */
double plan_bidir_copy_us(const calibration_t *c, double derate);
/* Each direction's rate while both copied (GB/s; calibration_t.bidir_h2d_gbps, bidir_d2h_gbps),
 * from one both-ways rep of `bytes` each way that started together and ended us_h2d and
 * us_d2h later: the direction that ended first ran beside the other all its time; the other
 * moved the rest alone after it at its alone rate (h2d_alone or d2h_alone), so over the
 * time both ran it moved its bytes less that rest. 0 each where the numbers cannot say. */
void plan_both_ways_split(size_t bytes, double us_h2d, double us_d2h, double h2d_alone, double d2h_alone,
                          double *h2d, double *d2h);
/* Where the events time an op past PLAN_START_BOUND_TIMES its expected time and
 * PLAN_START_BOUND_SLACK_US more, they did not see it start (below): a small copy queued
 * behind others, a kernel waiting in a hardware queue. On a lent H100 (GPU-9eb301e8,
 * 2026-11-27) CUPTI timed such copies at 0.73-1.86 of their both-ways time and such kernels
 * at 0.51-3.49 of their time alone, where events had them at up to 17x and 400x. */
#define PLAN_START_BOUND_TIMES 2.0
#define PLAN_START_BOUND_SLACK_US 10.0
/* What an H2D pays for reading host memory the host has just written (µs): the pipelines
 * memset their array before each rep, and its last dirty_cache_mib MiB are still dirty in the
 * CPU's cache when the copies read them (calibrated: dirty_h2d_us_per_mib). The part of the
 * copy's elements [offset, offset + count) that falls in that tail pays per MiB, times the
 * share an array of its size pays itself (all of it up to 4 MiB, PLAN_DIRTY_LARGE_SHARE from
 * 16 MiB, in proportion between; measured: sim.h). Pageable copies go through the driver's
 * own buffers and are priced by their own rate: 0. The sim's price of a copy, and the copy
 * bound's below. */
#define PLAN_DIRTY_LARGE_SHARE 0.6
double plan_dirty_extra_us(const spec_t *spec, const calibration_t *c, uint64_t offset, uint64_t count);
/* A pinned copy's start on a timeline timed by events, where the events cannot place it
 * on its engine (gpu/cuda_backend.cu; METHOD.md, "Copies whose start the events cannot
 * see"). Given its bytes, what reading a just-written tail adds to it (dirty_us:
 * plan_dirty_extra_us), the earliest it could start (its start event, its hand-off), the
 * start the engine's order gave it and its end: where that makes it more than
 * PLAN_COPY_BOUND_TOL longer than its bytes take both ways at the calibrated rate and
 * cost, or quicker than alone (PLAN_COPY_BOUND_FAST under it: no copy moves its bytes
 * faster than the calibrated rate alone), its end less the both-ways time, and no earlier
 * than `earliest`; else `start`. A dirty copy is paced by the CPU's cache: alone it takes
 * its dirty extra more, and both ways no less than that. A copy whose both-ways time is
 * under PLAN_COPY_BOUND_MIN times its fixed cost (fixed costs, not bytes, set its time)
 * only where it is longer than the PLAN_START_BOUND_* band. Too long is a misfit only on a
 * `composed` timeline (its ops from several reps, each tracing some): on one rep's with every
 * op traced, the copy before it on its engine is its real predecessor, and a copy too long
 * for its bytes ran in a rep whose link was slow. Calibrations without the rates keep
 * `start`. */
#define PLAN_COPY_BOUND_TOL 0.2
#define PLAN_COPY_BOUND_FAST 0.03
#define PLAN_COPY_BOUND_MIN 5
double plan_copy_start_bound(const calibration_t *c, bool h2d, uint64_t bytes, double dirty_us, bool composed,
                             double earliest, double start, double end);

/* A kernel's launch-to-start latency on the device (µs), what its time alone has beyond its
 * work: assumed, of the order seen on H100 traces (the sim's; the predictor takes it from
 * the trace). */
#define PLAN_KERNEL_LATENCY_US 2.5
/* A kernel launch over count elements with the GPU to itself (µs): its launch latency and
 * its work (work_us, at the GPU's full rate) over the share of the GPU's throughput its grid
 * uses, the SMs it covers, each at the throughput its resident threads give. The sim's price
 * of a kernel, and the bound below. */
double plan_kernel_alone_us(const spec_t *spec, const device_info_t *dev, uint64_t count, double work_us);
/* A kernel's start on a timeline timed by events (gpu/cuda_backend.cu; METHOD.md, "Kernels
 * whose start the events cannot see"). Its start event, or the end event of its stream's op
 * before it, fires when the stream reaches the kernel, not when the GPU runs it: in a
 * breadth-first rep of many streams the kernels wait in the hardware queues behind other
 * streams' copies, and on a lent H100 (GPU-9eb301e8, 2026-11-27, 2^25 async_v2 x128, timing
 * cupti's cross-check) kernels of 6-13 us by CUPTI came out 1.3-1.7 ms long by events. Given
 * its elements, the earliest it could start (the start its events gave it before the
 * engine's order moved it), that start after it and its end: where that makes it longer
 * than the PLAN_START_BOUND_* band over its time alone (its work at the calibrated rate
 * over the share of the GPU its grid fills, and the launch latency), its end less its time
 * alone; where shorter than PLAN_START_BOUND_SHORT of it (the kernel before it on the
 * engine, from another rep of a composed timeline, ended late), its end less its time alone
 * but not before `earliest`; else `start`. Calibrations without the kernel's rate keep
 * `start`. */
#define PLAN_START_BOUND_SHORT 0.5
double plan_kernel_start_bound(const spec_t *spec, const device_info_t *dev, uint64_t count, double earliest,
                               double start, double end);

/* Blocks a kernel launch over count elements uses (grid size). */
uint64_t plan_kernel_blocks(const spec_t *spec, const device_info_t *dev, uint64_t count);
/* Blocks per SM for a block size on this device (occupancy by threads and block limits). */
int plan_blocks_per_sm(const device_info_t *dev, int block_size);
/* The spec's kernel's time per element with the GPU to itself (ns): the device's
 * calibrated figure; for a compute kernel its base plus its rounds at the calibrated
 * cost per round. 0 where it was not measured. */
double plan_kernel_ns_per_elem(const spec_t *spec, const device_info_t *dev);

#ifdef __cplusplus
}
#endif
#endif
