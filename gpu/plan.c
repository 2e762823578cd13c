/* plan.c — the issue order of each variant (see plan.h), and the proof that a plan
 * covers every element exactly once. The orders are the seeds':
 *   sequential      H2D, kernel, D2H on the default stream, cudaMemcpy (host waits)
 *   async_v1        per chunk, in stream chunk % streams: H2D, kernel, D2H (depth-first)
 *   round_robin     the same depth-first order with chunks > streams (003's chunking)
 *   async_v2        all H2D, then all kernels, then all D2H (breadth-first)
 *   engine_streams  one stream per engine (H2D, compute, D2H), chunks chained by events
 *   host_overlap    a GPU share issued async, then the host's share (or sync first)
 *   multi_gpu       the array split over devices, async_v1 within each, issued interleaved
 *   zero_copy       per chunk, in stream chunk % streams: a kernel on the mapped host array */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void plan_chunk_range(uint64_t size, int n, int c, uint64_t *offset, uint64_t *count) {
    uint64_t base = size / (uint64_t)n, extra = size % (uint64_t)n, uc = (uint64_t)c;
    *offset = uc * base + (uc < extra ? uc : extra);
    *count = base + (uc < extra ? 1 : 0);
}

/* weights before chunk c of n with a ramp of r: 2^-r .. 2^-1, then 1s, then 2^-1 .. 2^-r */
static double ramp_prefix(int n, int r, int c) {
    if (c <= r)
        return ldexp(1.0, -r) * (ldexp(1.0, c) - 1.0);
    double up = 1.0 - ldexp(1.0, -r);
    if (c <= n - r)
        return up + (double)(c - r);
    return up + (double)(n - 2 * r) + (1.0 - ldexp(1.0, -(c - (n - r))));
}

void plan_spec_chunk(const spec_t *spec, uint64_t size, int c, uint64_t *offset, uint64_t *count) {
    int n = spec->chunks, r = spec->chunk_ramp;
    if (r <= 0 || 2 * r > n) {
        plan_chunk_range(size, n, c, offset, count);
        return;
    }
    /* boundaries floor(size * W(c) / W(n)): monotone and exact, the last one is size */
    double total = ramp_prefix(n, r, n);
    uint64_t lo = (uint64_t)floor((double)size * ramp_prefix(n, r, c) / total);
    uint64_t hi = c + 1 == n ? size : (uint64_t)floor((double)size * ramp_prefix(n, r, c + 1) / total);
    *offset = lo;
    *count = hi - lo;
}

int plan_blocks_per_sm(const device_info_t *dev, int block_size) {
    int by_threads = block_size > 0 ? dev->max_threads_per_sm / block_size : 1;
    int bps = by_threads < dev->max_blocks_per_sm ? by_threads : dev->max_blocks_per_sm;
    return bps > 0 ? bps : 1;
}

double plan_kernel_ns_per_elem(const spec_t *spec, const device_info_t *dev) {
    if ((unsigned)spec->kernel >= KERNEL__COUNT)
        return 0;
    double ns = dev->calib.kernel_ns_per_elem[spec->kernel];
    if (spec->kernel == KERNEL_COMPUTE)
        ns = dev->calib.compute_base_ns_per_elem + ns * spec->kernel_iters;
    return ns > 0 && isfinite(ns) ? ns : 0;
}

/* An SM runs a kernel at its full throughput from this share of its threads resident (a
 * quarter: 512 of 2048), and in proportion below it. */
#define PLAN_SM_SATURATION 0.25

/* Until 2026-11-27 the sim's fill was the blocks over the GPU's capacity in blocks, so a
 * max-occupancy grid shared by 8 streams (132 blocks of 256 on an H100, one an SM) ran at an
 * eighth of the GPU; the lent H100s and H200s ran async_v1 2^25 x8 with it 2-8% slower than
 * with chunk launches, where the sim made it 11-14% (make bench-wide: +7..+11% against the
 * runs, now -4..0%). The seeds' 40 tables (chunk launches, grids of 64 blocks and up) did not
 * move. */
static double plan_grid_fill(double blocks, const device_info_t *dev, int bps, int threads) {
    double capacity = (double)dev->sm_count * bps, fill = capacity > 0 ? blocks / capacity : 1;
    if (dev->sm_count > 0 && dev->max_threads_per_sm > 0 && blocks > 0) {
        double covered = fmin(blocks, (double)dev->sm_count);
        double per_sm = fmin((double)bps, blocks / covered);
        double occupancy = per_sm * threads / dev->max_threads_per_sm;
        fill = covered / dev->sm_count * fmin(1.0, occupancy / PLAN_SM_SATURATION);
    }
    if (fill > 1) fill = 1;
    if (capacity > 0 && fill < 1.0 / capacity) fill = 1.0 / capacity;
    return fill;
}

double plan_kernel_alone_us(const spec_t *spec, const device_info_t *dev, uint64_t count, double work_us) {
    int bps = plan_blocks_per_sm(dev, spec->block_size);
    double fill = plan_grid_fill((double)plan_kernel_blocks(spec, dev, count), dev, bps, spec->block_size);
    return PLAN_KERNEL_LATENCY_US + work_us / fill;
}

double plan_kernel_start_bound(const spec_t *spec, const device_info_t *dev, uint64_t count, double earliest,
                               double start, double end) {
    double ns = plan_kernel_ns_per_elem(spec, dev);
    if (!(ns > 0) || !(end >= start))
        return start;
    double alone = plan_kernel_alone_us(spec, dev, count, (double)count * ns / 1e3);
    if (end - start > PLAN_START_BOUND_TIMES * alone + PLAN_START_BOUND_SLACK_US)
        return end - alone;
    if (end - start < PLAN_START_BOUND_SHORT * alone)
        return fmin(start, fmax(earliest, end - alone));
    return start;
}

double plan_bidir_copy_us(const calibration_t *c, double derate) {
    /* a queued copy costs copy_setup_us alone; while both directions copy it should cost
     * copy_setup_both_us of real time, and the model runs it at the derate then: what it
     * adds, in alone-µs, is derate x both - alone (none where either is unmeasured) */
    if (!c->valid || c->copy_setup_us <= 0 || c->copy_setup_both_us <= 0 || derate <= 0)
        return 0;
    double extra = derate * c->copy_setup_both_us - c->copy_setup_us;
    return extra > 0 && isfinite(extra) ? extra : 0;
}

void plan_both_ways_split(size_t bytes, double us_h2d, double us_d2h, double h2d_alone, double d2h_alone,
                          double *h2d, double *d2h) {
    double b = (double)bytes / 1e3; /* GB/s x µs */
    *h2d = *d2h = 0;
    if (!(us_h2d > 0) || !(us_d2h > 0) || !(h2d_alone > 0) || !(d2h_alone > 0))
        return;
    double first = fmin(us_h2d, us_d2h), alone_us = fabs(us_h2d - us_d2h);
    double later = (b - (us_h2d <= us_d2h ? d2h_alone : h2d_alone) * alone_us) / first;
    if (!(later > 0) || !isfinite(later))
        return;
    *h2d = us_h2d <= us_d2h ? b / us_h2d : later;
    *d2h = us_h2d <= us_d2h ? later : b / us_d2h;
}

/* The share of the calibrated dirty extra an H2D over an array of `array_mib` pays itself. */
static double dirty_copy_share(double array_mib) {
    double f = (array_mib - 4.0) / 12.0;
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    return 1.0 - f * (1.0 - PLAN_DIRTY_LARGE_SHARE);
}

double plan_dirty_extra_us(const spec_t *spec, const calibration_t *c, uint64_t offset, uint64_t count) {
    if (!(c->dirty_h2d_us_per_mib > 0) || !(c->dirty_cache_mib > 0) || spec->host_memory != HOSTMEM_PINNED)
        return 0;
    double mib = 1024.0 * 1024.0;
    double array = (double)spec->size * sizeof(float) / mib;
    double lo = (double)offset * sizeof(float) / mib, hi = lo + (double)count * sizeof(float) / mib;
    double dirty_lo = fmax(0.0, array - c->dirty_cache_mib);
    double dirty = fmin(hi, array) - fmax(lo, dirty_lo);
    return dirty > 0 ? dirty * c->dirty_h2d_us_per_mib * dirty_copy_share(array) : 0;
}

double plan_copy_start_bound(const calibration_t *c, bool h2d, uint64_t bytes, double dirty_us, bool composed,
                             double earliest, double start, double end) {
    double rate = h2d ? c->h2d_gbps : c->d2h_gbps;
    if (!c->valid || !(rate > 0) || !(c->bidir_gbps > 0))
        return start;
    double setup_both = c->copy_setup_both_us > 0 ? c->copy_setup_both_us : c->copy_setup_us;
    double alone = (double)bytes / (rate * 1e3) + c->copy_setup_us; /* GB/s = 1e3 bytes per µs */
    double both = (double)bytes / (c->bidir_gbps * 1e3) + setup_both;
    if (dirty_us > 0) { /* read at the pace of the CPU's cache, whatever runs beside it */
        alone += dirty_us;
        both = fmax(both, alone);
    }
    double d = end - start;
    if (both < PLAN_COPY_BOUND_MIN * setup_both) /* fixed costs set its time: only a gross misfit */
        return composed && d > PLAN_START_BOUND_TIMES * both + PLAN_START_BOUND_SLACK_US ? fmax(earliest, end - both)
                                                                                          : start;
    if ((composed && d > both * (1 + PLAN_COPY_BOUND_TOL)) || d < alone * (1 - PLAN_COPY_BOUND_FAST))
        return fmax(earliest, end - both);
    return start;
}

uint64_t plan_kernel_blocks(const spec_t *spec, const device_info_t *dev, uint64_t count) {
    uint64_t bs = (uint64_t)spec->block_size;
    uint64_t need = (count + bs - 1) / bs;
    if (spec->launch == LAUNCH_CHUNK)
        return need ? need : 1;
    /* max_occupancy (seed 000): the grid that fills every SM once, shared by the streams
     * as in its `GRID_SIZE / N_STREAMS`; a grid-stride loop covers the rest. */
    uint64_t grid = (uint64_t)dev->sm_count * (uint64_t)plan_blocks_per_sm(dev, spec->block_size);
    /* only the streams that launch kernels share the grid: one for sequential and engine_streams */
    int streams = spec->variant == VARIANT_SEQUENTIAL || spec->variant == VARIANT_ENGINE_STREAMS ? 1
                  : spec->streams > 0 ? spec->streams : 1;
    grid /= (uint64_t)streams;
    if (grid < 1)
        grid = 1;
    return grid < need ? grid : (need ? need : 1);
}

static int plan_push(plan_t *p, plan_kind_t kind, int device, int stream, int chunk, uint64_t offset,
                     uint64_t count, bool blocking) {
    if (p->count == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        plan_op_t *ops = realloc(p->ops, cap * sizeof *ops);
        if (!ops)
            return SL_E_NOMEM;
        p->ops = ops;
        p->cap = cap;
    }
    plan_op_t *op = &p->ops[p->count++];
    *op = (plan_op_t){.kind = kind, .device = device, .stream = stream, .chunk = chunk, .offset = offset,
                      .count = count, .blocking = blocking, .wait_event = -1, .record_event = -1};
    return SL_OK;
}

void plan_free(plan_t *plan) {
    free(plan->ops);
    memset(plan, 0, sizeof *plan);
}

#define PUSH(...)                                  \
    do {                                           \
        if (plan_push(__VA_ARGS__) != SL_OK)       \
            goto nomem;                            \
    } while (0)

/* One device's depth-first pipeline over [base, base+size) in `chunks` chunks. */
static int push_depth_first(plan_t *p, const spec_t *s, int device, uint64_t base, uint64_t size, int chunk0) {
    bool copy_blocks = s->host_memory == HOSTMEM_PAGEABLE;
    for (int c = 0; c < s->chunks; c++) {
        uint64_t off, n;
        plan_spec_chunk(s, size, c, &off, &n);
        int st = c % s->streams;
        PUSH(p, PLAN_H2D, device, st, chunk0 + c, base + off, n, copy_blocks);
        PUSH(p, PLAN_KERNEL, device, st, chunk0 + c, base + off, n, false);
        PUSH(p, PLAN_D2H, device, st, chunk0 + c, base + off, n, copy_blocks);
        if (s->flush == FLUSH_STREAM_QUERY)
            PUSH(p, PLAN_QUERY, device, st, chunk0 + c, 0, 0, false);
    }
    return SL_OK;
nomem:
    return SL_E_NOMEM;
}

static int build_sequential(plan_t *p, const spec_t *s) {
    PUSH(p, PLAN_H2D, 0, PLAN_STREAM_DEFAULT, 0, 0, s->size, true);
    PUSH(p, PLAN_KERNEL, 0, PLAN_STREAM_DEFAULT, 0, 0, s->size, false);
    PUSH(p, PLAN_D2H, 0, PLAN_STREAM_DEFAULT, 0, 0, s->size, true);
    p->streams = 0;
    return SL_OK;
nomem:
    return SL_E_NOMEM;
}

static int build_breadth_first(plan_t *p, const spec_t *s) {
    bool copy_blocks = s->host_memory == HOSTMEM_PAGEABLE;
    static const plan_kind_t phases[3] = {PLAN_H2D, PLAN_KERNEL, PLAN_D2H};
    for (int ph = 0; ph < 3; ph++) {
        for (int c = 0; c < s->chunks; c++) {
            uint64_t off, n;
            plan_spec_chunk(s, s->size, c, &off, &n);
            int st = c % s->streams;
            PUSH(p, phases[ph], 0, st, c, off, n, phases[ph] != PLAN_KERNEL && copy_blocks);
            if (s->flush == FLUSH_STREAM_QUERY)
                PUSH(p, PLAN_QUERY, 0, st, c, 0, 0, false);
        }
    }
    return SL_OK;
nomem:
    return SL_E_NOMEM;
}

static int build_engine_streams(plan_t *p, const spec_t *s) {
    bool copy_blocks = s->host_memory == HOSTMEM_PAGEABLE;
    p->streams = 3; /* 0: H2D engine, 1: compute, 2: D2H engine */
    for (int c = 0; c < s->chunks; c++) {
        uint64_t off, n;
        plan_spec_chunk(s, s->size, c, &off, &n);
        PUSH(p, PLAN_H2D, 0, 0, c, off, n, copy_blocks);
        p->ops[p->count - 1].record_event = 2 * c;
        PUSH(p, PLAN_KERNEL, 0, 1, c, off, n, false);
        p->ops[p->count - 1].wait_event = 2 * c;
        p->ops[p->count - 1].record_event = 2 * c + 1;
        PUSH(p, PLAN_D2H, 0, 2, c, off, n, copy_blocks);
        p->ops[p->count - 1].wait_event = 2 * c + 1;
        if (s->flush == FLUSH_STREAM_QUERY)
            for (int st = 0; st < 3; st++)
                PUSH(p, PLAN_QUERY, 0, st, c, 0, 0, false);
    }
    p->events = 2 * s->chunks;
    return SL_OK;
nomem:
    return SL_E_NOMEM;
}

static int build_zero_copy(plan_t *p, const spec_t *s) {
    p->zero_copy = true;
    for (int c = 0; c < s->chunks; c++) {
        uint64_t off, n;
        plan_spec_chunk(s, s->size, c, &off, &n);
        int st = c % s->streams;
        PUSH(p, PLAN_KERNEL, 0, st, c, off, n, false);
        if (s->flush == FLUSH_STREAM_QUERY)
            PUSH(p, PLAN_QUERY, 0, st, c, 0, 0, false);
    }
    return SL_OK;
nomem:
    return SL_E_NOMEM;
}

static int build_host_overlap(plan_t *p, const spec_t *s, sl_error_t *err) {
    uint64_t host_n = (uint64_t)((double)s->size * s->host_share);
    uint64_t gpu_n = s->size - host_n;
    if (gpu_n < (uint64_t)s->chunks)
        return sl_error_set(err, SL_E_INVALID, "host_share",
                            "host_share %.3f leaves %llu elements for %d GPU chunks", s->host_share,
                            (unsigned long long)gpu_n, s->chunks);
    int rc = push_depth_first(p, s, 0, 0, gpu_n, 0);
    if (rc)
        return rc;
    if (s->sync)
        PUSH(p, PLAN_SYNC, 0, PLAN_STREAM_DEFAULT, 0, 0, 0, true);
    if (host_n > 0)
        PUSH(p, PLAN_HOST, 0, PLAN_STREAM_DEFAULT, s->chunks, gpu_n, host_n, true);
    return SL_OK;
nomem:
    return SL_E_NOMEM;
}

static int build_multi_gpu(plan_t *p, const spec_t *s, sl_error_t *err) {
    int nd = s->device_count;
    bool copy_blocks = s->host_memory == HOSTMEM_PAGEABLE;
    for (int d = 0; d < nd; d++) {
        uint64_t dlo, dn;
        plan_chunk_range(s->size, nd, d, &dlo, &dn);
        if (dn < (uint64_t)s->chunks)
            return sl_error_set(err, SL_E_INVALID, "chunks", "device %d's share of %llu elements is less than %d chunks",
                                d, (unsigned long long)dn, s->chunks);
    }
    /* Interleaved over devices so that every device starts at once. */
    for (int c = 0; c < s->chunks; c++) {
        for (int d = 0; d < nd; d++) {
            uint64_t dlo, dn, off, n;
            plan_chunk_range(s->size, nd, d, &dlo, &dn);
            plan_chunk_range(dn, s->chunks, c, &off, &n);
            int st = c % s->streams, chunk = d * s->chunks + c;
            PUSH(p, PLAN_H2D, d, st, chunk, dlo + off, n, copy_blocks);
            PUSH(p, PLAN_KERNEL, d, st, chunk, dlo + off, n, false);
            PUSH(p, PLAN_D2H, d, st, chunk, dlo + off, n, copy_blocks);
        }
    }
    p->devices = nd;
    return SL_OK;
nomem:
    return SL_E_NOMEM;
}

int plan_build(const spec_t *spec, plan_t *plan, sl_error_t *err) {
    memset(plan, 0, sizeof *plan);
    plan->streams = spec->streams;
    plan->devices = 1;
    plan->size = spec->size;
    plan->legacy_default = spec->default_stream == DEFSTREAM_LEGACY;
    if (spec->chunks < 1 || (uint64_t)spec->chunks > spec->size || spec->chunk_ramp < 0 || spec->chunk_ramp > 16 ||
        (spec->chunk_ramp > 0 && ((uint64_t)spec->chunks << spec->chunk_ramp) > spec->size))
        return sl_error_set(err, SL_E_INVALID, "chunks", "chunks must be between 1 and size (%llu)",
                            (unsigned long long)spec->size);
    if (spec->variant == VARIANT_ZERO_COPY && spec->host_memory != HOSTMEM_PINNED)
        return sl_error_set(err, SL_E_INVALID, "host_memory", "zero_copy maps the host array: it must be pinned");
    int rc;
    switch (spec->variant) {
    case VARIANT_SEQUENTIAL: rc = build_sequential(plan, spec); break;
    case VARIANT_ASYNC_V1:
    case VARIANT_ROUND_ROBIN: rc = push_depth_first(plan, spec, 0, 0, spec->size, 0); break;
    case VARIANT_ASYNC_V2: rc = build_breadth_first(plan, spec); break;
    case VARIANT_ENGINE_STREAMS: rc = build_engine_streams(plan, spec); break;
    case VARIANT_HOST_OVERLAP: rc = build_host_overlap(plan, spec, err); break;
    case VARIANT_MULTI_GPU: rc = build_multi_gpu(plan, spec, err); break;
    case VARIANT_ZERO_COPY: rc = build_zero_copy(plan, spec); break;
    default:
        return sl_error_set(err, SL_E_INTERNAL, "variant", "variant %s has no plan", variant_names[spec->variant]);
    }
    if (rc == SL_OK && (plan->count == 0 || plan->ops[plan->count - 1].kind != PLAN_SYNC))
        rc = plan_push(plan, PLAN_SYNC, 0, PLAN_STREAM_DEFAULT, 0, 0, 0, true);
    if (rc == SL_E_NOMEM)
        sl_error_set(err, SL_E_NOMEM, "", "out of memory building the plan");
    if (rc)
        plan_free(plan);
    return rc;
}

typedef struct range {
    uint64_t offset, count;
    int device;
    int kind; /* PLAN_KERNEL or PLAN_HOST */
} range_t;

static int cmp_range(const void *a, const void *b) {
    const range_t *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* key for matching a kernel chunk with its copies */
static int has_copy(const plan_t *p, plan_kind_t kind, const range_t *r) {
    for (size_t i = 0; i < p->count; i++) {
        const plan_op_t *op = &p->ops[i];
        if (op->kind == kind && op->device == r->device && op->offset == r->offset && op->count == r->count)
            return 1;
    }
    return 0;
}

int plan_check_coverage(const plan_t *p, sl_error_t *err) {
    size_t n = 0;
    for (size_t i = 0; i < p->count; i++) {
        if (p->ops[i].kind == PLAN_KERNEL || p->ops[i].kind == PLAN_HOST)
            n++;
        if (p->zero_copy && (p->ops[i].kind == PLAN_H2D || p->ops[i].kind == PLAN_D2H))
            return sl_error_set(err, SL_E_INTERNAL, "variant", "a zero-copy plan holds a copy (op %zu)", i);
    }
    range_t *r = calloc(n ? n : 1, sizeof *r);
    if (!r)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the plan");
    n = 0;
    for (size_t i = 0; i < p->count; i++)
        if (p->ops[i].kind == PLAN_KERNEL || p->ops[i].kind == PLAN_HOST)
            r[n++] = (range_t){p->ops[i].offset, p->ops[i].count, p->ops[i].device, (int)p->ops[i].kind};
    qsort(r, n, sizeof *r, cmp_range);
    uint64_t next = 0;
    int rc = SL_OK;
    for (size_t i = 0; i < n && rc == SL_OK; i++) {
        if (r[i].offset != next || r[i].count == 0)
            rc = sl_error_set(err, SL_E_INTERNAL, "chunks", "plan does not cover element %llu exactly once",
                              (unsigned long long)next);
        next = r[i].offset + r[i].count;
        /* Copies are matched per chunk; small plans only (the check is quadratic). */
        if (rc == SL_OK && r[i].kind == PLAN_KERNEL && n <= 4096 && !p->zero_copy &&
            (!has_copy(p, PLAN_H2D, &r[i]) || !has_copy(p, PLAN_D2H, &r[i])))
            rc = sl_error_set(err, SL_E_INTERNAL, "chunks", "kernel chunk at %llu lacks its copies",
                              (unsigned long long)r[i].offset);
    }
    if (rc == SL_OK && next != p->size)
        rc = sl_error_set(err, SL_E_INTERNAL, "size", "plan covers %llu of %llu elements",
                          (unsigned long long)next, (unsigned long long)p->size);
    free(r);
    return rc;
}

void plan_stream_last_ops(const plan_t *plan, int device, int *last) {
    for (int st = 0; st < plan->streams; st++)
        last[st] = -1;
    for (size_t i = 0; i < plan->count; i++) {
        const plan_op_t *op = &plan->ops[i];
        if (op->device == device && plan_is_device_op(op->kind) && op->stream >= 0 && op->stream < plan->streams)
            last[op->stream] = (int)i;
    }
}
