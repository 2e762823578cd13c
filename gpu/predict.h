/* predict.h — predict N-stream timelines from a single-stream trace (seed 001's
 * trans_kernel_model, on the engine-queue model of model.h).
 *
 * From the trace it takes each op's alone duration, the five overheads of the seed
 * (h2d_ovhd, host2kern_ovhd, kern_ovhd, kern2host_ovhd, d2h_ovhd: the device's gaps
 * between dependent ops, medians over the trace) and the copy and kernel rates; it
 * builds the target variant's plan, gives every op a duration (the trace's own where the
 * chunking matches, else rescaled: copies latency + bytes / bandwidth, kernels in
 * proportion to elements at the GPU fraction their grid fills) and replays it. */
#ifndef STREAMLAB_PREDICT_H
#define STREAMLAB_PREDICT_H

#include <jansson.h>

#include "core.h"
#include "model.h"

#define PREDICT_MAX_OPS 200000
#define PREDICT_MAX_SPAN_US 3.6e9 /* a trace covers at most an hour */
#define PREDICT_MAX_LEAD_US 1000.0 /* a rep's lead (model_host_t.lead_us) at most */

typedef struct trace_op {
    op_kind_t op;
    double start_us, end_us;
    uint64_t bytes;          /* copies */
    uint64_t blocks;         /* kernels */
    int threads_per_block;   /* kernels; default 256 */
} trace_op_t;

typedef struct trace {
    trace_op_t *ops;
    size_t count;
    double lead_us;          /* the rep's time before its first op (from the rep's start event), where
                              * the trace was taken from a rep (a timeline, an experiment's stored
                              * one); 0 for a trace given as JSON */
} trace_t;

/* Parse {"ops": [...]} (API.md's trace): every op checked (kind, numbers, end >= start,
 * sorted by start, bytes on copies, blocks on kernels). SL_E_INVALID names the op. */
int trace_from_json(json_t *trace, trace_t *out, sl_error_t *err);
void trace_free(trace_t *t);
/* A timeline's kernels lack their grid: fill blocks from the spec that ran it (the
 * i-th kernel covers the i-th H2D's elements). */
void trace_fill_blocks(trace_t *t, const spec_t *spec, const device_info_t *dev);
/* The trace of a measured timeline's ops (the same schema). */
int trace_from_timeline(const timeline_t *tl, trace_t *out, sl_error_t *err);
/* The trace in POST /api/predict's form ({"ops": [...]}), or NULL (out of memory). */
json_t *trace_to_json(const trace_t *t);
/* The op-by-op median of n reps' timelines of one pipeline (same ops in the same order);
 * where they differ, the timeline tls[fallback] alone. */
int trace_from_timelines(const timeline_t *tls, size_t n, size_t fallback, trace_t *out, sl_error_t *err);

/* The event tax: events recorded around every op of a 1-stream pipeline stretch it
 * (on the lent H100 by 2.4-3 us per op at 8-64 chunks against the same pipeline's clean
 * reps). Given the clean total of the pipeline the trace was timed in, shorten every op
 * by the tax per op (at most cap_us, at most half the op) and close the gaps up; the tax
 * taken goes to *tax_us. Nothing changes where the trace is no longer than clean_us. */
void trace_remove_event_tax(trace_t *t, double clean_us, double cap_us, double *tax_us);

/* What a queued copy hides once the event tax is out of its trace. A one-stream basis's
 * copies each start on an idle engine: at 2^22 x64 on a lent H100 (GPU-0335486c,
 * 2026-11-26, compute kernel) they took 9.3 us a 256 KiB piece after the tax, where the
 * 64-stream run's H2D engine was busy 635 us for its 64 copies (9.9 each, the median 7.0:
 * back to back, with the D2Hs beside them). With 0.5 us, chosen 2026-11-23 before the
 * model charged a copy for its stream switch and its both-ways start, the prediction
 * kept that engine busy 731 us and ran 17.5% slow; 1.5 gives 675 us and 3.9%. Replayed
 * over the 96 predictions of four bench-model runs (GPU-f12a06ec, GPU-0335486c, blog and
 * compute kernels; median / 90th percentile / largest error, the two-mode points 2^25
 * async_v1 x64 and async_v2 x32 left out): 0.5 us 1.3 / 8.9 / 17.5%, 1.0 1.1 / 5.2 /
 * 9.8%, 1.25 1.0 / 4.2 / 7.7%, 1.5 1.1 / 3.6 / 5.5%, 1.75 1.1 / 3.6 / 7.1%, 2.0 1.1 /
 * 4.7 / 9.5%. Held out, a fresh run on a noisy host (GPU-d3c55d59, 08:58, three kernels,
 * 72 predictions): 0.5 us 1.75 / 6.3 / 9.4%, 1.5 us 1.35 / 5.0 / 11.3%. Traces as events
 * time them keep the model's 2 us (on the 72 raw traces of 2026-11-22, 2 us gave 2.8 /
 * 9.5 / 27.6% and 0.5 us 3.9 / 17.2 / 39.2%). */
#define PREDICT_DETAXED_COPY_OVERLAP_US 1.5

typedef struct predict_params {
    model_device_t dev;
    model_host_t host;
    int block_size;          /* for rescaled kernels' grids */
    double kernel_ns_per_elem; /* the kernel's time per element with the GPU to itself (the
                              * calibration's, plan_kernel_ns_per_elem): how much of the GPU
                              * each kernel uses alone, from its trace duration; 0: unknown,
                              * the fraction of the GPU its grid fills stands in */
} predict_params_t;

/* Defaults from a device (calibration, SMs, copy engines) or the sim's H100. */
void predict_params_for(const device_info_t *dev, predict_params_t *p);
/* POST /api/predict's overrides of p: `device` (copy_engines, bidirectional_derate,
 * bidirectional_d2h_share, connections, sm_count, max_threads_per_sm, max_blocks_per_sm,
 * copy_overlap_us, bidir_copy_us, copy_switch_us, channel_pools) and `host` (copy_submit_us,
 * kernel_launch_us, reorder_us, lead_us), each optional (NULL: absent). SL_E_INVALID
 * names the field ("device", "device.copy_engines", ...); p may be half changed then. */
int predict_params_override(json_t *device, json_t *host, predict_params_t *p, sl_error_t *err);

/* POST /api/predict's kernel_ns_per_elem (a number from 0 to 1e6; NULL: absent) into p.
 * SL_E_INVALID names the field. */
int predict_params_kernel(json_t *kernel_ns_per_elem, predict_params_t *p, sl_error_t *err);

/* The rep's lead (model_host_t.lead_us) from a trace taken from a rep: the time before its first
 * op less the call that issued it (p's copy_submit_us); 0 where the trace holds none. The sim
 * charges one (SIM_REP_LEAD_US), and the lent GPUs' reps wait 7-18 us before their first op
 * (2026-11-27): a prediction's target rep waits as its basis's did. */
void predict_lead_from_trace(predict_params_t *p, const trace_t *t);
/* Host costs from the basis's own issue: scale the copy and launch costs (keeping their
 * ratio) so that its `chunks` H2D, kernel, D2H triples cost the host issue_us, the time
 * the basis's clean reps took to issue (median). The host's speed on the lent machines
 * moved 10-30% from one run to the next while the calibration is taken once at start-up;
 * the basis runs beside the measurement it predicts. The scale is kept within [1/4, 4]. The
 * rep's lead (p->host.lead_us, predict_lead_from_trace first) is taken out of issue_us: it is
 * the first call's, not every call's. */
void predict_host_from_issue(predict_params_t *p, double issue_us, int chunks);

/* Predict variant with `streams` streams and `chunks` chunks (0: the trace's chunk
 * count) on the trace. Fills tl (caller frees); *derived gets what was taken from the
 * trace (overheads, rates) when not NULL. */
int predict_timeline(const trace_t *trace, const predict_params_t *p, variant_t variant, int streams, int chunks,
                     timeline_t *tl, json_t **derived, sl_error_t *err);

#endif
