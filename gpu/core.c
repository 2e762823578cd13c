/* core.c — the ground of gpu/ (core.h): error codes and their names, the spec's enum
 * names and defaults, timelines, statistics, and the summary of a result. Calls nothing
 * in gpu/ above it. */
#include "core.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const code_names[] = {
    [SL_OK] = "ok",           [SL_E_PARSE] = "bad_json",      [SL_E_AUTH] = "unauthorized",
    [SL_E_NOTFOUND] = "not_found", [SL_E_METHOD] = "method_not_allowed",
    [SL_E_CONFLICT] = "conflict", [SL_E_TOOLARGE] = "too_large", [SL_E_MEDIA] = "unsupported_media_type",
    [SL_E_INVALID] = "invalid", [SL_E_BUSY] = "queue_full",   [SL_E_UNAVAILABLE] = "unavailable",
    [SL_E_DEVICE] = "device_error", [SL_E_VERIFY] = "verification_failed", [SL_E_DB] = "database_error",
    [SL_E_NOMEM] = "out_of_memory", [SL_E_INTERNAL] = "internal",
};

const char *sl_code_name(sl_code_t code) {
    if ((unsigned)code < sizeof code_names / sizeof code_names[0] && code_names[code])
        return code_names[code];
    return "internal";
}

int sl_error_set(sl_error_t *err, sl_code_t code, const char *field, const char *fmt, ...) {
    if (err) {
        err->code = code;
        snprintf(err->field, sizeof err->field, "%s", field ? field : "");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return (int)code;
}

const char *const variant_names[VARIANT__COUNT] = {
    "sequential", "async_v1", "async_v2", "round_robin", "engine_streams",
    "cpu", "host_overlap", "multi_gpu", "tuned", "zero_copy"};
const char *const kernel_names[KERNEL__COUNT] = {"blog", "fill", "compute"};
const char *const launch_names[LAUNCH__COUNT] = {"chunk", "max_occupancy"};
const char *const host_memory_names[HOSTMEM__COUNT] = {"pinned", "pageable"};
const char *const default_stream_names[DEFSTREAM__COUNT] = {"legacy", "per_thread"};
const char *const stream_flags_names[SFLAGS__COUNT] = {"default", "non_blocking"};
const char *const flush_names[FLUSH__COUNT] = {"none", "stream_query"};
const char *const driver_mode_names[DRIVER__COUNT] = {"auto", "linux", "tcc", "wddm", "mcdm"};
const char *const timing_names[TIMING__COUNT] = {"events", "cupti"};
const char *const trace_ops_names[TRACE__COUNT] = {"sampled", "all"};
const char *const backend_names[BACKEND__COUNT] = {"auto", "cuda", "sim", "cpu"};
const char *const op_names[OP__COUNT] = {"h2d", "kernel", "d2h", "host"};
const char *const cuda_obj_names[CUDA_OBJ__COUNT] = {"stream", "event", "graph", "graph_exec", "host_alloc",
                                                       "device_alloc"};

int sl_enum_parse(const char *const *names, int n, const char *s) {
    for (int i = 0; s && i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

void spec_defaults(spec_t *spec, variant_t variant) {
    memset(spec, 0, sizeof *spec);
    spec->variant = variant;
    spec->size = 1u << 25;        /* the seeds' size (000: "~33.6M (1 << 25)"), API.md's example */
    spec->streams = 8;            /* API.md's example */
    spec->chunks = 8;             /* = streams; the parser sets it from the given streams */
    spec->kernel = KERNEL_BLOG;
    spec->kernel_iters = 1;
    spec->block_size = 256;
    spec->launch = LAUNCH_CHUNK;
    spec->host_memory = HOSTMEM_PINNED;
    spec->default_stream = DEFSTREAM_PER_THREAD;
    spec->stream_flags = SFLAGS_DEFAULT;
    spec->flush = FLUSH_NONE;
    spec->driver_mode = DRIVER_AUTO;
    spec->timing = TIMING_EVENTS;
    spec->trace_ops = TRACE_SAMPLED;
    spec->reps = 10;
    spec->reps_auto = false;
    spec->warmup = 2;
    spec->devices[0] = 0;
    spec->device_count = 1;
    spec->backend = BACKEND_AUTO;
    spec->sync = false;
    spec->host_share = 0.5;
    if (variant == VARIANT_ZERO_COPY) {
        /* one grid-stride kernel over the whole mapped array: the fastest zero-copy form
         * on the lent H100 (2026-11-23: 3.238 ms at 2^25 against 3.253 one thread per
         * element; 0.432 against 0.465 ms at 2^22) */
        spec->streams = spec->chunks = 1;
        spec->launch = LAUNCH_MAX_OCCUPANCY;
    }
}

int timeline_push(timeline_t *tl, const op_event_t *ev) {
    if (tl->count == tl->cap) {
        size_t cap = tl->cap ? tl->cap * 2 : 64;
        op_event_t *ops = realloc(tl->ops, cap * sizeof *ops);
        if (!ops)
            return SL_E_NOMEM;
        tl->ops = ops;
        tl->cap = cap;
    }
    tl->ops[tl->count++] = *ev;
    return SL_OK;
}

void timeline_free(timeline_t *tl) {
    free(tl->ops);
    memset(tl, 0, sizeof *tl);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n > 0 values sorted ascending. */
static double median_sorted(const double *s, size_t n) {
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

void stats_compute(const double *values, size_t n, stats_t *out) {
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    double *sorted = malloc(n * sizeof *sorted);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    out->mean = sum / (double)n;
    double var = 0;
    for (size_t i = 0; i < n; i++)
        var += (values[i] - out->mean) * (values[i] - out->mean);
    out->stddev = n > 1 ? sqrt(var / (double)(n - 1)) : 0.0;
    if (!sorted) { /* fall back to min/max only */
        out->min = out->max = out->median = values[0];
        for (size_t i = 1; i < n; i++) {
            if (values[i] < out->min) out->min = values[i];
            if (values[i] > out->max) out->max = values[i];
        }
        return;
    }
    memcpy(sorted, values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    out->min = sorted[0];
    out->max = sorted[n - 1];
    out->median = median_sorted(sorted, n);
    free(sorted);
    /* the sum's rounding can put the mean of equal values an ulp outside them */
    out->mean = fmin(fmax(out->mean, out->min), out->max);
}

void stats_rep_modes(const double *rep_ms, int n, rep_modes_t *out) {
    memset(out, 0, sizeof *out);
    if (n < 6)
        return;
    double *t = malloc((size_t)n * sizeof *t);
    if (!t)
        return;
    memcpy(t, rep_ms, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double outlier = 1.5 * median_sorted(t, (size_t)n);
    int m = n; /* the outliers are the sorted reps' tail */
    while (m > 0 && t[m - 1] > outlier)
        m--;
    int least = (int)ceil(REP_MODES_MIN_SHARE * m);
    if (least < 2)
        least = 2;
    int cut = -1; /* the fast group is t[0..cut] */
    double gap = 0;
    for (int i = least - 1; i + least < m; i++)
        if (t[i + 1] - t[i] > gap) {
            gap = t[i + 1] - t[i];
            cut = i;
        }
    if (cut >= 0 && t[0] > 0 && gap > REP_MODES_GAP * t[0]) {
        out->two = true;
        out->fast_ms = median_sorted(t, (size_t)cut + 1);
        out->slow_ms = median_sorted(t + cut + 1, (size_t)(m - cut - 1));
        out->fast_reps = cut + 1;
        out->slow_reps = m - cut - 1;
        out->outliers = n - m;
        double bound = t[cut]; /* the fast group's slowest */
        bool in_slow = false;
        for (int i = 0; i < n; i++) {
            if (rep_ms[i] > outlier)
                continue; /* an outlier neither ends nor starts a stretch */
            bool slow_rep = rep_ms[i] > bound;
            if (slow_rep && !in_slow)
                out->slow_runs++;
            in_slow = slow_rep;
        }
    }
    free(t);
}

bool stats_median_known(const double *values, size_t n, double rel) {
    if (n < 5)
        return false;
    stats_t st;
    stats_compute(values, n, &st);
    return st.median > 0 && 1.2533 * st.stddev / sqrt((double)n) <= rel * st.median;
}

void result_free(result_t *r) {
    if (!r)
        return;
    if (r->timelines)
        for (int i = 0; i < r->reps; i++)
            timeline_free(&r->timelines[i]);
    free(r->timelines);
    free(r->rep_ms);
    if (r->extra)
        json_decref(r->extra);
    memset(r, 0, sizeof *r);
}

int stats_median_index(const double *v, int n) {
    stats_t st;
    stats_compute(v, n > 0 ? (size_t)n : 0, &st);
    int m = 0;
    for (int i = 1; i < n; i++)
        if (fabs(v[i] - st.median) < fabs(v[m] - st.median))
            m = i;
    return m;
}

int stats_fit_line(const double *x, const double *y, int n, double *head, double *slope) {
    double slopes[STATS_FIT_MAX * (STATS_FIT_MAX - 1) / 2], rest[STATS_FIT_MAX];
    size_t ns = 0;
    if (n > STATS_FIT_MAX)
        return -1;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (x[j] != x[i])
                slopes[ns++] = (y[j] - y[i]) / (x[j] - x[i]);
    if (ns == 0)
        return -1;
    stats_t st;
    stats_compute(slopes, ns, &st);
    double b = st.median;
    for (int i = 0; i < n; i++)
        rest[i] = y[i] - b * x[i];
    stats_compute(rest, (size_t)n, &st);
    *head = st.median;
    *slope = b;
    return 0;
}

void result_summarise(result_t *r) {
    stats_compute(r->rep_ms, (size_t)r->reps, &r->total_ms);
    r->median_rep = stats_median_index(r->rep_ms, r->reps);
    r->h2d_ms = r->kernel_ms = r->d2h_ms = r->host_ms = 0;
    double h2d_bytes = 0, d2h_bytes = 0;
    if (r->timelines && r->reps > 0) {
        const timeline_t *tl = &r->timelines[r->median_rep];
        for (size_t i = 0; i < tl->count; i++) {
            const op_event_t *e = &tl->ops[i];
            double ms = (e->end_us - e->start_us) / 1000.0;
            switch (e->op) {
            case OP_H2D: r->h2d_ms += ms; h2d_bytes += (double)e->bytes; break;
            case OP_KERNEL: r->kernel_ms += ms; break;
            case OP_D2H: r->d2h_ms += ms; d2h_bytes += (double)e->bytes; break;
            case OP_HOST: r->host_ms += ms; break;
            default: break;
            }
        }
    }
    /* GB/s = bytes / (ms * 1e6) */
    r->h2d_gbps = r->h2d_ms > 0 ? h2d_bytes / (r->h2d_ms * 1e6) : 0;
    r->d2h_gbps = r->d2h_ms > 0 ? d2h_bytes / (r->d2h_ms * 1e6) : 0;
    double serial = r->h2d_ms + r->kernel_ms + r->d2h_ms + r->host_ms;
    r->overlap = serial > 0 ? 1.0 - r->total_ms.median / serial : 0;
    if (r->predicted_ms == 0)
        r->predicted_ms = -1;
    if (r->prediction_error == 0)
        r->prediction_error = -1;
}
