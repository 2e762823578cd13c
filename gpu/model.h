/* model.h — the engine-queue device model (DESIGN.md "The device model").
 *
 * One simulator serves the sim backend and POST /api/predict. It replays a plan's
 * operations in host issue order on a modelled GPU:
 *   - the host submits one op at a time, paying a submission cost per call; a blocking
 *     op (cudaMemcpy, pageable copies) holds the host until it completes;
 *   - work runs from hardware channels, each strictly in order: the head of a channel
 *     starts when its stream predecessor and awaited events are done, and nothing behind a
 *     waiting head moves. With channel_pools (the default, as the lent H100s and H200s ran:
 *     CUPTI's channel ids) the channels are pools per kind of op: connections / 2 a copy
 *     direction, each copy taking its direction's channels in turn; `connections` for
 *     kernels, a kernel taking, as the host launches it, a channel with no kernel waiting
 *     in it (the one whose last kernel ended longest ago), else the least recently used.
 *     So a kernel can sit behind another stream's kernel still waiting for its H2D: the
 *     holding behind the many-stream pipelines' slow runs. Without it, a queue per
 *     stream % connections holds every kind of op. With connections == 1 (pre-Hyper-Q)
 *     the queues are per engine instead, and a run of kernels issued back to back
 *     signals completion only when the run ends; the default stream has a queue of its own;
 *   - copies run on copy engines: one engine per direction when copy_engines >= 2 (both
 *     directions at once lose 2 x (1 - bidir_derate) of their alone speed between them, the
 *     D2H bidir_d2h_share of it; a copy its source paces slower than its share is not
 *     slowed), a single shared engine otherwise. With channel_pools an engine stays on the channel it served last while
 *     that channel's head is ready, else moves to the next channel by number whose head is
 *     (with every H2D queued, it drains one channel, then the next); otherwise copies run
 *     in dispatch order;
 *   - kernels share the SMs: each asks for the share of the GPU it uses alone, and
 *     earlier kernels are served first (the block scheduler's order); a kernel given less
 *     than it asks runs proportionally slower. The share is sat_us / alone_us where the
 *     kernel's work at full throughput is known (a compute-bound kernel whose grid fills
 *     half the SMs may still use all of their arithmetic; a small latency-bound one uses
 *     little), else the fraction of the GPU its blocks fill;
 *   - a legacy default-stream op waits for all earlier work in blocking streams, and
 *     later blocking-stream work waits for it.
 * Durations in the input are "alone" durations: what the op takes with the device to
 * itself. The output is a timeline in the same form as measured ones. */
#ifndef STREAMLAB_MODEL_H
#define STREAMLAB_MODEL_H

#include "core.h"
#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct model_device {
    int copy_engines;        /* 1: shared by both directions; 2+: one per direction */
    double bidir_derate;     /* each direction's speed while both run, over its speed alone: the
                              * mean of the two where bidir_d2h_share splits them */
    double bidir_d2h_share;  /* of the two directions' loss while both run (2 x (1 - bidir_derate)),
                              * the D2H's share: 0.5, each at bidir_derate; above it the D2H
                              * slows more and the H2D less (0.6 by default: the lent GPUs'
                              * pipelines, model_default_device) */
    int connections;         /* hardware channels (CUDA_DEVICE_MAX_CONNECTIONS); 1: pre-Hyper-Q */
    bool channel_pools;      /* true: the channels are pools per kind of op (connections kernel
                              * channels, connections / 2 copy channels a direction); false: a
                              * queue per stream % connections, every kind of op in it */
    double copy_overlap_us;  /* a copy queued behind another on its engine saves this much */
    double bidir_copy_us;    /* a copy that starts while the other direction copies costs this
                              * much more (alone-µs): its fixed cost grows, beyond the derate */
    double copy_switch_us;   /* a copy whose engine's copy before it came from another stream
                              * costs this much more (alone-µs); 0: no such cost */
    double host_copy_gbps;   /* the machine's host side: what the copies of all its devices
                              * move together at most (GB/s, both directions); 0: no limit */
    double host_h2d_gbps;    /* the H2D copies' part of it while both directions ask more
                              * than it holds; 0: half */
    int sm_count;
    int max_threads_per_sm;
    int max_blocks_per_sm;
} model_device_t;

/* Of a rep's first-call extra over a large array (model_host_t.first_us), what the first H2D,
 * the first kernel launch and the first D2H each pay. Each op's host call in streamlab's
 * timelines on a lent H100 (GPU-b27c34ea, 2026-11-27, async_v1/v2 x4-x256, the first call of a
 * kind over its later calls' median, at 2^25 less at 2^22): the H2D 15.0 us, the kernel 25.3,
 * the D2H 2.3 (medians of 8 points; 42.6 together). An earlier look at the plain program's
 * calls (GPU-5f114823, 2026-11-26) had the H2D and the kernel 15-25 us each and the D2H 2-5. */
#define MODEL_FIRST_SHARE_H2D 0.35
#define MODEL_FIRST_SHARE_KERNEL 0.60
#define MODEL_FIRST_SHARE_D2H 0.05

/* A rep's first kernel launch costs the host this much more, whatever the array
 * (model_host_t.first_launch_us, every machine's: model_params_for_device). Each op's host call
 * in streamlab's timelines on a lent H100 (GPU-b27c34ea, 2026-11-27, 2^22 async_v1/v2 x4-x256):
 * the first launch took 2.8-8.4 us more than the later launches' median, 4.65 the median of the
 * 8 points; the plain program's first launch (bench/data/probes, GPU-18989197) 2-13 us more than
 * its later ones. The rep's lead (model_host_t.lead_us) covers the first H2D's. Over the 53 lent
 * seeds' tables simulated from the shipped profiles it took the median of their medians from
 * 1.09% to 0.99% and the points over 10% from 160 to 157 (2^22 async_v1 x64 from 2.2% quick to
 * 1.1%, sequential from 1.1% to 0.5%). */
#define MODEL_FIRST_LAUNCH_US 4.65

typedef struct model_host {
    double copy_submit_us;   /* cudaMemcpyAsync host cost */
    double kernel_launch_us; /* kernel launch host cost */
    double event_us;         /* cudaEventRecord / cudaStreamWaitEvent host cost */
    double query_us;         /* cudaStreamQuery host cost */
    double sync_us;          /* cudaDeviceSynchronize return latency */
    double first_us;         /* more for a rep's first calls of the three kinds together (H2D,
                              * kernel, D2H: model_op_t.first_of_kind), their driver paths run
                              * cold; each kind's call pays its share (MODEL_FIRST_SHARE_*) */
    double call_us;          /* more for every other copy and kernel call */
    double first_launch_us;  /* more for a rep's first kernel launch, whatever the array
                              * (MODEL_FIRST_LAUNCH_US) */
    double reorder_us;       /* more for a copy or kernel call whose stream's op before it in the
                              * rep (since the last synchronise) was not the call just before:
                              * breadth-first issue (calibration_t.issue_reorder_us) */
    double blocking_us;      /* a blocking op (cudaMemcpy) returns to the host this long after it
                              * ends: the host's next call starts no earlier */
    double lead_us;          /* the first device call after a synchronise (a rep's first: after
                              * the rep before ended and the array was memset) costs this much
                              * more; not scaled with the host's pace (the sim's SIM_REP_LEAD_US;
                              * a prediction's basis trace starts at its first op: 0) */
} model_host_t;

typedef struct model_op {
    plan_kind_t kind;
    int device;
    int stream;              /* PLAN_STREAM_DEFAULT for the default stream */
    int chunk;
    bool blocking;
    bool non_blocking_stream;/* created with cudaStreamNonBlocking: legacy stream ignores it */
    int wait_event, record_event;
    double alone_us;         /* device (or host, for PLAN_HOST) duration alone */
    double host_us;          /* host cost of issuing it; < 0: the model_host default */
    bool first_of_kind;      /* the rep's first call of its kind: model_host_t.first_us */
    bool end_event;          /* an event is recorded right after it, at its stream's end: the CUDA
                              * backend's on non-blocking streams, whose ends the legacy stream's
                              * stop event does not wait for (model_host_t.event_us more) */
    int stream_waits;        /* PLAN_SYNC: the host first makes the legacy stream wait for this
                              * many streams' end events (model_host_t.event_us each) */
    double gap_us;           /* device latency between its stream predecessor's (or awaited
                              * event's) end and its start: the seed's h2d_ovhd, host2kern_ovhd,
                              * kern_ovhd, kern2host_ovhd, d2h_ovhd, measured from a trace */
    uint64_t bytes;
    double paced_us;         /* copies: the part of alone_us the link does not pace (an H2D's reads
                              * of lines the CPU's cache holds: the sim's dirty extra). While
                              * the other direction copies, such a copy slows only as far as
                              * the link's share falls below its own pace */
    uint64_t blocks;         /* kernels */
    int threads_per_block;   /* kernels */
    double sat_us;           /* kernels: its work at the whole GPU's throughput (elements x the
                              * calibrated time per element); 0: unknown */
} model_op_t;

/* A breadth-first call's extra (model_host_t.reorder_us) where nothing measured it: a GPU host's
 * own calibration does not (its blocks see the host's swings, not the price: docs/METHOD.md,
 * "The breadth-first call, charged"); a profile fits it to its reference table (0.001 at
 * least, so 0 is "not measured"). The median of 39 lent tables' fits, quartiles 0.66-0.89 us.
 * Charged nothing until 2026-11-27: bench-model's predictions on four lent GPUs, replayed with
 * this price and without, came out a median 1.8% off against 2.3% (H100 GPU-0a691921), 1.2
 * against 1.8 (H200 GPU-c6f5f62c), 6.3 against 6.9 (H100 GPU-fb977ac2), 3.5 against 3.6 (H100
 * GPU-1e615fa0, its largest 14.2 against 11.4); the 46 tables of bench/data, each simulated
 * from its own calibration (33 of them without the price), 1.24% against 1.31%. */
#define MODEL_REORDER_UNMEASURED_US 0.81

/* A copy's paced part (model_op_t.paced_us) counts from this many µs: the array's tail costs
 * its copy 20-60 µs on the lent GPUs, where a basis's H2Ds of the same bytes differ by a few
 * µs of noise, and pacing by that noise put the predictions of three bench-model runs on lent
 * GPUs further off (2026-11-27: H200 GPU-c6f5f62c a median 2.0% against 1.1% without).
 * The sim (its dirty extra) and the predictor (an H2D's time over its fastest twin) use the
 * same bound, so the sim's own runs still predict exactly. */
#define MODEL_PACED_MIN_US 10.0

typedef struct model_input {
    model_op_t *ops;
    size_t count;
    int devices;
    int events;
    bool legacy_default;     /* default-stream ops have legacy semantics */
    model_device_t dev;
    model_host_t host;
} model_input_t;

/* Simulate; fills tl (ops in the same order as the input, host issue bookkeeping
 * excluded: only H2D/KERNEL/D2H/HOST appear) and tl->total_us = time at which the
 * host returns from the last op (or the last device op ends, whichever is later). */
int model_simulate(const model_input_t *in, timeline_t *tl, sl_error_t *err);

/* Mark the plan's first H2D, kernel and D2H (model_op_t.first_of_kind): the calls a rep runs
 * cold (model_host_t.first_us, first_launch_us). The sim and the predictor mark alike. */
void model_mark_first_of_kind(model_input_t *in);

/* One plan (ending with a PLAN_SYNC) run warmup + reps times back to back, as a run
 * repeats it: what the device holds from one repetition to the next (which channel each
 * copy engine serves, which kernel channels were used last and when their kernels ended)
 * carries over, as it does on the hardware. tls (reps of them) gets each measured
 * repetition's timeline, its times from the repetition's start (the host returning from
 * the previous one's synchronise) and total_us to its own synchronise's return; issue_us
 * (reps of them, or NULL) how long the host took to issue each (to its last device op's
 * return: what the CUDA backend's extra.timing.issue_us_clean measures). On the
 * simulated H100, 2^25 async_v1 x256 runs 4.03 ms cold and 4.39 ms from the second
 * repetition on, as the lent H100s' tables do (4.18-4.33). */
int model_simulate_reps(const model_input_t *in, int warmup, int reps, timeline_t *tls, double *issue_us,
                        sl_error_t *err);

/* The simulated H100 (sim backend defaults, measured on the lent H100s). */
void model_default_device(model_device_t *d);
/* With channel_pools: the copy channels a direction has (connections / 2, at least 1; the
 * kernels have `connections`). */
int model_copy_channels(const model_device_t *d);
void model_default_host(model_host_t *h);
/* The defaults above with what a device says of itself and its calibration measured:
 * copy engines (2 where unknown), SMs and their limits, the both-ways derate (at most
 * 1) and fixed cost, the copy switch, the host's issue costs. The sim and the predictor
 * both start from it. */
void model_params_for_device(const device_info_t *dev, model_device_t *d, model_host_t *h);

#ifdef __cplusplus
}
#endif
#endif
