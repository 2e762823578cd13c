/* predict.c — traces in, predicted timelines out (see predict.h). */
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "sim.h"

/* Device-side latency a copy and a kernel pay whatever their size (µs); the same
 * values the simulator uses, so that a trace of the sim predicts the sim exactly. */
#define COPY_LATENCY_US 2.0
#define KERNEL_LATENCY_US 2.5

void trace_free(trace_t *t) {
    free(t->ops);
    memset(t, 0, sizeof *t);
}

int trace_from_json(json_t *trace, trace_t *out, sl_error_t *err) {
    memset(out, 0, sizeof *out);
    json_t *ops = json_is_object(trace) ? json_object_get(trace, "ops") : NULL;
    if (!json_is_array(ops) || json_array_size(ops) == 0)
        return sl_error_set(err, SL_E_INVALID, "trace", "trace must be {\"ops\": [...]} with at least one op");
    size_t n = json_array_size(ops);
    if (n > PREDICT_MAX_OPS)
        return sl_error_set(err, SL_E_INVALID, "trace", "a trace holds at most %d ops (got %zu)", PREDICT_MAX_OPS, n);
    out->ops = calloc(n, sizeof *out->ops);
    if (!out->ops)
        return sl_error_set(err, SL_E_NOMEM, "trace", "out of memory for %zu ops", n);
    out->count = n;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(ops, i);
        trace_op_t *t = &out->ops[i];
        json_t *kind = json_object_get(o, "op"), *start = json_object_get(o, "start_us"), *end = json_object_get(o, "end_us");
        int k = json_is_string(kind) ? sl_enum_parse(op_names, OP__COUNT, json_string_value(kind)) : -1;
        int rc = SL_OK;
        if (!json_is_object(o))
            rc = sl_error_set(err, SL_E_INVALID, "trace", "ops[%zu] must be an object", i);
        else if (k < 0)
            rc = sl_error_set(err, SL_E_INVALID, "trace", "ops[%zu].op must be h2d, kernel, d2h or host", i);
        else if (!json_is_number(start) || !json_is_number(end) || !isfinite(json_number_value(start)) ||
                 !isfinite(json_number_value(end)))
            rc = sl_error_set(err, SL_E_INVALID, "trace", "ops[%zu] needs numbers start_us and end_us", i);
        if (rc)
            goto fail;
        t->op = (op_kind_t)k;
        t->start_us = json_number_value(start);
        t->end_us = json_number_value(end);
        if (t->end_us - out->ops[0].start_us > PREDICT_MAX_SPAN_US || t->start_us < 0) {
            rc = sl_error_set(err, SL_E_INVALID, "trace",
                              "ops[%zu] lies outside the trace's first hour (a trace is one run of a pipeline)", i);
            goto fail;
        }
        if (t->end_us < t->start_us) {
            rc = sl_error_set(err, SL_E_INVALID, "trace", "ops[%zu] ends before it starts (negative duration)", i);
            goto fail;
        }
        if (i > 0 && t->start_us < out->ops[i - 1].start_us) {
            rc = sl_error_set(err, SL_E_INVALID, "trace",
                              "ops[%zu] starts before ops[%zu]: a trace is a single stream in issue order", i, i - 1);
            goto fail;
        }
        json_t *bytes = json_object_get(o, "bytes"), *blocks = json_object_get(o, "blocks"),
               *tpb = json_object_get(o, "threads_per_block");
        if (t->op == OP_H2D || t->op == OP_D2H) {
            /* whole floats, at most the largest spec's array */
            if (!json_is_integer(bytes) || json_integer_value(bytes) < (json_int_t)sizeof(float) ||
                (uint64_t)json_integer_value(bytes) > SPEC_MAX_SIZE * sizeof(float)) {
                rc = sl_error_set(err, SL_E_INVALID, "trace",
                                  "ops[%zu] is a copy and needs bytes, an integer from 4 (one float) to 2^34 "
                                  "(2^32 floats, the largest size)", i);
                goto fail;
            }
            t->bytes = (uint64_t)json_integer_value(bytes);
        }
        if (t->op == OP_KERNEL) {
            if (!json_is_integer(blocks) || json_integer_value(blocks) <= 0) {
                rc = sl_error_set(err, SL_E_INVALID, "trace", "ops[%zu] is a kernel and needs blocks > 0", i);
                goto fail;
            }
            t->blocks = (uint64_t)json_integer_value(blocks);
            t->threads_per_block = 256;
            if (tpb) {
                if (!json_is_integer(tpb) || json_integer_value(tpb) < 1 || json_integer_value(tpb) > 1024) {
                    rc = sl_error_set(err, SL_E_INVALID, "trace", "ops[%zu].threads_per_block must be 1..1024", i);
                    goto fail;
                }
                t->threads_per_block = (int)json_integer_value(tpb);
            }
        }
        continue;
    fail:
        trace_free(out);
        return rc;
    }
    return SL_OK;
}

int trace_from_timeline(const timeline_t *tl, trace_t *out, sl_error_t *err) {
    memset(out, 0, sizeof *out);
    out->ops = calloc(tl->count ? tl->count : 1, sizeof *out->ops);
    if (!out->ops)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory");
    for (size_t i = 0; i < tl->count; i++) {
        const op_event_t *e = &tl->ops[i];
        out->ops[out->count++] = (trace_op_t){.op = e->op, .start_us = e->start_us, .end_us = e->end_us,
                                              .bytes = e->bytes, .blocks = 0, .threads_per_block = 256};
        out->lead_us = i == 0 ? e->start_us : fmin(out->lead_us, e->start_us);
    }
    if (out->lead_us < 0)
        out->lead_us = 0;
    return SL_OK;
}

json_t *trace_to_json(const trace_t *t) {
    json_t *ops = json_array();
    for (size_t i = 0; ops && i < t->count; i++) {
        const trace_op_t *o = &t->ops[i];
        json_t *j = json_pack("{s:s, s:f, s:f}", "op", op_names[o->op], "start_us", o->start_us, "end_us", o->end_us);
        if (j && (o->op == OP_H2D || o->op == OP_D2H))
            json_object_set_new(j, "bytes", json_integer((json_int_t)o->bytes));
        if (j && o->op == OP_KERNEL) {
            json_object_set_new(j, "blocks", json_integer((json_int_t)o->blocks));
            json_object_set_new(j, "threads_per_block", json_integer(o->threads_per_block));
        }
        if (!j || json_array_append_new(ops, j)) {
            json_decref(ops);
            return NULL;
        }
    }
    return ops ? json_pack("{s:o}", "ops", ops) : NULL;
}

/* Reps of one serial pipeline share their ops' order: the trace takes, op by op, the
 * median start and end over the reps (each rep's times from its first op's start).
 * One rep of the lent H100s can catch a slow spell of the copy engines (a 2^22 basis
 * rep at 39 GB/s where the calibration says 54.5); the median op does not. In a serial
 * trace the starts of every rep increase, so their medians increase too. */
int trace_from_timelines(const timeline_t *tls, size_t n, size_t fallback, trace_t *out, sl_error_t *err) {
    bool same = n > 1;
    for (size_t r = 1; same && r < n; r++) {
        same = tls[r].count == tls[0].count;
        for (size_t i = 0; same && i < tls[0].count; i++)
            same = tls[r].ops[i].op == tls[0].ops[i].op && tls[r].ops[i].stream == tls[0].ops[i].stream &&
                   tls[r].ops[i].chunk == tls[0].ops[i].chunk && tls[r].ops[i].bytes == tls[0].ops[i].bytes;
    }
    if (!same || tls[0].count == 0)
        return trace_from_timeline(&tls[fallback < n ? fallback : 0], out, err);
    int rc = trace_from_timeline(&tls[0], out, err);
    double *v = rc == SL_OK ? malloc(2 * n * sizeof *v) : NULL;
    if (rc == SL_OK && !v) {
        trace_free(out);
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory");
    }
    for (size_t r = 0; v && r < n; r++)
        v[r] = tls[r].ops[0].start_us;
    if (v) { /* each rep's first op is ops[0] (the reps' ops are alike, a serial pipeline's) */
        stats_t lead;
        stats_compute(v, n, &lead);
        out->lead_us = fmax(0.0, lead.median);
    }
    for (size_t i = 0; v && i < out->count; i++) {
        for (size_t r = 0; r < n; r++) {
            double t0 = tls[r].ops[0].start_us;
            v[r] = tls[r].ops[i].start_us - t0;
            v[n + r] = tls[r].ops[i].end_us - t0;
        }
        stats_t start, end;
        stats_compute(v, n, &start);
        stats_compute(v + n, n, &end);
        out->ops[i].start_us = start.median;
        out->ops[i].end_us = fmax(start.median, end.median);
    }
    free(v);
    return rc;
}

void trace_remove_event_tax(trace_t *t, double clean_us, double cap_us, double *tax_us) {
    *tax_us = 0;
    if (t->count == 0 || !(clean_us > 0))
        return;
    double first = t->ops[0].start_us, last = t->ops[0].end_us;
    for (size_t i = 0; i < t->count; i++)
        last = fmax(last, t->ops[i].end_us);
    double tax = ((last - first) - clean_us) / (double)t->count;
    if (!(tax > 0))
        return;
    tax = fmin(tax, cap_us);
    double shift = 0;
    for (size_t i = 0; i < t->count; i++) {
        trace_op_t *o = &t->ops[i];
        double dur = o->end_us - o->start_us, cut = fmin(tax, 0.5 * dur);
        o->start_us -= shift;
        o->end_us = o->start_us + dur - cut;
        shift += cut;
    }
    *tax_us = tax;
}

int predict_params_kernel(json_t *v, predict_params_t *p, sl_error_t *err) {
    if (!v)
        return SL_OK;
    double x = json_number_value(v);
    if (!json_is_number(v) || !(x >= 0) || x > 1e6)
        return sl_error_set(err, SL_E_INVALID, "kernel_ns_per_elem", "kernel_ns_per_elem must be a number from 0 to 1e6");
    p->kernel_ns_per_elem = x;
    return SL_OK;
}

void predict_lead_from_trace(predict_params_t *p, const trace_t *t) {
    /* at most what POST /api/predict takes: a stored timeline from elsewhere may start late */
    p->host.lead_us = fmin(PREDICT_MAX_LEAD_US, fmax(0.0, t->lead_us - p->host.copy_submit_us));
}

void predict_host_from_issue(predict_params_t *p, double issue_us, int chunks) {
    double per = 2 * p->host.copy_submit_us + p->host.kernel_launch_us;
    issue_us -= p->host.lead_us + p->host.first_launch_us; /* the rep's, paid once (model.h) */
    if (!(issue_us > 0) || chunks < 1 || !(per > 0))
        return;
    double scale = fmin(4.0, fmax(0.25, issue_us / (chunks * per)));
    p->host.copy_submit_us *= scale;
    p->host.kernel_launch_us *= scale;
}

void trace_fill_blocks(trace_t *t, const spec_t *spec, const device_info_t *dev) {
    size_t next_h2d = 0; /* the i-th kernel covers the i-th H2D's elements */
    for (size_t i = 0; i < t->count; i++) {
        if (t->ops[i].op != OP_KERNEL)
            continue;
        while (next_h2d < t->count && t->ops[next_h2d].op != OP_H2D)
            next_h2d++;
        uint64_t count = next_h2d < t->count ? t->ops[next_h2d++].bytes / sizeof(float) : 1;
        t->ops[i].blocks = plan_kernel_blocks(spec, dev, count ? count : 1);
        t->ops[i].threads_per_block = spec->block_size;
    }
}

void predict_params_for(const device_info_t *dev, predict_params_t *p) {
    memset(p, 0, sizeof *p);
    model_params_for_device(dev, &p->dev, &p->host);
    p->block_size = 256;
}

/* a number field of obj within [lo, hi] into *out: absent is fine */
static int override_num(json_t *obj, const char *parent, const char *name, double lo, double hi, bool integer,
                        double *out, sl_error_t *err) {
    json_t *v = json_object_get(obj, name);
    if (!v)
        return SL_OK;
    char field[64];
    snprintf(field, sizeof field, "%s.%s", parent, name);
    if ((integer && !json_is_integer(v)) || !json_is_number(v) ||
        !(json_number_value(v) >= lo && json_number_value(v) <= hi))
        return sl_error_set(err, SL_E_INVALID, field, "%s must be %s from %g to %g", field,
                            integer ? "an integer" : "a number", lo, hi);
    *out = json_number_value(v);
    return SL_OK;
}

/* Every key of obj must be one of fields: an unknown one (a typo) would otherwise be
 * dropped without a word and the prediction made with the default it meant to change. */
static int known_fields_only(json_t *obj, const char *parent, const char *const *fields, int n, sl_error_t *err) {
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        if (sl_enum_parse(fields, n, key) < 0)
            return sl_error_set(err, SL_E_INVALID, parent, "unknown %s field \"%.64s\"", parent, key);
    }
    return SL_OK;
}

int predict_params_override(json_t *device, json_t *host, predict_params_t *p, sl_error_t *err) {
    if ((device && !json_is_object(device)) || (host && !json_is_object(host)))
        return sl_error_set(err, SL_E_INVALID, device && !json_is_object(device) ? "device" : "host",
                            "must be an object");
    double ce = p->dev.copy_engines, conn = p->dev.connections, sm = p->dev.sm_count,
           tps = p->dev.max_threads_per_sm, bps = p->dev.max_blocks_per_sm;
    int rc = SL_OK;
    if (device) {
        static const char *const fields[] = {"copy_engines", "bidirectional_derate", "connections", "sm_count",
                                             "max_threads_per_sm", "max_blocks_per_sm", "copy_overlap_us",
                                             "bidir_copy_us", "copy_switch_us", "channel_pools",
                                             "bidirectional_d2h_share"};
        if ((rc = known_fields_only(device, "device", fields, (int)(sizeof fields / sizeof fields[0]), err)) ||
            (rc = override_num(device, "device", "copy_engines", 1, 16, true, &ce, err)) ||
            (rc = override_num(device, "device", "bidirectional_derate", 0.05, 1, false, &p->dev.bidir_derate, err)) ||
            (rc = override_num(device, "device", "bidirectional_d2h_share", 0.05, 0.95, false, &p->dev.bidir_d2h_share,
                               err)) ||
            (rc = override_num(device, "device", "connections", 1, 32, true, &conn, err)) ||
            (rc = override_num(device, "device", "sm_count", 1, 1024, true, &sm, err)) ||
            (rc = override_num(device, "device", "max_threads_per_sm", 32, 4096, true, &tps, err)) ||
            (rc = override_num(device, "device", "max_blocks_per_sm", 1, 64, true, &bps, err)) ||
            (rc = override_num(device, "device", "copy_overlap_us", 0, 1000, false, &p->dev.copy_overlap_us, err)) ||
            (rc = override_num(device, "device", "bidir_copy_us", 0, 1000, false, &p->dev.bidir_copy_us, err)) ||
            (rc = override_num(device, "device", "copy_switch_us", 0, 1000, false, &p->dev.copy_switch_us, err)))
            return rc;
        json_t *pools = json_object_get(device, "channel_pools");
        if (pools && !json_is_boolean(pools))
            return sl_error_set(err, SL_E_INVALID, "device.channel_pools", "device.channel_pools must be true or false");
        if (pools)
            p->dev.channel_pools = json_is_true(pools);
    }
    p->dev.copy_engines = (int)ce;
    p->dev.connections = (int)conn;
    p->dev.sm_count = (int)sm;
    p->dev.max_threads_per_sm = (int)tps;
    p->dev.max_blocks_per_sm = (int)bps;
    static const char *const host_fields[] = {"copy_submit_us", "kernel_launch_us", "reorder_us", "lead_us"};
    int nhost = (int)(sizeof host_fields / sizeof host_fields[0]);
    if (host && ((rc = known_fields_only(host, "host", host_fields, nhost, err)) ||
                 (rc = override_num(host, "host", "copy_submit_us", 0, 1000, false, &p->host.copy_submit_us, err)) ||
                 (rc = override_num(host, "host", "reorder_us", 0, 1000, false, &p->host.reorder_us, err)) ||
                 (rc = override_num(host, "host", "lead_us", 0, PREDICT_MAX_LEAD_US, false, &p->host.lead_us, err)) ||
                 (rc = override_num(host, "host", "kernel_launch_us", 0, 1000, false, &p->host.kernel_launch_us, err))))
        return rc;
    return SL_OK;
}

/* gap classes: the seed's five overheads, plus d2h -> h2d (the next chunk of a stream) */
enum { G_H2D_H2D, G_H2D_KERNEL, G_KERNEL_KERNEL, G_KERNEL_D2H, G_D2H_D2H, G_D2H_H2D, G__COUNT };
static const char *const gap_names[G__COUNT] = {"h2d_ovhd", "host2kern_ovhd", "kern_ovhd", "kern2host_ovhd",
                                                "d2h_ovhd", "d2h2h2d_ovhd"};

static int gap_class(op_kind_t prev, op_kind_t cur) {
    if (prev == OP_H2D && cur == OP_H2D) return G_H2D_H2D;
    if (prev == OP_H2D && cur == OP_KERNEL) return G_H2D_KERNEL;
    if (prev == OP_KERNEL && cur == OP_KERNEL) return G_KERNEL_KERNEL;
    if (prev == OP_KERNEL && cur == OP_D2H) return G_KERNEL_D2H;
    if (prev == OP_D2H && cur == OP_D2H) return G_D2H_D2H;
    if (prev == OP_D2H && cur == OP_H2D) return G_D2H_H2D;
    return -1;
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the q-quantile of v[0..n) (sorts v) */
static double quantile(double *v, size_t n, double q) {
    qsort(v, n, sizeof *v, cmp_dbl);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

static op_kind_t plan_op_kind(plan_kind_t k) {
    return k == PLAN_H2D ? OP_H2D : k == PLAN_KERNEL ? OP_KERNEL : k == PLAN_D2H ? OP_D2H : OP_HOST;
}

typedef struct {
    uint64_t bytes;
    double us;
    size_t chunk;
} h2d_time_t;

static int cmp_h2d_bytes(const void *a, const void *b) {
    uint64_t x = ((const h2d_time_t *)a)->bytes, y = ((const h2d_time_t *)b)->bytes;
    return (x > y) - (x < y);
}

/* What of each H2D chunk's time its source paced (model_op_t.paced_us), into paced[c]: its
 * time over the fastest H2D of the trace with as many bytes, where that passes
 * MODEL_PACED_MIN_US (below it, noise). A basis runs one op at a time, so an H2D slower than
 * its twins was held by the host's side (the sim's: the array's tail, still in the CPU's
 * cache), not by the link; beside a D2H it slows only as far as the link falls below that
 * pace, as the sim's own copies do (gpu/sim.c). The chunks grouped by bytes once: n log n,
 * where each chunk against every other took 20 s for a 60,000-chunk trace. SL_E_NOMEM. */
static int paced_chunks(const trace_op_t *const *h, size_t n, double *paced) {
    h2d_time_t *t = malloc((n ? n : 1) * sizeof *t);
    if (!t)
        return SL_E_NOMEM;
    for (size_t c = 0; c < n; c++)
        t[c] = (h2d_time_t){.bytes = h[c]->bytes, .us = h[c]->end_us - h[c]->start_us, .chunk = c};
    qsort(t, n, sizeof *t, cmp_h2d_bytes);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double fastest = t[i].us;
        for (; j < n && t[j].bytes == t[i].bytes; j++)
            fastest = fmin(fastest, t[j].us);
        for (; i < j; i++) {
            double over = t[i].us - fastest;
            paced[t[i].chunk] = over > MODEL_PACED_MIN_US ? over : 0;
        }
    }
    free(t);
    return SL_OK;
}

int predict_timeline(const trace_t *trace, const predict_params_t *p, variant_t variant, int streams, int chunks,
                     timeline_t *tl, json_t **derived, sl_error_t *err) {
    memset(tl, 0, sizeof *tl);
    size_t n = trace->count;
    size_t nh = 0, nk = 0, nd = 0;
    for (size_t i = 0; i < n; i++) {
        nh += trace->ops[i].op == OP_H2D;
        nk += trace->ops[i].op == OP_KERNEL;
        nd += trace->ops[i].op == OP_D2H;
    }
    if (nk == 0 || nh != nk || nd != nk)
        return sl_error_set(err, SL_E_INVALID, "trace",
                            "the trace needs one h2d, one kernel and one d2h per chunk (got %zu, %zu, %zu)", nh, nk, nd);
    if (streams < 1 || streams > SPEC_MAX_STREAMS)
        return sl_error_set(err, SL_E_INVALID, "streams", "streams must be from 1 to %d", SPEC_MAX_STREAMS);
    const trace_op_t **h = calloc(nk, sizeof *h), **k = calloc(nk, sizeof *k), **d = calloc(nk, sizeof *d);
    double *gaps[G__COUNT] = {0};
    size_t ngaps[G__COUNT] = {0};
    for (int g = 0; g < G__COUNT; g++)
        gaps[g] = calloc(n, sizeof(double));
    double *paced = NULL; /* per chunk, where the target keeps the trace's chunks */
    plan_t plan = {0};
    model_input_t in = {0};
    int rc = SL_OK;
    for (int g = 0; g < G__COUNT; g++)
        if (!gaps[g])
            rc = SL_E_NOMEM;
    if (!h || !k || !d || rc) {
        rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory predicting");
        goto done;
    }
    /* the chunks in trace order, the gaps between consecutive ops, the rates */
    size_t ih = 0, ik = 0, id = 0;
    double h_bytes = 0, h_us = 0, d_bytes = 0, d_us = 0, elems_total = 0, kernel_work = 0;
    for (size_t i = 0; i < n; i++) {
        const trace_op_t *t = &trace->ops[i];
        if (t->op == OP_H2D) h[ih++] = t;
        if (t->op == OP_KERNEL) k[ik++] = t;
        if (t->op == OP_D2H) d[id++] = t;
        if (i > 0) {
            int g = gap_class(trace->ops[i - 1].op, t->op);
            if (g >= 0)
                gaps[g][ngaps[g]++] = fmax(0.0, t->start_us - trace->ops[i - 1].end_us);
        }
    }
    uint64_t size = 0;
    for (size_t c = 0; c < nk; c++) {
        size += h[c]->bytes / sizeof(float);
        h_bytes += (double)h[c]->bytes;
        h_us += fmax(0.0, (h[c]->end_us - h[c]->start_us) - COPY_LATENCY_US);
        d_bytes += (double)d[c]->bytes;
        d_us += fmax(0.0, (d[c]->end_us - d[c]->start_us) - COPY_LATENCY_US);
        int bps = 1;
        if (k[c]->threads_per_block > 0) {
            bps = p->dev.max_threads_per_sm / k[c]->threads_per_block;
            if (bps > p->dev.max_blocks_per_sm) bps = p->dev.max_blocks_per_sm;
            if (bps < 1) bps = 1;
        }
        double cap = (double)p->dev.sm_count * bps;
        double fill = fmax(1.0 / cap, fmin(1.0, (double)k[c]->blocks / cap));
        double elems = (double)h[c]->bytes / sizeof(float);
        elems_total += elems;
        kernel_work += fmax(0.0, (k[c]->end_us - k[c]->start_us) - KERNEL_LATENCY_US) * fill;
    }
    if (size < 1 || size > SPEC_MAX_SIZE) {
        rc = sl_error_set(err, SL_E_INVALID, "trace",
                          "the trace's H2D copies hold %llu floats: from 1 to 2^32 (the largest size)",
                          (unsigned long long)size);
        goto done;
    }
    double us_per_h2d_byte = h_bytes > 0 ? h_us / h_bytes : 0, us_per_d2h_byte = d_bytes > 0 ? d_us / d_bytes : 0;
    double work_per_elem = elems_total > 0 ? kernel_work / elems_total : 0;
    /* The device's own latency between dependent ops: a low quantile of the gaps, since
     * where the host could not keep up the gaps are its submission time, which the
     * model charges on the host side already. */
    double gap_us[G__COUNT];
    for (int g = 0; g < G__COUNT; g++)
        gap_us[g] = ngaps[g] ? quantile(gaps[g], ngaps[g], 0.1) : 0.0;
    /* the target plan */
    spec_t spec;
    spec_defaults(&spec, variant);
    spec.size = size;
    spec.streams = variant == VARIANT_ENGINE_STREAMS ? 3 : streams;
    spec.chunks = chunks > 0 ? chunks : (int)nk;
    if (variant == VARIANT_SEQUENTIAL)
        spec.streams = spec.chunks = 1;
    spec.block_size = p->block_size > 0 ? p->block_size : 256;
    if (variant != VARIANT_SEQUENTIAL && variant != VARIANT_ASYNC_V1 && variant != VARIANT_ASYNC_V2 &&
        variant != VARIANT_ROUND_ROBIN && variant != VARIANT_ENGINE_STREAMS) {
        rc = sl_error_set(err, SL_E_INVALID, "variant", "the model predicts sequential, async_v1, async_v2, round_robin and engine_streams");
        goto done;
    }
    if ((rc = plan_build(&spec, &plan, err)))
        goto done;
    bool same_chunks = (size_t)spec.chunks == nk && variant != VARIANT_SEQUENTIAL;
    if (same_chunks && (!(paced = malloc(nk * sizeof *paced)) || paced_chunks(h, nk, paced))) {
        rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory predicting");
        goto done;
    }
    in.ops = calloc(plan.count ? plan.count : 1, sizeof *in.ops);
    if (!in.ops) {
        rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory predicting");
        goto done;
    }
    in.count = plan.count;
    in.devices = 1;
    in.events = plan.events;
    in.legacy_default = false;
    in.dev = p->dev;
    in.host = p->host;
    device_info_t dev = {.sm_count = p->dev.sm_count, .max_threads_per_sm = p->dev.max_threads_per_sm,
                         .max_blocks_per_sm = p->dev.max_blocks_per_sm};
    int bps = plan_blocks_per_sm(&dev, spec.block_size);
    double cap = (double)dev.sm_count * bps;
    op_kind_t last_in_stream[SPEC_MAX_STREAMS + 1];
    bool seen[SPEC_MAX_STREAMS + 1] = {0};
    for (size_t i = 0; i < plan.count; i++) {
        const plan_op_t *po = &plan.ops[i];
        model_op_t *mo = &in.ops[i];
        *mo = (model_op_t){.kind = po->kind, .device = 0, .stream = po->stream, .chunk = po->chunk,
                           .blocking = po->blocking, .wait_event = po->wait_event, .record_event = po->record_event,
                           .host_us = -1, .threads_per_block = spec.block_size};
        int c = po->chunk;
        double bytes = (double)po->count * sizeof(float);
        switch (po->kind) {
        case PLAN_H2D:
            mo->bytes = (uint64_t)bytes;
            mo->alone_us = same_chunks ? h[c]->end_us - h[c]->start_us : COPY_LATENCY_US + bytes * us_per_h2d_byte;
            if (same_chunks)
                mo->paced_us = paced[c];
            break;
        case PLAN_D2H:
            mo->bytes = (uint64_t)bytes;
            mo->alone_us = same_chunks ? d[c]->end_us - d[c]->start_us : COPY_LATENCY_US + bytes * us_per_d2h_byte;
            break;
        case PLAN_KERNEL:
            if (same_chunks) {
                mo->blocks = k[c]->blocks;
                mo->threads_per_block = k[c]->threads_per_block;
                mo->alone_us = k[c]->end_us - k[c]->start_us;
            } else {
                mo->blocks = plan_kernel_blocks(&spec, &dev, po->count);
                double fill = fmax(1.0 / cap, fmin(1.0, (double)mo->blocks / cap));
                mo->alone_us = KERNEL_LATENCY_US + (double)po->count * work_per_elem / fill;
            }
            break;
        default:
            break;
        }
        if (po->kind == PLAN_KERNEL && p->kernel_ns_per_elem > 0)
            mo->sat_us = (double)po->count * p->kernel_ns_per_elem / 1e3;
        /* the gap to its stream predecessor (or the awaited event's op) */
        int slot = po->stream + 1;
        if (po->kind == PLAN_H2D || po->kind == PLAN_KERNEL || po->kind == PLAN_D2H) {
            op_kind_t cur = plan_op_kind(po->kind);
            op_kind_t prev = cur;
            bool has_prev = false;
            if (po->wait_event >= 0) {
                for (size_t j = 0; j < i; j++)
                    if (plan.ops[j].record_event == po->wait_event) {
                        prev = plan_op_kind(plan.ops[j].kind);
                        has_prev = true;
                    }
            } else if (slot >= 0 && slot <= SPEC_MAX_STREAMS && seen[slot]) {
                prev = last_in_stream[slot];
                has_prev = true;
            }
            int g = has_prev ? gap_class(prev, cur) : -1;
            mo->gap_us = g >= 0 ? gap_us[g] : 0.0;
            if (slot >= 0 && slot <= SPEC_MAX_STREAMS) {
                seen[slot] = true;
                last_in_stream[slot] = cur;
            }
        }
    }
    model_mark_first_of_kind(&in);
    /* a prediction is of a run's measured reps: after as many warm-ups as a run makes by
     * default (the target spec's, from spec_defaults), the device's state carried over, as
     * the sim runs them */
    if ((rc = model_simulate_reps(&in, spec.warmup, 1, tl, NULL, err)))
        goto done;
    if (derived) {
        json_t *ov = json_object();
        for (int g = 0; g < G__COUNT; g++)
            json_object_set_new(ov, gap_names[g], ngaps[g] ? json_real(gap_us[g]) : json_null());
        *derived = json_pack("{s:i, s:I, s:o, s:f, s:f, s:f, s:b}", "trace_chunks", (int)nk, "size", (json_int_t)size,
                             "overheads_us", ov, "h2d_gbps", us_per_h2d_byte > 0 ? 1e-3 / us_per_h2d_byte : 0.0,
                             "d2h_gbps", us_per_d2h_byte > 0 ? 1e-3 / us_per_d2h_byte : 0.0, "kernel_ns_per_elem",
                             work_per_elem * 1e3, "durations_from_trace", same_chunks);
    }
done:
    free(paced);
    free(in.ops);
    plan_free(&plan);
    free(h);
    free(k);
    free(d);
    for (int g = 0; g < G__COUNT; g++)
        free(gaps[g]);
    return rc;
}
