/* model.c — the engine-queue simulator (semantics in model.h).
 *
 * A discrete-event loop over one host actor and, per device, its hardware queues, copy
 * engines and SMs. Work per step is O(queues + running ops); a step happens at each
 * submission, dispatch or completion, so a plan of n ops takes O(n * (queues + running)). */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-9
#define NEVER INFINITY

typedef struct op_state {
    double submit;      /* when the host finished issuing it */
    double call_start;  /* when the host began the call that issued it */
    double call_end;    /* when that call returned (a blocking op's: after its wait) */
    double start, end;  /* device times; NEVER while unknown */
    double remaining;   /* alone-µs of work left */
    double demand;      /* kernels: share of the GPU it uses alone (model.h) */
    int prev_stream;    /* previous device op of the same stream and device, or -1 */
    int event_src;      /* op that records the awaited event, or -1 */
    int legacy_barrier; /* blocking-stream op: the latest earlier legacy default op, or -1 */
    int batch_last;     /* pre-Hyper-Q kernels: last kernel of its back-to-back run */
    int engine;         /* copy engine index (per device) for copies, -1 otherwise */
    int queue;          /* global hardware queue index */
    bool issued, dispatched, running, done;
    bool bidir_charged; /* copies: paid bidir_copy_us (started while the other direction ran) */
} op_state_t;

typedef struct sim {
    const model_input_t *in;
    op_state_t *st;
    size_t n;
    int nqueues;
    int *queue_head;      /* per queue: next op index not yet dispatched, or -1 */
    int *queue_tail;      /* per queue: the last op put in it, or -1 */
    int *chan_last;       /* channel pools, per kernel channel: the last kernel launched into it */
    long *chan_used;      /* channel pools, per kernel channel: when (launch count) it was last used */
    long launches;
    int *queue_next;      /* per op: next op in the same queue */
    int nengines;         /* copy engines per device used by the model: 1 or 2 */
    int per_dev;          /* queues per device */
    int copy_channels;    /* channel pools: copy channels per direction (0: stream % connections queues) */
    int kernel_channels;  /* channel pools: kernel channels */
    int *engine_chan;     /* channel pools: per engine, the channel it served last (queue index) */
    int *engine_fifo;     /* per device*engine: ring of dispatched copies (indices) */
    size_t *engine_head, *engine_tail;
    int *engine_running;  /* op index or -1 */
    double *engine_freed; /* per device*engine: when its last copy ended */
    int *engine_last;     /* per device*engine: the last copy it started, or -1 */
    int *active;          /* running ops (copies on an engine, dispatched kernels), in the order
                           * they became running: kernels in dispatch order */
    size_t nactive;
    double now;
} sim_t;

static bool is_copy(plan_kind_t k) {
    return k == PLAN_H2D || k == PLAN_D2H;
}

void model_default_device(model_device_t *d) {
    d->copy_engines = 2;       /* one per direction */
    d->bidir_derate = 50.2 / 54.5; /* H100: 54.5 GB/s alone, 50.2 GB/s each way together (DESIGN.md) */
    /* Of the two directions' loss while both copy, the D2H's share. The plain program's ops
     * under CUPTI on a lent H100 (GPU-6154e87d, 2026-11-27): while the other direction copied,
     * its H2Ds ran at 0.93-0.96 of their speed alone and its D2Hs at 0.885-0.90 (2^22-2^25
     * async_v1 x4), where the calibration's mean both-ways rate gives each 0.903; 0.6 gives
     * 0.922 and 0.884. Over the lent tables (the median of their median errors; the 46
     * simulated from the shipped profiles, the 43 of bench/data each from its own calibration):
     * even (0.5) 1.32% and 1.43% before the sim's tail pacing (gpu/sim.c), 1.12% and 1.35%
     * with it; 0.55 0.91% and 1.39%; 0.6 0.92% and 1.29%; 0.65 1.11% and 1.14%; 0.7 1.29% and
     * 1.21%. */
    d->bidir_d2h_share = 0.6;
    /* The hardware channels streams' work runs from: CUDA_DEVICE_MAX_CONNECTIONS, 8 by
     * default, taken as pools per kind of op (channel_pools; model.h). The lent H100s and
     * H200s (driver 580, CUPTI's channel ids, 2026-11-25) ran every H2D of a pipeline from
     * one of 4 channels, every D2H from 4 others, every kernel from 8 more. The model had
     * stood in 32 queues of stream % 32 for them, which put 2^25 async_v2 x128 12% too slow
     * and could not say why it was slow at all. STREAMLAB_MODEL_CONNECTIONS overrides the
     * count; STREAMLAB_MODEL_QUEUES=1 gives the queues instead of the pools (with 32
     * connections: the model before 2026-11-26, for comparisons). */
    d->connections = 8;
    const char *env = getenv("STREAMLAB_MODEL_CONNECTIONS");
    if (env && atoi(env) >= 1 && atoi(env) <= 1024)
        d->connections = atoi(env);
    env = getenv("STREAMLAB_MODEL_QUEUES");
    d->channel_pools = !(env && atoi(env) == 1);
    /* A copy's fixed cost (descriptor fetch, the first PCIe round trip) overlaps the
     * transfer of the copy before it when it waits behind it on the same engine. The
     * lent H100's isolated 256 KB copies take 9-12 us by events against 4.8 us of
     * transfer, yet 64 streams of them ran in less than 64 x that. 2 us fits traces timed
     * by events as they come (the sim's fixed copy latency is 2 us too); a trace with
     * the events' own share taken out hides less (PREDICT_DETAXED_COPY_OVERLAP_US). */
    d->copy_overlap_us = 2.0;
    /* what a copy's fixed cost grows by while the other direction copies: none unless a
     * calibration measured it (plan_bidir_copy_us) */
    d->bidir_copy_us = 0;
    d->copy_switch_us = 0; /* none unless a calibration measured it */
    d->host_copy_gbps = 0; /* no shared limit unless a calibration of several devices measured it */
    d->host_h2d_gbps = 0;
    d->sm_count = 132;         /* H100 SXM */
    d->max_threads_per_sm = 2048;
    d->max_blocks_per_sm = 32;
}

int model_copy_channels(const model_device_t *d) {
    return d->connections / 2 > 1 ? d->connections / 2 : 1;
}

void model_default_host(model_host_t *h) {
    h->copy_submit_us = 2.3;   /* cudaMemcpyAsync host cost, H100 host (issue 3) */
    h->kernel_launch_us = 4.0; /* kernel launch host cost, H100 host (issue 3) */
    h->event_us = 1.0;
    h->query_us = 0.8;
    h->sync_us = 2.0;
    h->first_us = 0; /* the sim's large arrays only (gpu/sim.c) */
    h->call_us = 0;
    h->first_launch_us = 0; /* a machine's: model_params_for_device */
    h->reorder_us = 0; /* none unless the machine has it (a profile's table fit) */
    h->blocking_us = 0; /* the sim's (gpu/sim.c); a prediction's basis has none */
    h->lead_us = 0;     /* the sim's (gpu/sim.c) */
}

void model_params_for_device(const device_info_t *dev, model_device_t *d, model_host_t *h) {
    model_default_device(d);
    model_default_host(h);
    d->copy_engines = dev->async_engines > 0 ? dev->async_engines : 2;
    d->sm_count = dev->sm_count;
    d->max_threads_per_sm = dev->max_threads_per_sm;
    d->max_blocks_per_sm = dev->max_blocks_per_sm;
    if (dev->calib.valid && dev->calib.h2d_gbps > 0 && dev->calib.bidir_gbps > 0)
        d->bidir_derate = fmin(1.0, dev->calib.bidir_gbps / dev->calib.h2d_gbps);
    d->bidir_copy_us = plan_bidir_copy_us(&dev->calib, d->bidir_derate);
    d->copy_switch_us = dev->calib.copy_switch_us;
    d->host_copy_gbps = dev->calib.host_copy_gbps; /* compute_rates uses them only where > 0 */
    d->host_h2d_gbps = dev->calib.host_h2d_gbps;
    if (dev->calib.copy_submit_us > 0)
        h->copy_submit_us = dev->calib.copy_submit_us;
    if (dev->calib.kernel_launch_us > 0)
        h->kernel_launch_us = dev->calib.kernel_launch_us;
    h->reorder_us = dev->calib.issue_reorder_us > 0 ? dev->calib.issue_reorder_us : MODEL_REORDER_UNMEASURED_US;
    h->first_launch_us = MODEL_FIRST_LAUNCH_US;
}

/* When op i's completion is visible to op `to`, which depends on it. A pre-Hyper-Q run
 * of back-to-back kernels signals other work only when the run ends; a kernel of the
 * same run follows its predecessor at once (else the run waits for its own end). */
static double signal_time(const sim_t *s, int i, int to) {
    const op_state_t *o = &s->st[i];
    if (!o->done)
        return NEVER;
    if (o->batch_last >= 0 && o->batch_last != i && s->st[to].batch_last != o->batch_last) {
        const op_state_t *last = &s->st[o->batch_last];
        return last->done ? last->end : NEVER;
    }
    return o->end;
}

static bool legacy_all_before_done(const sim_t *s, size_t i) {
    const model_op_t *op = &s->in->ops[i];
    for (size_t j = 0; j < i; j++) {
        const model_op_t *pj = &s->in->ops[j];
        if (!plan_is_device_op(pj->kind) || pj->device != op->device || pj->non_blocking_stream)
            continue;
        if (signal_time(s, (int)j, (int)i) > s->now + EPS)
            return false;
    }
    return true;
}

/* The earliest time op i's dependencies let it start (NEVER while one is not done). */
static double ready_time(const sim_t *s, size_t i) {
    const op_state_t *o = &s->st[i];
    const model_op_t *op = &s->in->ops[i];
    if (!o->issued)
        return NEVER;
    double t = o->submit, sig;
    if (o->prev_stream >= 0) {
        if ((sig = signal_time(s, o->prev_stream, (int)i)) == NEVER)
            return NEVER;
        t = fmax(t, sig + op->gap_us);
    }
    if (o->event_src >= 0) {
        if ((sig = signal_time(s, o->event_src, (int)i)) == NEVER)
            return NEVER;
        t = fmax(t, sig + op->gap_us);
    }
    if (o->legacy_barrier >= 0) {
        if ((sig = signal_time(s, o->legacy_barrier, (int)i)) == NEVER)
            return NEVER;
        t = fmax(t, sig);
    }
    if (op->stream == PLAN_STREAM_DEFAULT && s->in->legacy_default && !legacy_all_before_done(s, i))
        return NEVER;
    return t;
}

static bool deps_done(const sim_t *s, size_t i) {
    return ready_time(s, i) <= s->now + EPS;
}

/* Put op i at the tail of queue q. */
static void enqueue(sim_t *s, int i, int q) {
    s->st[i].queue = q;
    if (s->queue_tail[q] >= 0)
        s->queue_next[s->queue_tail[q]] = i;
    if (s->queue_head[q] < 0) /* empty, or all it held has left (a kernel put in at launch) */
        s->queue_head[q] = i;
    s->queue_tail[q] = i;
}

/* Channel pools: the channel the driver puts copy or kernel i in as the host issues it: a
 * channel of its pool (its direction's copy channels, or the kernel channels) that is idle
 * if there is one, else the least recently used. A kernel channel is idle when it has taken
 * in all its kernels (none waits in it), and among several the one whose last kernel ended
 * longest ago goes first; a copy channel when its last copy has ended, and among several
 * the least recently used. (Lent H100, driver 580, CUPTI's channel ids and call times.
 * Kernels, 2^25 v1/v2 pipelines of 32-128 streams: 1,675 of 1,687 launches made while such
 * a channel existed went to one; 95-99% of the others went to the least recently used; the
 * choice among several idle ones fits 82-95% of all launches this way, CUDA's own work
 * between reps not being in the records. Copies, 2^25 async_v1 x128, 42 reps (GPU-bdb97acb,
 * 2026-11-27): every one of the 156 H2Ds that broke the channels' turn went to a channel
 * whose last copy had ended, 1,158 of the 1,216 issued while one had, and where several
 * had, the least recently used of them; the D2Hs, issued while their channels still hold
 * copies waiting on kernels, keep the turn, 5,370 of 5,372.) Copies had taken their
 * direction's channels strictly in turn; the H2D channels' turn then never changed, and the
 * sim ran 2^25 async_v1 x128 8% quick on every kept table (docs/METHOD.md). */
static void launch_channel(sim_t *s, int i) {
    const model_op_t *op = &s->in->ops[i];
    bool copy = is_copy(op->kind);
    int base = op->device * s->per_dev, pick = -1;
    int first = copy ? base + (op->kind == PLAN_D2H) * s->copy_channels : base + 2 * s->copy_channels;
    int count = copy ? s->copy_channels : s->kernel_channels;
    double pick_key = 0;
    bool pick_idle = false;
    for (int c = 0; c < count; c++) {
        int q = first + c, last = s->chan_last[q];
        bool idle = s->queue_head[q] < 0 && (!copy || last < 0 || s->st[last].done);
        /* a kernel channel, idle: when its last kernel ended (one still running: later than
         * any that ended); else, and a copy channel either way: when it was last used */
        double key = !idle || copy ? (double)s->chan_used[q]
                     : last < 0    ? -NEVER
                     : s->st[last].done ? s->st[last].end
                                        : NEVER;
        if (pick < 0 || (idle && !pick_idle) || (idle == pick_idle && key < pick_key))
            pick = q, pick_idle = idle, pick_key = key;
    }
    s->chan_last[pick] = i;
    s->chan_used[pick] = s->launches++;
    enqueue(s, i, pick);
}

static int prepare(sim_t *s, sl_error_t *err) {
    const model_input_t *in = s->in;
    size_t n = in->count;
    int conns = in->dev.connections > 0 ? in->dev.connections : 1;
    bool hyperq = conns > 1;
    s->nengines = in->dev.copy_engines >= 2 ? 2 : 1;
    int ndev = in->devices > 0 ? in->devices : 1;
    /* queues: Hyper-Q: connections per device (+1 for the default stream);
     *         pre-Hyper-Q: one per engine (copy engines + compute) per device */
    int per_dev = hyperq ? conns + 1 : s->nengines + 1;
    if (hyperq && in->dev.channel_pools) {
        s->kernel_channels = conns;
        s->copy_channels = model_copy_channels(&in->dev);
        per_dev = 2 * s->copy_channels + s->kernel_channels + 1;
    }
    s->per_dev = per_dev;
    s->nqueues = per_dev * ndev;
    s->st = calloc(n ? n : 1, sizeof *s->st);
    s->queue_head = malloc((size_t)s->nqueues * sizeof(int));
    s->queue_next = malloc((n ? n : 1) * sizeof(int));
    s->queue_tail = malloc((size_t)s->nqueues * sizeof(int));
    s->chan_last = malloc((size_t)s->nqueues * sizeof(int));
    s->chan_used = malloc((size_t)s->nqueues * sizeof(long));
    size_t neng = (size_t)(s->nengines * ndev);
    s->engine_fifo = malloc(neng * (n ? n : 1) * sizeof(int));
    s->engine_head = calloc(neng, sizeof(size_t));
    s->engine_tail = calloc(neng, sizeof(size_t));
    s->engine_running = malloc(neng * sizeof(int));
    s->engine_freed = malloc(neng * sizeof(double));
    s->engine_last = malloc(neng * sizeof(int));
    s->engine_chan = malloc(neng * sizeof(int));
    s->active = malloc((n ? n : 1) * sizeof(int));
    /* last op per (device, stream): streams are small ints; default stream uses slot 0 */
    int nslots = SPEC_MAX_STREAMS + 2;
    int *last_in_stream = malloc((size_t)ndev * (size_t)nslots * sizeof(int));
    int *last_record = malloc((size_t)(in->events > 0 ? in->events : 1) * sizeof(int));
    int *last_legacy = malloc((size_t)ndev * sizeof(int));
    if (!s->st || !s->queue_head || !s->queue_next || !s->queue_tail || !s->chan_last || !s->chan_used || !s->engine_fifo || !s->engine_head ||
        !s->engine_tail || !s->engine_running || !s->engine_freed || !s->engine_last || !s->engine_chan || !s->active || !last_in_stream || !last_record || !last_legacy) {
        free(last_in_stream); free(last_record); free(last_legacy);
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory in the model");
    }
    for (int q = 0; q < s->nqueues; q++) {
        s->queue_head[q] = s->queue_tail[q] = s->chan_last[q] = -1;
        s->chan_used[q] = -1;
    }
    for (size_t e = 0; e < neng; e++) {
        s->engine_running[e] = -1;
        s->engine_freed[e] = -NEVER;
        s->engine_last[e] = -1;
        s->engine_chan[e] = -1;
    }
    for (int i = 0; i < ndev * nslots; i++)
        last_in_stream[i] = -1;
    for (int i = 0; i < (in->events > 0 ? in->events : 1); i++)
        last_record[i] = -1;
    for (int d = 0; d < ndev; d++)
        last_legacy[d] = -1;

    int rc = SL_OK;
    int run_start = -1; /* pre-Hyper-Q: first kernel of the current back-to-back run */
    int run_dev = -1;
    for (size_t i = 0; i < n && rc == SL_OK; i++) {
        const model_op_t *op = &in->ops[i];
        op_state_t *o = &s->st[i];
        o->start = o->end = NEVER;
        o->prev_stream = o->event_src = o->legacy_barrier = o->batch_last = -1;
        o->engine = o->queue = -1;
        s->queue_next[i] = -1;
        if (op->device < 0 || op->device >= ndev) {
            rc = sl_error_set(err, SL_E_INVALID, "device", "op %zu names device %d of %d", i, op->device, ndev);
            break;
        }
        if (op->stream < PLAN_STREAM_DEFAULT || op->stream >= SPEC_MAX_STREAMS) {
            rc = sl_error_set(err, SL_E_INVALID, "stream", "op %zu names stream %d", i, op->stream);
            break;
        }
        if (op->wait_event >= in->events || op->record_event >= in->events) {
            rc = sl_error_set(err, SL_E_INVALID, "event", "op %zu names an event past %d", i, in->events);
            break;
        }
        if (!(op->alone_us >= 0) || !isfinite(op->alone_us) || !(op->gap_us >= 0) || !isfinite(op->gap_us)) {
            rc = sl_error_set(err, SL_E_INVALID, "ops", "op %zu has a negative or unknown duration", i);
            break;
        }
        o->remaining = op->alone_us;
        if (!plan_is_device_op(op->kind)) {
            if (op->kind != PLAN_KERNEL)
                run_start = -1;
            continue;
        }
        int slot = op->device * nslots + op->stream + 1;
        o->prev_stream = last_in_stream[slot];
        last_in_stream[slot] = (int)i;
        if (op->wait_event >= 0)
            o->event_src = last_record[op->wait_event];
        if (op->record_event >= 0)
            last_record[op->record_event] = (int)i;
        if (op->stream == PLAN_STREAM_DEFAULT && in->legacy_default)
            last_legacy[op->device] = (int)i;
        else if (!op->non_blocking_stream)
            o->legacy_barrier = last_legacy[op->device];
        if (is_copy(op->kind))
            o->engine = op->device * s->nengines + (s->nengines == 2 && op->kind == PLAN_D2H ? 1 : 0);
        if (op->kind == PLAN_KERNEL) {
            int bps = 1;
            if (op->threads_per_block > 0) {
                int by_threads = in->dev.max_threads_per_sm / op->threads_per_block;
                bps = by_threads < in->dev.max_blocks_per_sm ? by_threads : in->dev.max_blocks_per_sm;
                if (bps < 1) bps = 1;
            }
            double capacity = (double)in->dev.sm_count * bps;
            double blocks = op->blocks > 0 ? (double)op->blocks : capacity;
            o->demand = capacity > 0 ? fmin(1.0, blocks / capacity) : 1.0;
            /* what it uses of the GPU's throughput alone, where its work at full
             * throughput is known; at least one block's share */
            if (op->sat_us > 0 && op->alone_us > 0 && capacity > 0)
                o->demand = fmax(1.0 / capacity, fmin(1.0, op->sat_us / op->alone_us));
            if (!hyperq) {
                if (run_start < 0 || run_dev != op->device)
                    run_start = (int)i, run_dev = op->device;
                for (int k = run_start; k <= (int)i; k++)
                    if (in->ops[k].kind == PLAN_KERNEL)
                        s->st[k].batch_last = (int)i;
            }
        } else {
            run_start = -1;
        }
        int q;
        if (s->copy_channels > 0) {
            /* channel pools: a copy or kernel takes its channel when the host issues it
             * (launch_channel), from its pool over the whole plan, not per stream; the
             * default stream keeps a queue of its own */
            q = op->stream == PLAN_STREAM_DEFAULT ? op->device * per_dev + per_dev - 1 : -1;
        } else if (hyperq)
            q = op->device * (conns + 1) + (op->stream == PLAN_STREAM_DEFAULT ? conns : op->stream % conns);
        else
            q = op->device * (s->nengines + 1) + (op->kind == PLAN_KERNEL ? s->nengines : o->engine % s->nengines);
        if (q >= 0)
            enqueue(s, (int)i, q);
    }
    free(last_in_stream);
    free(last_record);
    free(last_legacy);
    return rc;
}

static void sim_free(sim_t *s) {
    free(s->st);
    free(s->queue_head);
    free(s->queue_tail);
    free(s->chan_last);
    free(s->chan_used);
    free(s->queue_next);
    free(s->engine_fifo);
    free(s->engine_head);
    free(s->engine_tail);
    free(s->engine_running);
    free(s->engine_freed);
    free(s->engine_last);
    free(s->engine_chan);
    free(s->active);
}

/* Channel pools: is queue q one of a device's copy channels? */
static bool is_copy_channel(const sim_t *s, int q) {
    return s->copy_channels > 0 && q % s->per_dev < 2 * s->copy_channels;
}

/* Channel pools: the copy engine e serves its channels one at a time: it stays with the
 * channel it served last while that channel's head is ready, else takes the next channel
 * in turn whose head is ready (measured on the lent H100 by CUPTI's channel ids: with all
 * H2Ds queued, the engine drains one channel before the next). The taken head leaves its
 * channel; -1 when no head is ready. */
static int take_from_channels(sim_t *s, int e) {
    if (s->copy_channels <= 0)
        return -1;
    int dev = e / s->nengines, le = e % s->nengines;
    int first = dev * s->per_dev + (s->nengines == 2 ? le * s->copy_channels : 0);
    int count = s->nengines == 2 ? s->copy_channels : 2 * s->copy_channels;
    int cur = s->engine_chan[e] >= 0 ? s->engine_chan[e] - first : 0;
    for (int k = 0; k < count; k++) {
        int q = first + (cur + k) % count; /* k == 0: the channel it served last */
        int h = s->queue_head[q];
        if (h < 0 || !deps_done(s, (size_t)h))
            continue;
        s->queue_head[q] = s->queue_next[h];
        s->st[h].dispatched = true;
        s->engine_chan[e] = q;
        return h;
    }
    return -1;
}

/* The share of copy_switch_us a copy of `bytes` pays: its bytes over the piece the
 * calibration measured it with, at most all of it. */
static double switch_share(uint64_t bytes) {
    double f = (double)bytes / CAL_SWITCH_PIECE_BYTES;
    return f < 1 ? f : 1;
}

/* Dispatch every queue head whose dependencies are met, in issue order. */
static bool dispatch_ready(sim_t *s) {
    bool any = false, progress = true;
    while (progress) {
        progress = false;
        int best = -1;
        for (int q = 0; q < s->nqueues; q++) {
            int h = s->queue_head[q];
            if (h >= 0 && !is_copy_channel(s, q) && deps_done(s, (size_t)h) && (best < 0 || h < best))
                best = h;
        }
        if (best < 0)
            break;
        op_state_t *o = &s->st[best];
        o->dispatched = true;
        s->queue_head[o->queue] = s->queue_next[best];
        if (o->engine >= 0) {
            size_t base = (size_t)o->engine * s->in->count;
            s->engine_fifo[base + s->engine_tail[o->engine]++] = best;
        } else {
            o->running = true; /* kernels: allocation decides when work starts */
            s->active[s->nactive++] = best;
        }
        progress = any = true;
    }
    /* start copies on idle engines */
    int neng = s->nengines * (s->in->devices > 0 ? s->in->devices : 1);
    for (int e = 0; e < neng; e++) {
        if (s->engine_running[e] >= 0)
            continue;
        int i;
        if (s->engine_head[e] != s->engine_tail[e])
            i = s->engine_fifo[(size_t)e * s->in->count + s->engine_head[e]++];
        else if ((i = take_from_channels(s, e)) < 0)
            continue;
        s->engine_running[e] = i;
        s->st[i].running = true;
        s->active[s->nactive++] = i;
        s->st[i].start = s->now;
        /* from another stream than the copy before it on this engine: the engine fetches
         * from another channel (copy_switch_us, calibrated on CAL_SWITCH_PIECE_BYTES; a
         * smaller copy pays its share by its bytes, so the seeds' 2^22 pipelines of 128 and
         * 256 streams, every op queued before any runs, take 0.96 and 1.51 ms on the
         * simulated H100 where a lent H100 took 0.91 and 1.34-1.43 (1.04 and 1.70 with the
         * whole cost on every copy; bench/probe_small.cu) */
        int last = s->engine_last[e];
        if (s->in->dev.copy_switch_us > 0 && last >= 0 && s->in->ops[last].stream != s->in->ops[i].stream)
            s->st[i].remaining += s->in->dev.copy_switch_us * switch_share(s->in->ops[i].bytes);
        s->engine_last[e] = i;
        /* queued behind the copy that just ended on this engine: its fixed setup ran
         * while that copy moved data, so only its transfer is left */
        if (s->in->dev.copy_overlap_us > 0 && s->engine_freed[e] >= s->now - EPS &&
            ready_time(s, (size_t)i) < s->now - EPS)
            s->st[i].remaining = fmax(s->st[i].remaining - s->in->dev.copy_overlap_us, 0.5 * s->st[i].remaining);
        any = true;
    }
    /* a copy that starts while the other direction copies (or as it starts) pays the
     * both-ways fixed cost: bidir_copy_us more */
    for (int e = 0; s->in->dev.bidir_copy_us > 0 && s->nengines == 2 && e < neng; e++) {
        int i = s->engine_running[e], j = s->engine_running[e ^ 1];
        if (i >= 0 && j >= 0 && !s->st[i].bidir_charged && s->st[i].start >= s->now - EPS) {
            s->st[i].remaining += s->in->dev.bidir_copy_us;
            s->st[i].bidir_charged = true;
        }
    }
    return any;
}

/* Each direction's speed while both copy, over its speed alone: the two lose
 * 2 x (1 - bidir_derate) between them, the D2H bidir_d2h_share of it. */
static void bidir_rates(const model_device_t *d, double *h2d, double *d2h) {
    double loss = 2 * (1 - d->bidir_derate);
    double share = d->bidir_d2h_share > 0 && d->bidir_d2h_share < 1 ? d->bidir_d2h_share : 0.5;
    *h2d = fmax(0.05, fmin(1.0, 1 - loss * (1 - share)));
    *d2h = fmax(0.05, fmin(1.0, 1 - loss * share));
}

/* A copy's speed, over its speed alone, where the link gives it `link` of what it moves
 * alone: a copy part of whose time its source paces (paced_us) moves alone at
 * (alone_us - paced_us) / alone_us of the link's speed, and the link slows it only below
 * that. */
static double link_paced(const model_op_t *op, double link) {
    if (!(op->paced_us > 0) || !(op->alone_us > op->paced_us))
        return link;
    return fmin(1.0, link * op->alone_us / (op->alone_us - op->paced_us));
}

/* Rates of progress (alone-µs per µs) of running copies and kernels (rate[] is
 * indexed by op; only active ops' entries are meaningful). */
static void compute_rates(const sim_t *s, double *rate) {
    const model_input_t *in = s->in;
    int ndev = in->devices > 0 ? in->devices : 1;
    double free_frac[SPEC_MAX_DEVICES];
    for (int d = 0; d < ndev && d < SPEC_MAX_DEVICES; d++) {
        free_frac[d] = 1.0;
        /* copies: both directions busy -> each at its both-ways speed */
        int h = s->engine_running[d * s->nengines];
        int g = s->nengines == 2 ? s->engine_running[d * s->nengines + 1] : -1;
        double h2d = 1.0, d2h = 1.0;
        if (h >= 0 && g >= 0)
            bidir_rates(&in->dev, &h2d, &d2h);
        if (h >= 0) rate[h] = link_paced(&in->ops[h], h2d);
        if (g >= 0) rate[g] = link_paced(&in->ops[g], d2h);
    }
    /* Copies of several devices at once share the host side: where what they would move
     * together passes host_copy_gbps, it is split between the directions as the calibration
     * saw it split (host_h2d_gbps of it to H2D), a direction asking less than its part
     * leaving the rest to the other; the copies of a direction slow by the same share. */
    if (in->dev.host_copy_gbps > 0 && ndev > 1) {
        double want[2] = {0, 0}; /* GB/s asked: H2D, D2H */
        int busy_devices = 0;
        for (int d = 0; d < ndev; d++) {
            bool busy = false;
            for (int e = 0; e < s->nengines; e++) {
                int i = s->engine_running[d * s->nengines + e];
                if (i < 0 || !(in->ops[i].alone_us > 0))
                    continue;
                want[in->ops[i].kind == PLAN_D2H] += rate[i] * (double)in->ops[i].bytes / (in->ops[i].alone_us * 1e3);
                busy = true;
            }
            busy_devices += busy;
        }
        double cap = in->dev.host_copy_gbps;
        if (busy_devices > 1 && want[0] + want[1] > cap) {
            double f = in->dev.host_h2d_gbps > 0 && in->dev.host_h2d_gbps < cap ? in->dev.host_h2d_gbps / cap : 0.5;
            double got[2];
            if (want[0] <= f * cap) { /* H2D asks less than its part */
                got[0] = want[0];
                got[1] = cap - want[0];
            } else if (want[1] <= (1 - f) * cap) {
                got[1] = want[1];
                got[0] = cap - want[1];
            } else {
                got[0] = f * cap;
                got[1] = (1 - f) * cap;
            }
            for (int k = 0; k < ndev * s->nengines; k++) {
                int i = s->engine_running[k];
                int dir = i >= 0 && in->ops[i].kind == PLAN_D2H;
                if (i >= 0 && want[dir] > 0)
                    rate[i] *= fmin(1.0, got[dir] / want[dir]);
            }
        }
    }
    /* kernels in dispatch order take what they ask of what is left */
    for (size_t a = 0; a < s->nactive; a++) {
        int i = s->active[a];
        const op_state_t *o = &s->st[i];
        if (in->ops[i].kind != PLAN_KERNEL)
            continue;
        int d = in->ops[i].device;
        double alloc = fmin(o->demand, free_frac[d]);
        if (alloc < EPS) {
            rate[i] = 0;
            continue;
        }
        free_frac[d] -= alloc;
        rate[i] = alloc / o->demand;
    }
}

/* The share of a rep's first-call extra its first call of this kind pays (model.h). */
static double first_share(plan_kind_t k) {
    return k == PLAN_H2D ? MODEL_FIRST_SHARE_H2D : k == PLAN_KERNEL ? MODEL_FIRST_SHARE_KERNEL : MODEL_FIRST_SHARE_D2H;
}

/* The simulation; host_done (per input op, or NULL) gets the host time at which the op's
 * issue returned (a blocking op's and a PLAN_SYNC's: when the host's wait ended). */
static int simulate(const model_input_t *in, timeline_t *tl, double *host_done, sl_error_t *err) {
    sim_t s = {.in = in};
    memset(tl, 0, sizeof *tl);
    int rc = prepare(&s, err);
    double *rate = malloc((in->count ? in->count : 1) * sizeof *rate);
    if (rc == SL_OK && !rate)
        rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory in the model");
    if (rc) {
        free(rate);
        sim_free(&s);
        return rc;
    }
    const model_host_t *hc = &in->host;
    size_t n = in->count, hi = 0, done_count = 0, device_ops = 0;
    for (size_t i = 0; i < n; i++)
        if (plan_is_device_op(in->ops[i].kind))
            device_ops++;
    double host_t = 0;
    /* breadth-first issue (model_host_t.reorder_us): the last copy or kernel the host issued
     * since its last synchronise (-1: none yet), and where that synchronise's rep starts */
    long last_call = -1, rep_first = 0;
    bool lead_due = true; /* the next device call is the first since a synchronise (model_host_t.lead_us) */
    int waiting = -2; /* -2: not waiting; -1: waiting for all (sync); >= 0: for that op */
    size_t issued_device_ops = 0, sync_op = 0;
    s.now = 0;
    for (int guard = 0;; guard++) {
        /* 1. the host issues until it must wait */
        while (waiting == -2 && hi < n) {
            const model_op_t *op = &in->ops[hi];
            op_state_t *o = &s.st[hi];
            if (host_t > s.now + EPS)
                break; /* it is still busy: come back at host_t */
            o->call_start = host_t;
            double cost;
            switch (op->kind) {
            case PLAN_H2D: case PLAN_D2H: cost = hc->copy_submit_us; break;
            case PLAN_KERNEL: cost = hc->kernel_launch_us; break;
            case PLAN_QUERY: cost = hc->query_us; break;
            default: cost = 0; break;
            }
            if (op->host_us >= 0 && op->kind != PLAN_HOST)
                cost = op->host_us;
            if (plan_is_device_op(op->kind)) {
                cost += op->first_of_kind ? hc->first_us * first_share(op->kind) : hc->call_us;
                if (op->first_of_kind && op->kind == PLAN_KERNEL)
                    cost += hc->first_launch_us;
                if (lead_due)
                    cost += hc->lead_us;
                lead_due = false;
                if (o->prev_stream >= rep_first && o->prev_stream != last_call)
                    cost += hc->reorder_us;
                last_call = (long)hi;
            }
            if (op->wait_event >= 0) cost += hc->event_us;
            if (op->record_event >= 0) cost += hc->event_us;
            if (op->end_event) cost += hc->event_us;
            if (op->kind == PLAN_HOST) {
                o->start = host_t;
                o->end = host_t + op->alone_us;
                o->done = o->issued = o->dispatched = true;
                host_t = o->end;
            } else if (op->kind == PLAN_SYNC) {
                host_t += op->stream_waits * hc->event_us;
                o->issued = true;
                waiting = -1;
                sync_op = hi;
                last_call = -1;
                rep_first = (long)hi + 1;
                lead_due = true;
            } else {
                if (o->queue < 0 && s.copy_channels > 0 && plan_is_device_op(op->kind))
                    launch_channel(&s, (int)hi);
                host_t += cost;
                o->issued = true;
                o->submit = o->call_end = host_t;
                issued_device_ops += plan_is_device_op(op->kind);
                if (host_done)
                    host_done[hi] = host_t;
                if (plan_is_device_op(op->kind) && op->blocking)
                    waiting = (int)hi;
            }
            hi++;
        }
        /* 2. the device starts what it can */
        while (dispatch_ready(&s)) {
        }
        /* 3. a waiting host resumes when its condition holds: a synchronise when all it
         * issued is done (repetitions: ops issued after it are not waited for) */
        if (waiting == -1 && done_count == issued_device_ops) {
            host_t = fmax(host_t, s.now) + hc->sync_us;
            if (host_done)
                host_done[sync_op] = host_t;
            waiting = -2;
            continue;
        }
        if (waiting >= 0 && s.st[waiting].done) {
            host_t = fmax(host_t, s.st[waiting].end + hc->blocking_us);
            s.st[waiting].call_end = host_t;
            if (host_done) /* a blocking op's issue returns once it is done */
                host_done[waiting] = host_t;
            waiting = -2;
            continue;
        }
        if (hi >= n && waiting == -2 && done_count == device_ops)
            break;
        /* 4. the next event */
        compute_rates(&s, rate);
        double next = NEVER;
        if (waiting == -2 && hi < n && host_t > s.now + EPS)
            next = host_t;
        for (int q = 0; q < s.nqueues; q++) { /* a queue head waiting for its time to come */
            int h = s.queue_head[q];
            double rt = h >= 0 ? ready_time(&s, (size_t)h) : NEVER;
            if (rt > s.now + EPS && rt < next)
                next = rt;
        }
        for (size_t a = 0; a < s.nactive; a++) {
            int i = s.active[a];
            if (rate[i] > EPS) {
                double t = s.now + s.st[i].remaining / rate[i];
                if (t < next) next = t;
            }
        }
        if (next == NEVER || guard > 50000000) {
            rc = sl_error_set(err, SL_E_INTERNAL, "", "the model stalled at %.3f us with %zu of %zu ops done",
                              s.now, done_count, device_ops);
            break;
        }
        /* 5. advance; where doubles cannot tell next from now (durations of hours next to
         * microseconds), finish what was about to finish rather than spin */
        bool stuck = !(next > s.now);
        if (stuck)
            next = s.now;
        double dt = next - s.now;
        s.now = next;
        for (size_t a = 0; a < s.nactive; a++) {
            int i = s.active[a];
            op_state_t *o = &s.st[i];
            if (rate[i] <= EPS && o->remaining > 0)
                continue;
            if (o->start == NEVER)
                o->start = s.now - dt;
            o->remaining -= rate[i] * dt;
            if (o->remaining <= 1e-7 * (1.0 + in->ops[i].alone_us) ||
                (stuck && rate[i] > EPS && s.now + o->remaining / rate[i] <= s.now)) {
                o->remaining = 0;
                o->done = true;
                o->running = false;
                o->end = s.now;
                done_count++;
                if (o->engine >= 0) {
                    s.engine_running[o->engine] = -1;
                    s.engine_freed[o->engine] = s.now;
                }
            }
        }
        /* drop finished ops from the active list, keeping its order */
        size_t kept = 0;
        for (size_t a = 0; a < s.nactive; a++)
            if (!s.st[s.active[a]].done)
                s.active[kept++] = s.active[a];
        s.nactive = kept;
    }
    if (rc == SL_OK) {
        double total = host_t;
        for (size_t i = 0; i < n && rc == SL_OK; i++) {
            const model_op_t *op = &in->ops[i];
            const op_state_t *o = &s.st[i];
            if (!plan_is_device_op(op->kind) && op->kind != PLAN_HOST)
                continue;
            op_event_t ev = {
                .device = op->device,
                .stream = op->kind == PLAN_HOST ? -1 : (op->stream < 0 ? 0 : op->stream),
                .chunk = op->chunk,
                .op = op->kind == PLAN_H2D ? OP_H2D : op->kind == PLAN_KERNEL ? OP_KERNEL
                      : op->kind == PLAN_D2H ? OP_D2H : OP_HOST,
                .start_us = o->start,
                .end_us = o->end,
                .bytes = is_copy(op->kind) ? op->bytes : 0,
                .call = op->kind != PLAN_HOST,
                .call_start_us = op->kind != PLAN_HOST ? o->call_start : 0,
                .call_end_us = op->kind != PLAN_HOST ? o->call_end : 0,
            };
            if (o->end > total)
                total = o->end;
            if (timeline_push(tl, &ev))
                rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory in the model");
        }
        tl->total_us = total;
    }
    if (rc)
        timeline_free(tl);
    free(rate);
    sim_free(&s);
    return rc;
}

void model_mark_first_of_kind(model_input_t *in) {
    bool seen[PLAN_SYNC + 1] = {false};
    for (size_t i = 0; i < in->count; i++) {
        plan_kind_t k = in->ops[i].kind;
        if ((k == PLAN_H2D || k == PLAN_KERNEL || k == PLAN_D2H) && !seen[k])
            in->ops[i].first_of_kind = seen[k] = true;
    }
}

int model_simulate(const model_input_t *in, timeline_t *tl, sl_error_t *err) {
    return simulate(in, tl, NULL, err);
}

int model_simulate_reps(const model_input_t *in, int warmup, int reps, timeline_t *tls, double *issue_us,
                        sl_error_t *err) {
    if (warmup < 0 || reps < 1)
        return sl_error_set(err, SL_E_INVALID, "reps", "repetitions must be at least 1 and warm-ups 0 or more");
    if (!in->count || in->ops[in->count - 1].kind != PLAN_SYNC)
        return sl_error_set(err, SL_E_INVALID, "ops", "a repeated plan ends with a synchronise");
    size_t per = in->count, runs = (size_t)warmup + (size_t)reps, n = per * runs, per_tl = 0;
    for (size_t i = 0; i < per; i++)
        per_tl += plan_is_device_op(in->ops[i].kind) || in->ops[i].kind == PLAN_HOST;
    model_input_t all = *in;
    model_op_t *ops = malloc(n * sizeof *ops);
    double *host_done = calloc(n, sizeof *host_done);
    if (!ops || !host_done) {
        free(ops);
        free(host_done);
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory in the model");
    }
    for (size_t r = 0; r < runs; r++)
        memcpy(ops + r * per, in->ops, per * sizeof *ops);
    memset(tls, 0, (size_t)reps * sizeof *tls);
    all.ops = ops;
    all.count = n;
    timeline_t tl;
    int rc = simulate(&all, &tl, host_done, err);
    double start = 0;
    for (size_t r = 0; rc == SL_OK && r < runs; r++) {
        double end = host_done[(r + 1) * per - 1];
        if (r >= (size_t)warmup) {
            timeline_t *t = &tls[r - (size_t)warmup];
            for (size_t i = r * per_tl; i < (r + 1) * per_tl && rc == SL_OK; i++) {
                op_event_t ev = tl.ops[i];
                ev.start_us -= start;
                ev.end_us -= start;
                if (ev.call) {
                    ev.call_start_us -= start;
                    ev.call_end_us -= start;
                }
                if (timeline_push(t, &ev))
                    rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory in the model");
            }
            t->total_us = end - start;
            if (issue_us) { /* from the rep's start to the return of its last device op's issue */
                double last = start;
                for (size_t i = r * per; i < (r + 1) * per; i++)
                    if (plan_is_device_op(all.ops[i].kind))
                        last = fmax(last, host_done[i]);
                issue_us[r - (size_t)warmup] = last - start;
            }
        }
        start = end;
    }
    if (rc)
        for (size_t r = (size_t)warmup; r < runs; r++)
            timeline_free(&tls[r - (size_t)warmup]);
    if (tl.ops)
        timeline_free(&tl);
    free(ops);
    free(host_done);
    return rc;
}
