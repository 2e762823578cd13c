/* test_cuda.c — the CUDA backend on a real GPU (make test-gpu; tests/gpu/run.sh).
 *
 * Checks, each printed with what it expected and what it got:
 *   - discovery and calibration give sane numbers;
 *   - every variant with each option flipped from the defaults (kernel, launch, host
 *     memory, default stream, stream flags, flush, timing, block size) verifies, at a
 *     small size that divides by neither the streams nor the block (seed 003) and at
 *     the seeds' 2^25; its timeline has every op of the plan, each with end >= start;
 *   - a run whose output misses a chunk fails with SL_E_VERIFY (never reported fast);
 *   - a 4-stream async_v1 timeline shows copies overlapping kernels of other streams;
 *   - a pageable async_v1 timeline shows no H2D overlapping any kernel;
 *   - events and CUPTI timelines of the same run agree within a few µs per op;
 *   - reps "auto" says how many it took; multi_gpu (2+ GPUs) carries a peer measurement;
 *   - the result records its measurement conditions.
 * Without a GPU it prints "gpu: skipped (no GPU)" and exits 0. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/backend.h"
#include "gpu/cuda.h"
#include "gpu/plan.h"

static int passed, failed;

#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (cond) {                                                   \
            passed++;                                                 \
        } else {                                                      \
            failed++;                                                 \
            printf("  FAIL %s:%d: ", __FILE__, __LINE__);             \
            printf(__VA_ARGS__);                                      \
            printf("\n");                                             \
        }                                                             \
    } while (0)

static machine_info_t machine;

static void spec_base(spec_t *s, variant_t v, uint64_t size, int streams) {
    spec_defaults(s, v);
    s->size = size;
    s->streams = streams;
    s->chunks = streams;
    s->reps = 2;
    s->warmup = 1;
    s->backend = BACKEND_CUDA;
}

static const char *spec_name(const spec_t *s, char *buf, size_t n) {
    snprintf(buf, n, "%s size=%llu streams=%d chunks=%d kernel=%s launch=%s block=%d mem=%s default=%s flags=%s "
                     "flush=%s timing=%s%s",
             variant_names[s->variant], (unsigned long long)s->size, s->streams, s->chunks, kernel_names[s->kernel],
             launch_names[s->launch], s->block_size, host_memory_names[s->host_memory],
             default_stream_names[s->default_stream], stream_flags_names[s->stream_flags], flush_names[s->flush],
             timing_names[s->timing], s->variant == VARIANT_HOST_OVERLAP ? (s->sync ? " sync" : " nosync") : "");
    return buf;
}

/* Ops in a plan that a timeline must show (copies, kernels, host work). */
static size_t plan_timed_ops(const spec_t *s) {
    plan_t p;
    sl_error_t err;
    if (plan_build(s, &p, &err) != SL_OK)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < p.count; i++)
        if (p.ops[i].kind == PLAN_H2D || p.ops[i].kind == PLAN_KERNEL || p.ops[i].kind == PLAN_D2H ||
            p.ops[i].kind == PLAN_HOST)
            n++;
    plan_free(&p);
    return n;
}

/* The share of a composed timeline an op of chunk `chunk` is taken from (chunk % shares;
 * the default stream's ops, chunk < 0, share 0's). */
static int chunk_share(int chunk, json_int_t shares) {
    return chunk >= 0 ? (int)(chunk % shares) : 0;
}

/* Run one spec through backend_run (the service's path); check it verified and that
 * its timelines are whole. Returns the rc; *r is filled on success (caller frees). */
static int run_checked(const spec_t *s, result_t *r) {
    char name[512];
    sl_error_t err;
    memset(&err, 0, sizeof err);
    spec_name(s, name, sizeof name);
    int rc = backend_run(s, &machine, r, &err);
    CHECK(rc == SL_OK, "%s: expected ok, got %s: %s", name, sl_code_name((sl_code_t)rc), err.message);
    if (rc != SL_OK)
        return rc;
    CHECK(r->verified, "%s: expected verified", name);
    CHECK(r->backend == BACKEND_CUDA, "%s: expected backend cuda, got %s", name, backend_names[r->backend]);
    CHECK(r->reps >= 1 && r->total_ms.median > 0, "%s: expected reps >= 1 and a positive median, got %d, %g", name,
          r->reps, r->total_ms.median);
    /* tuned has no plan of its own (it runs the one it chose) */
    size_t want = s->variant == VARIANT_TUNED ? 0 : plan_timed_ops(s);
    bool sampled = s->timing == TIMING_EVENTS && s->trace_ops == TRACE_SAMPLED && s->variant != VARIANT_TUNED;
    int composed = 0;
    for (int k = 0; k < r->reps; k++) {
        const timeline_t *tl = &r->timelines[k];
        /* sampled: a few reps' timelines and the median one's are composed, the others empty */
        if (sampled && tl->count == 0 && k != r->median_rep)
            continue;
        composed++;
        if (want)
            CHECK(tl->count == want, "%s rep %d: expected %zu ops in the timeline, got %zu", name, k, want, tl->count);
        int bad = 0;
        for (size_t i = 0; i < tl->count; i++)
            if (!(tl->ops[i].end_us >= tl->ops[i].start_us) || tl->ops[i].start_us < -5.0)
                bad++;
        CHECK(bad == 0, "%s rep %d: %d ops with end < start or starting before the rep", name, k, bad);
        /* the host's calls: events timing has one for every copy and kernel (the traced rep's own),
         * in issue order on one thread, an async op starting no earlier than its call began (it is
         * handed over inside the call: a 3 KB copy can end before its cudaMemcpyAsync returns, seen
         * on a lent H100 at size 777); CUPTI's records and host work have none */
        int missing = 0, stray = 0, disorder = 0, early = 0;
        /* a composed (sampled) timeline takes each op, and its call, from the rep of its share
         * (chunk % shares): one thread's calls in order within a share */
        json_int_t shares = json_integer_value(json_object_get(json_object_get(r->extra, "timing"), "shares"));
        if (shares < 1 || shares > 4096)
            shares = 1;
        double prev_end[4096];
        for (json_int_t j = 0; j < shares; j++)
            prev_end[j] = -INFINITY;
        for (size_t i = 0; i < tl->count; i++) {
            const op_event_t *o = &tl->ops[i];
            bool want_call = s->timing == TIMING_EVENTS && o->op != OP_HOST;
            missing += want_call && !o->call;
            stray += !want_call && o->call;
            if (!o->call)
                continue;
            int sh = chunk_share(o->chunk, shares);
            disorder += !(o->call_start_us <= o->call_end_us) || o->call_start_us < prev_end[sh] - 0.01 ||
                        o->call_start_us < -5.0;
            prev_end[sh] = o->call_end_us;
            /* no op starts before its call began: an async op is handed over inside it, a blocking
             * pinned one (sequential's cudaMemcpy) at its asynchronous call's return inside it, a
             * pageable one as its call starts staging it */
            early += o->start_us < o->call_start_us - 0.5;
        }
        CHECK(missing == 0 && stray == 0, "%s rep %d: %d copies or kernels without their host call, %d calls where none "
              "is recorded", name, k, missing, stray);
        CHECK(disorder == 0, "%s rep %d: %d calls out of order or overlapping within their share (of %lld), or before "
              "the rep", name, k, disorder, (long long)shares);
        CHECK(early == 0, "%s rep %d: %d ops starting before their call began", name, k, early);
        /* the host's work (host_overlap) starts after the rep handed over its last copy or
         * kernel (host times; the calls' are a few us earlier on the device's timeline). A
         * composed timeline takes it from the rep of the op issued right before it (ops are
         * in plan order): it starts after every call of that op's share has returned */
        int host_early = 0;
        for (size_t h = 1; h < tl->count; h++) {
            const op_event_t *o = &tl->ops[h];
            if (o->op != OP_HOST || tl->ops[h - 1].op == OP_HOST)
                continue;
            int sh = chunk_share(tl->ops[h - 1].chunk, shares);
            for (size_t i = 0; i < h; i++) {
                const op_event_t *c = &tl->ops[i];
                if (c->call && chunk_share(c->chunk, shares) == sh &&
                    o->start_us < c->call_end_us - 0.5)
                    host_early++;
            }
        }
        CHECK(host_early == 0, "%s rep %d: the host's work began before %d calls of its rep returned", name, k,
              host_early);
    }
    /* CUPTI's timelines are built after the run, each rep's host work its own rep's (until
     * 2026-11-28 every rep's was the last rep run's) */
    if (s->timing == TIMING_CUPTI && s->variant == VARIANT_HOST_OVERLAP && r->reps >= 2) {
        int with_host = 0, distinct = 0;
        double first = NAN;
        for (int k = 0; k < r->reps; k++)
            for (size_t i = 0; i < r->timelines[k].count; i++)
                if (r->timelines[k].ops[i].op == OP_HOST) {
                    double t = r->timelines[k].ops[i].start_us;
                    distinct += with_host++ > 0 && t != first;
                    if (with_host == 1)
                        first = t;
                }
        CHECK(with_host < 2 || distinct > 0, "%s: all %d reps' host work at one time (%.3f us): not each rep's own",
              name, with_host, first);
    }
    if (sampled) { /* the first of every third rep's and the median one's */
        int want_n = 0;
        for (int k = 0; k < r->reps; k++)
            want_n += k % ((s->reps + 2) / 3) == 0 || k == r->median_rep;
        CHECK(s->reps_auto || composed == want_n, "%s: expected %d composed timelines, got %d", name, want_n,
              composed);
    }
    return rc;
}

static void check_run(const spec_t *s) {
    result_t r;
    memset(&r, 0, sizeof r);
    if (run_checked(s, &r) == SL_OK)
        result_free(&r);
}

/* Every variant, with each option flipped from the defaults in turn. */
static void test_matrix(uint64_t size, int streams, bool all_options) {
    static const variant_t variants[] = {VARIANT_SEQUENTIAL, VARIANT_ASYNC_V1,       VARIANT_ASYNC_V2,
                                         VARIANT_ROUND_ROBIN, VARIANT_ENGINE_STREAMS, VARIANT_HOST_OVERLAP,
                                         VARIANT_MULTI_GPU,  VARIANT_TUNED,          VARIANT_ZERO_COPY};
    int before = failed;
    int runs = 0;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        if (variants[v] == VARIANT_MULTI_GPU && machine.device_count < 2)
            continue; /* reported once in main */
        for (int opt = 0; opt <= 10; opt++) {
            if (!all_options && opt > 0 && opt != 3 && opt != 8)
                continue;
            spec_t s;
            spec_base(&s, variants[v], size, streams);
            if (variants[v] == VARIANT_ROUND_ROBIN)
                s.chunks = 3 * streams + 1;
            if (variants[v] == VARIANT_MULTI_GPU) {
                s.device_count = 2;
                s.devices[0] = 0;
                s.devices[1] = 1;
            }
            switch (opt) {
            case 0: break;
            case 1: s.kernel = KERNEL_FILL; break;
            case 2: s.kernel = KERNEL_COMPUTE; s.kernel_iters = 8; break;
            case 3:
                if (variants[v] == VARIANT_ZERO_COPY)
                    continue; /* refused: test_zero_copy */
                s.host_memory = HOSTMEM_PAGEABLE;
                break;
            case 4: s.launch = LAUNCH_MAX_OCCUPANCY; break;
            case 5: s.default_stream = DEFSTREAM_LEGACY; break;
            case 6: s.stream_flags = SFLAGS_NON_BLOCKING; break;
            case 7: s.flush = FLUSH_STREAM_QUERY; break;
            case 8: s.timing = TIMING_CUPTI; break;
            case 9: s.block_size = 96; s.launch = LAUNCH_MAX_OCCUPANCY; break;
            case 10:
                if (variants[v] != VARIANT_HOST_OVERLAP)
                    continue;
                s.sync = true;
                break;
            }
            check_run(&s);
            runs++;
        }
    }
    printf("  matrix size=%llu streams=%d: %d runs, %d failed checks\n", (unsigned long long)size, streams, runs,
           failed - before);
}

/* Copy-kernel overlap in µs between ops of different streams in one timeline. */
static double cross_overlap_us(const timeline_t *tl, op_kind_t copy) {
    double sum = 0;
    for (size_t i = 0; i < tl->count; i++) {
        const op_event_t *a = &tl->ops[i];
        if (a->op != copy)
            continue;
        for (size_t j = 0; j < tl->count; j++) {
            const op_event_t *b = &tl->ops[j];
            if (b->op != OP_KERNEL || b->stream == a->stream)
                continue;
            double lo = fmax(a->start_us, b->start_us), hi = fmin(a->end_us, b->end_us);
            if (hi > lo)
                sum += hi - lo;
        }
    }
    return sum;
}

static void test_overlap(void) {
    spec_t s;
    result_t r;
    memset(&r, 0, sizeof r);
    spec_base(&s, VARIANT_ASYNC_V1, 1u << 25, 4);
    s.reps = 5;
    if (run_checked(&s, &r) != SL_OK)
        return;
    const timeline_t *tl = &r.timelines[r.median_rep];
    double h2d = cross_overlap_us(tl, OP_H2D), d2h = cross_overlap_us(tl, OP_D2H);
    printf("  async_v1 2^25 x4 pinned: total %.3f ms, overlap %.3f, H2D under kernels %.1f us, D2H under kernels "
           "%.1f us\n",
           r.total_ms.median, r.overlap, h2d, d2h);
    CHECK(h2d + d2h > 100.0, "4-stream async_v1: expected copies overlapping kernels (> 100 us), got %.1f us",
          h2d + d2h);
    CHECK(r.overlap > 0.10, "4-stream async_v1: expected overlap > 0.10, got %.3f", r.overlap);
    result_free(&r);

    spec_base(&s, VARIANT_ASYNC_V1, 1u << 24, 4);
    s.reps = 5;
    s.host_memory = HOSTMEM_PAGEABLE;
    if (run_checked(&s, &r) != SL_OK)
        return;
    tl = &r.timelines[r.median_rep];
    h2d = cross_overlap_us(tl, OP_H2D);
    printf("  async_v1 2^24 x4 pageable: total %.3f ms, overlap %.3f, H2D under kernels %.1f us\n", r.total_ms.median,
           r.overlap, h2d);
    CHECK(h2d <= 2.0, "pageable async_v1: expected no H2D under a kernel, got %.1f us", h2d);
    /* the sim of this run from a calibration taken right after it: its pageable rates are
     * what a pipeline gets (timed by events they were 2.5x it on a lent H100, and the sim
     * 24-43% fast: make bench-wide, 2026-11-27). Right after: a lent VM's pageable rate
     * moves by a third within minutes (GPU-daba5dd7: 11.1 GB/s H2D at the suite's start, a
     * run three minutes later as if 7.5), the pipelines' reps by up to 30%. */
    static machine_info_t fresh;
    fresh = machine;
    sl_error_t cal_err = {0};
    if (cuda_calibrate(&fresh, 0, &cal_err) != SL_OK) {
        CHECK(0, "pageable async_v1: calibrating again: %s", cal_err.message);
    } else {
        result_t sim;
        sl_error_t err = {0};
        s.backend = BACKEND_SIM;
        if (backend_run(&s, &fresh, &sim, &err) == SL_OK) {
            double ratio = sim.total_ms.median / r.total_ms.median;
            printf("  the same simulated from a calibration taken right after: %.3f ms (%.2fx the run)\n",
                   sim.total_ms.median, ratio);
            CHECK(ratio > 1 / 1.4 && ratio < 1.4,
                  "pageable async_v1: expected the sim from this calibration within 1.4x of the run, got %.2fx "
                  "(pageable H2D %.1f, D2H %.1f GB/s)",
                  ratio, fresh.devices[0].calib.pageable_h2d_gbps, fresh.devices[0].calib.pageable_d2h_gbps);
            result_free(&sim);
        } else {
            CHECK(0, "pageable async_v1 simulated: %s", err.message);
        }
    }
    result_free(&r);
}

static void test_cupti_agrees(void) {
    spec_t s;
    result_t re, rc_;
    sl_error_t err;
    memset(&re, 0, sizeof re);
    memset(&rc_, 0, sizeof rc_);
    memset(&err, 0, sizeof err);
    spec_base(&s, VARIANT_ASYNC_V1, 1u << 24, 4);
    s.reps = 7;
    if (run_checked(&s, &re) != SL_OK)
        return;
    s.timing = TIMING_CUPTI;
    int rc = backend_run(&s, &machine, &rc_, &err);
    if (rc == SL_E_UNAVAILABLE) {
        printf("  cupti: unavailable here (%s): events/CUPTI agreement not checked\n", err.message);
        result_free(&re);
        return;
    }
    CHECK(rc == SL_OK, "cupti run: expected ok, got %s: %s", sl_code_name((sl_code_t)rc), err.message);
    if (rc != SL_OK) {
        result_free(&re);
        return;
    }
    /* separate runs: the same ops in the same order */
    const timeline_t *a = &re.timelines[re.median_rep], *b = &rc_.timelines[rc_.median_rep];
    CHECK(a->count == b->count, "events and CUPTI timelines: expected the same op count, got %zu and %zu", a->count,
          b->count);
    for (size_t i = 0; i < a->count && i < b->count; i++)
        CHECK(a->ops[i].op == b->ops[i].op && a->ops[i].stream == b->ops[i].stream,
              "op %zu: events say %s in stream %d, CUPTI %s in stream %d", i, op_names[a->ops[i].op],
              a->ops[i].stream, op_names[b->ops[i].op], b->ops[i].stream);
    const char *dir = getenv("STREAMLAB_TEST_OUT");
    if (dir && *dir) { /* both median timelines, for a look at what differs */
        char path[512];
        snprintf(path, sizeof path, "%s/timelines_events_cupti.json", dir);
        FILE *f = fopen(path, "w");
        for (int t = 0; f && t < 2; t++) {
            const timeline_t *tl = t ? b : a;
            fprintf(f, "%s{\"timing\":\"%s\",\"total_ms\":%.4f,\"ops\":[", t ? ",\n" : "[", t ? "cupti" : "events",
                    t ? rc_.total_ms.median : re.total_ms.median);
            for (size_t i = 0; i < tl->count; i++)
                fprintf(f, "%s{\"op\":\"%s\",\"stream\":%d,\"start_us\":%.3f,\"end_us\":%.3f}", i ? "," : "",
                        op_names[tl->ops[i].op], tl->ops[i].stream, tl->ops[i].start_us, tl->ops[i].end_us);
            fprintf(f, "]}");
        }
        if (f) {
            fprintf(f, "]\n");
            fclose(f);
        }
    }
    /* the same rep timed both ways (the cupti run's cross-check rep): per op */
    json_t *xc = json_object_get(json_object_get(rc_.extra, "timing"), "cross_check");
    char *dump = xc ? json_dumps(xc, JSON_COMPACT) : NULL;
    printf("  events vs CUPTI, async_v1 2^24 x4: totals %.3f (events run) / %.3f ms (cupti run); same-rep "
           "cross-check %s\n",
           re.total_ms.median, rc_.total_ms.median, dump ? dump : "missing");
    free(dump);
    CHECK(xc != NULL, "cupti run: expected extra.timing.cross_check");
    /* the cross-check's reps: each within 10% of the run's median, else up to 3 attempts */
    json_int_t tries = json_integer_value(json_object_get(xc, "attempts"));
    json_t *xms = json_object_get(xc, "rep_ms");
    double off = json_number_value(json_object_get(xc, "rep_off_pct")), far = 0;
    for (size_t i = 0; i < json_array_size(xms); i++)
        far = fmax(far, fabs(json_number_value(json_array_get(xms, i)) / rc_.total_ms.median - 1.0) * 100.0);
    CHECK(tries >= 1 && tries <= 3 && json_array_size(xms) ==
                                          (size_t)json_integer_value(json_object_get(xc, "shares")),
          "cross-check: expected 1-3 attempts and a total per share rep, got %lld and %zu", (long long)tries,
          json_array_size(xms));
    CHECK(fabs(far - off) < 1e-6 && (off <= 10.0 || tries == 3),
          "cross-check: rep_off_pct %.3f against %.3f from rep_ms, after %lld attempts", off, far, (long long)tries);
    /* what the recording cost the run: reps without CUPTI before it started */
    json_t *wo = json_object_get(json_object_get(rc_.extra, "timing"), "without_cupti");
    double wo_ms = json_number_value(json_object_get(wo, "median_ms"));
    double cost = json_number_value(json_object_get(wo, "cost_pct"));
    printf("  without CUPTI: %lld reps, median %.3f ms; the recorded reps' median %.3f ms: cost %+.1f%%\n",
           (long long)json_integer_value(json_object_get(wo, "reps")), wo_ms, rc_.total_ms.median, cost);
    CHECK(json_integer_value(json_object_get(wo, "reps")) == 3 && wo_ms > 0,
          "cupti run: expected extra.timing.without_cupti with 3 reps and a median");
    CHECK(fabs(cost - 100.0 * (rc_.total_ms.median / wo_ms - 1.0)) < 1e-6,
          "cupti run: cost_pct %.3f is not the recorded median over the unrecorded one", cost);
    /* where the two part, by op kind: the events' start before CUPTI's, their end after */
    json_t *xops = xc ? json_object_get(xc, "ops") : NULL;
    CHECK(json_array_size(xops) == a->count, "cross-check: expected every op both ways, got %zu of %zu",
          json_array_size(xops), a->count);
    for (int kind = OP_H2D; xops && kind <= OP_D2H; kind++) {
        double lead = 0, lag = 0, lead_max = 0, lag_max = 0;
        int n = 0;
        for (size_t i = 0; i < json_array_size(xops); i++) {
            json_t *o = json_array_get(xops, i);
            const char *name = json_string_value(json_array_get(o, 0));
            if (!name || strcmp(name, op_names[kind]) != 0)
                continue;
            double es = json_real_value(json_array_get(o, 2)), ee = json_real_value(json_array_get(o, 3));
            double cs = json_real_value(json_array_get(o, 4)), ce = json_real_value(json_array_get(o, 5));
            lead += cs - es;
            lag += ee - ce;
            lead_max = fmax(lead_max, cs - es);
            lag_max = fmax(lag_max, ee - ce);
            n++;
        }
        if (n)
            printf("    %-6s x%d: events start %.1f us before CUPTI (worst %.1f), end %.1f us after (worst %.1f)\n",
                   op_names[kind], n, lead / n, lead_max, lag / n, lag_max);
    }
    if (xc) {
        double dmax = json_real_value(json_object_get(xc, "duration_diff_us_max"));
        double smax = json_real_value(json_object_get(xc, "start_diff_us_max"));
        CHECK(json_integer_value(json_object_get(xc, "ops_events")) == (json_int_t)a->count &&
                  json_integer_value(json_object_get(xc, "ops_cupti")) == (json_int_t)a->count,
              "cross-check: expected %zu ops both ways", a->count);
        double dmean = json_real_value(json_object_get(xc, "duration_diff_us_mean"));
        /* Not the "few µs" issue 4 hoped for. Events sit in the stream around each op, so
         * an op's events also take in the stream's handoff to its engine, and in the
         * cross-check rep CUPTI's own timestamp work too. Seen on the lent H100
         * (2026-11-23, async_v1 2^24 x4): 14.7 us apart on average, worst 35.0 us (a
         * kernel: 101 us by events, 66 by CUPTI: its start event fired before the host
         * had launched it); since an op starts no earlier than the host handed it over,
         * 9.7-10.2 us on average, worst 17-29 us (a D2H whose copy began 20-33 us after
         * its start event). On a noisy lent machine (10:50 UTC, its bench-model reps
         * spread up to 207%) one run gave 21.2 us on average, worst 67.0 (a D2H whose
         * end event fired 28 us after CUPTI's end); a calm one the same hour, 8.9-13.8
         * and 16.5-32.0 over 16 runs. By op kind (2026-11-24, GPU-5269e40a): H2Ds, which
         * follow the host's hand-off or the copy before them on their engine, start
         * 3.8 us before CUPTI says (worst 6.3) and end 0.3 after; kernels and D2Hs, which
         * wait for their stream's op on another engine, start 10.1 and 9.7 us early
         * (worst 13.4 and 17.2) and end 5.0 and 3.9 late: the stream's hand-off from one
         * engine to the next, which an event in the stream cannot see. The limits catch
         * a broken mapping or a queueing error (hundreds of µs), and a return of the
         * launch-time error. */
        CHECK(dmean <= 30.0, "cross-check: expected op durations within 30 us on average, got %.2f us", dmean);
        CHECK(dmax <= 100.0, "cross-check: expected every op's duration within 100 us, worst %.2f us", dmax);
        CHECK(smax <= 100.0, "cross-check: expected op starts within 100 us, worst %.2f us", smax);
        /* the ops whose starts part most: min(16, ops) of them, largest first, the first
         * the run's start_diff_us_max, each naming its op as the timeline has it */
        json_t *ws = json_object_get(xc, "worst_starts");
        size_t nws = json_array_size(ws), want_ws = a->count < 16 ? a->count : 16;
        CHECK(nws == want_ws, "cross-check: expected %zu worst_starts, got %zu", want_ws, nws);
        double prev = INFINITY;
        for (size_t i = 0; i < nws; i++) {
            json_t *w = json_array_get(ws, i);
            json_int_t at = json_integer_value(json_array_get(w, 0));
            const char *name = json_string_value(json_array_get(w, 1));
            double diff = fabs(json_real_value(json_array_get(w, 4)) - json_real_value(json_array_get(w, 6)));
            bool named = at >= 0 && (size_t)at < a->count && name && strcmp(name, op_names[a->ops[at].op]) == 0 &&
                         json_integer_value(json_array_get(w, 2)) == a->ops[at].stream &&
                         json_integer_value(json_array_get(w, 3)) == a->ops[at].chunk;
            CHECK(json_array_size(w) == 8 && named && diff <= prev + 1e-6,
                  "cross-check: worst_starts[%zu] should name op %lld of the timeline and part no more than the "
                  "one before it (%.3f after %.3f)", i, (long long)at, diff, prev);
            if (i == 0)
                CHECK(fabs(diff - smax) < 1e-3, "cross-check: worst_starts[0] parts %.3f us, start_diff_us_max %.3f",
                      diff, smax);
            prev = diff;
        }
    }
    result_free(&re);
    result_free(&rc_);
}

/* Runs s with its last chunk's D2H skipped from rep `from_rep` on (STREAMLAB_TEST_SKIP_D2H):
 * the run must fail verification and report no times. */
static void expect_lost_chunk_caught(const spec_t *s, const char *from_rep, const char *what) {
    result_t r;
    sl_error_t err;
    memset(&r, 0, sizeof r);
    memset(&err, 0, sizeof err);
    setenv("STREAMLAB_TEST_SKIP_D2H", from_rep, 1);
    int rc = backend_run(s, &machine, &r, &err);
    unsetenv("STREAMLAB_TEST_SKIP_D2H");
    CHECK(rc == SL_E_VERIFY, "a run that loses its last chunk%s: expected verification_failed, got %s (%s)", what,
          sl_code_name((sl_code_t)rc), err.message);
    CHECK(r.rep_ms == NULL && r.reps == 0, "a failed run: expected no times reported");
    if (rc == SL_E_VERIFY)
        printf("  lost chunk%s caught: %s\n", what, err.message);
    result_free(&r);
}

static void test_verify_catches(void) {
    spec_t s;
    result_t r;
    sl_error_t err;
    spec_base(&s, VARIANT_ASYNC_V1, 100003, 4);
    expect_lost_chunk_caught(&s, "1", "");

    /* A run whose first reps are right is checked in full once, then by checksum; a later
     * rep that loses its last chunk differs from the checked output and is caught in full. */
    memset(&r, 0, sizeof r);
    memset(&err, 0, sizeof err);
    spec_base(&s, VARIANT_ASYNC_V1, 100003, 4);
    s.reps = 6;
    int rc = backend_run(&s, &machine, &r, &err);
    json_t *v = rc == SL_OK && r.extra ? json_object_get(r.extra, "verification") : NULL;
    long long all = json_integer_value(json_object_get(v, "reps_verified")),
              full = json_integer_value(json_object_get(v, "reps_in_full"));
    CHECK(rc == SL_OK && v && full == 1 && all > r.reps,
          "verification: expected one rep checked in full and every rep (%d measured, warm-ups and traced ones "
          "besides) verified, got %lld of %lld (%s)",
          r.reps, full, all, err.message);
    result_free(&r);
    expect_lost_chunk_caught(&s, "4", " from its 4th rep");
}

/* graph: the clean reps launch the captured plan; every rep still verifies, the
 * timeline (traced reps) is unchanged in form, and where a plan cannot be captured the
 * run goes on without it and says why. The graph's time beside the issued one's. */
static void test_graph(void) {
    static const variant_t vs[] = {VARIANT_ASYNC_V1, VARIANT_ASYNC_V2, VARIANT_ENGINE_STREAMS};
    for (size_t v = 0; v < 3; v++) {
        spec_t s;
        result_t plain, graph;
        sl_error_t err;
        memset(&plain, 0, sizeof plain);
        memset(&graph, 0, sizeof graph);
        memset(&err, 0, sizeof err);
        spec_base(&s, vs[v], (1u << 22) + 777, vs[v] == VARIANT_ENGINE_STREAMS ? 3 : 8);
        s.chunks = 16;
        s.reps = 10;
        int rc1 = backend_run(&s, &machine, &plain, &err);
        s.graph = true;
        int rc2 = rc1 == SL_OK ? backend_run(&s, &machine, &graph, &err) : rc1;
        CHECK(rc1 == SL_OK && rc2 == SL_OK, "%s x16 as a graph: expected ok, got %s (%s)", variant_names[vs[v]],
              sl_code_name((sl_code_t)(rc1 ? rc1 : rc2)), err.message);
        if (rc1 == SL_OK && rc2 == SL_OK) {
            json_t *g = json_object_get(json_object_get(graph.extra, "timing"), "graph");
            CHECK(json_is_string(g) && strncmp(json_string_value(g), "clean reps", 10) == 0,
                  "%s graph run: expected extra.timing.graph to say the clean reps launched it, got %s",
                  variant_names[vs[v]], json_is_string(g) ? json_string_value(g) : "nothing");
            CHECK(graph.verified, "graph run: expected every rep verified");
            CHECK(graph.timelines && graph.timelines[0].count == plain.timelines[0].count,
                  "graph run: expected the traced timeline's %zu ops", plain.timelines[0].count);
            printf("  %s 2^22+777 x16 chunks: issued %.3f ms, graph %.3f ms (medians of 10)\n", variant_names[vs[v]],
                   plain.total_ms.median, graph.total_ms.median);
        }
        result_free(&plain);
        result_free(&graph);
    }
    spec_t s;
    result_t r;
    sl_error_t err;
    memset(&r, 0, sizeof r);
    memset(&err, 0, sizeof err);
    spec_base(&s, VARIANT_ASYNC_V1, 100003, 4);
    s.host_memory = HOSTMEM_PAGEABLE;
    s.graph = true;
    int rc = backend_run(&s, &machine, &r, &err);
    json_t *g = rc == SL_OK ? json_object_get(json_object_get(r.extra, "timing"), "graph") : NULL;
    CHECK(rc == SL_OK && json_is_string(g) && strncmp(json_string_value(g), "not used", 8) == 0,
          "a pageable run asked for a graph: expected it to run without one and say so, got %s / %s",
          sl_code_name((sl_code_t)rc), json_is_string(g) ? json_string_value(g) : "nothing");
    result_free(&r);
}

static void test_extra(void) {
    spec_t s;
    result_t r;
    memset(&r, 0, sizeof r);
    spec_base(&s, VARIANT_ASYNC_V1, 1u << 22, 8);
    s.reps_auto = true;
    s.reps = 200;
    if (run_checked(&s, &r) != SL_OK)
        return;
    json_t *ra = r.extra ? json_object_get(r.extra, "reps_auto") : NULL;
    CHECK(ra && json_integer_value(json_object_get(ra, "reps")) == r.reps,
          "reps auto: expected extra.reps_auto.reps == %d", r.reps);
    CHECK(r.reps >= 5, "reps auto: expected at least 5 reps, got %d", r.reps);
    json_t *cond = r.extra ? json_object_get(r.extra, "conditions") : NULL;
    json_t *g0 = cond ? json_array_get(json_object_get(cond, "gpus"), 0) : NULL;
    CHECK(g0 && json_string_length(json_object_get(g0, "name")) > 0 && json_object_get(g0, "uuid"),
          "conditions: expected gpus[0] with name and uuid");
    json_t *timing = r.extra ? json_object_get(r.extra, "timing") : NULL;
    char *dump = r.extra ? json_dumps(json_object_get(r.extra, "timing"), JSON_COMPACT) : NULL;
    char *cdump = g0 ? json_dumps(g0, JSON_COMPACT) : NULL;
    char *adump = ra ? json_dumps(ra, JSON_COMPACT) : NULL;
    printf("  reps auto: %s\n  timing: %s\n  conditions: %s\n  nvml: %s\n", adump ? adump : "-", dump ? dump : "-",
           cdump ? cdump : "-", cond ? json_string_value(json_object_get(cond, "nvml")) : "-");
    CHECK(timing && json_object_get(timing, "event_record_us"), "timing: expected event_record_us");
    /* between reps the host checks the rep before's output and refills the input: the fields are there,
     * the check (one read of 16 MiB) a part of the wait, and no more measured reps after a traced one than
     * there were measured reps */
    json_t *between = timing ? json_object_get(timing, "between_reps") : NULL;
    double gap_us = json_real_value(json_object_get(between, "median_us"));
    double check_us = json_real_value(json_object_get(between, "check_median_us"));
    json_int_t after_traced = json_integer_value(json_object_get(between, "after_traced"));
    CHECK(between && check_us > 0 && check_us < gap_us && json_is_integer(json_object_get(between, "after_traced")) &&
              after_traced >= 0 && after_traced <= r.reps,
          "timing: expected between_reps with 0 < check_median_us (%g) < median_us (%g), 0 <= after_traced (%lld) <= %d",
          check_us, gap_us, (long long)after_traced, r.reps);
    free(dump);
    free(cdump);
    free(adump);
    result_free(&r);

    /* many small ops: how much do per-op events stretch the total? */
    spec_base(&s, VARIANT_ASYNC_V1, 1u << 22, 256);
    s.reps = 10;
    if (run_checked(&s, &r) == SL_OK) {
        timing = json_object_get(r.extra, "timing");
        printf("  2^22 x256 streams: clean %.3f ms, traced %.3f ms (%+.1f%%), %.2f us per event record\n",
               json_real_value(json_object_get(timing, "clean_median_ms")),
               json_real_value(json_object_get(timing, "traced_median_ms")),
               json_real_value(json_object_get(timing, "trace_distortion_pct")),
               json_real_value(json_object_get(timing, "event_record_us")));
        result_free(&r);
    }
}

/* zero_copy: kernels only (no copy in any timeline), verified, refused on pageable
 * memory; and, in one run, faster than sequential, which moves the same bytes through
 * the copy engines one direction at a time. */
static void test_zero_copy(void) {
    spec_t s;
    spec_base(&s, VARIANT_ZERO_COPY, 1u << 24, 1);
    s.launch = LAUNCH_MAX_OCCUPANCY;
    s.reps = 5;
    result_t zc, seq;
    memset(&zc, 0, sizeof zc);
    memset(&seq, 0, sizeof seq);
    if (run_checked(&s, &zc) != SL_OK)
        return;
    int copies = 0;
    for (int k = 0; k < zc.reps; k++)
        for (size_t i = 0; i < zc.timelines[k].count; i++)
            copies += zc.timelines[k].ops[i].op != OP_KERNEL;
    CHECK(copies == 0, "zero_copy: expected kernels only in the timelines, got %d other ops", copies);
    spec_t q;
    spec_base(&q, VARIANT_SEQUENTIAL, 1u << 24, 1);
    q.reps = 5;
    if (run_checked(&q, &seq) == SL_OK) {
        printf("  2^24: zero_copy %.3f ms, sequential %.3f ms (medians of 5)\n", zc.total_ms.median, seq.total_ms.median);
        CHECK(zc.total_ms.median < seq.total_ms.median,
              "zero_copy 2^24: expected faster than sequential's copies one way at a time, got %.3f >= %.3f ms",
              zc.total_ms.median, seq.total_ms.median);
        result_free(&seq);
    }
    result_free(&zc);
    spec_base(&s, VARIANT_ZERO_COPY, 100003, 4);
    s.host_memory = HOSTMEM_PAGEABLE;
    sl_error_t err;
    memset(&err, 0, sizeof err);
    result_t r;
    int rc = backend_run(&s, &machine, &r, &err);
    CHECK(rc == SL_E_INVALID && strcmp(err.field, "host_memory") == 0,
          "zero_copy on pageable memory: expected invalid naming host_memory, got %s (%s)", sl_code_name((sl_code_t)rc),
          err.field);
    if (rc == SL_OK)
        result_free(&r);
}

/* The floor is a lower bound: no kernel's median run beats it (3% for a calibration
 * peak caught in a slow spell). Its kernel term is the calibrated cost per element;
 * the compute kernel's was once timed on the fill kernel's output, 8.6x dear, and
 * compute runs reported efficiencies of 1.45-2.48. 200 rounds make the run
 * kernel-bound (about 4.6x the H2D copy on the H100), so the kernel term is the floor. */
static void test_floor_is_a_lower_bound(void) {
    static const int iters[] = {1, 1, 15, 127, 200};
    static const kernel_kind_t kernels[] = {KERNEL_BLOG, KERNEL_FILL, KERNEL_COMPUTE, KERNEL_COMPUTE, KERNEL_COMPUTE};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        spec_t s;
        spec_base(&s, VARIANT_ENGINE_STREAMS, 1u << 24, 3);
        s.chunks = 16;
        s.kernel = kernels[k];
        s.kernel_iters = iters[k];
        s.reps = 5;
        result_t r;
        memset(&r, 0, sizeof r);
        if (run_checked(&s, &r) != SL_OK)
            continue;
        printf("  %s x%d 2^24 engine_streams x16: %.3f ms, floor %.3f ms, efficiency %.3f\n", kernel_names[s.kernel],
               s.kernel_iters, r.total_ms.median, r.floor_ms, r.efficiency);
        CHECK(r.floor_ms > 0 && r.efficiency <= 1.03,
              "%s x%d: expected the floor (%.3f ms) at most the median run (%.3f ms), efficiency %.3f",
              kernel_names[s.kernel], s.kernel_iters, r.floor_ms, r.total_ms.median, r.efficiency);
        result_free(&r);
    }
}

/* The CPU references a checked run of variant (compute kernel, 20 rounds, 2^22) computes. */
static uint64_t references_of(variant_t variant, int streams, bool predict) {
    spec_t s;
    spec_base(&s, variant, 1u << 22, streams);
    s.kernel = KERNEL_COMPUTE;
    s.kernel_iters = 20;
    s.reps = 3;
    s.predict = predict;
    uint64_t before = cuda_reference_count();
    check_run(&s);
    return cuda_reference_count() - before;
}

/* A tuned run measures dozens of trials and a predicted run its basis too: each shares one
 * CPU reference (cuda_reference_keep), and every rep is still checked against it. A
 * compute kernel of 127 rounds made tuned compute its reference some sixty times, for
 * minutes at 2^25 on the lent H100's host. */
static void test_reference_shared(void) {
    uint64_t tuned = references_of(VARIANT_TUNED, 1, false);
    uint64_t predicted = references_of(VARIANT_ASYNC_V2, 4, true);
    uint64_t plain = references_of(VARIANT_ASYNC_V2, 4, false); /* afterwards: the kept one is gone */
    printf("  CPU references computed: tuned %llu, predicted run with its basis %llu, then a plain run %llu\n",
           (unsigned long long)tuned, (unsigned long long)predicted, (unsigned long long)plain);
    CHECK(tuned == 1 && predicted == 1 && plain == 1,
          "expected one CPU reference per tuned run, per predicted run and per plain run, got %llu, %llu, %llu",
          (unsigned long long)tuned, (unsigned long long)predicted, (unsigned long long)plain);
}

static void test_multi_gpu(void) {
    if (machine.device_count < 2) {
        printf("  multi_gpu: skipped (1 GPU here; the peer measurement needs 2)\n");
        return;
    }
    spec_t s;
    result_t r;
    memset(&r, 0, sizeof r);
    spec_base(&s, VARIANT_MULTI_GPU, 1u << 24, 4);
    s.device_count = 2;
    s.devices[0] = 0;
    s.devices[1] = 1;
    if (run_checked(&s, &r) != SL_OK)
        return;
    json_t *peer = json_object_get(r.extra, "peer");
    char *dump = peer ? json_dumps(peer, JSON_COMPACT) : NULL;
    printf("  multi_gpu 2^24: %.3f ms; peer: %s\n", r.total_ms.median, dump ? dump : "-");
    CHECK(peer && json_object_get(peer, "without_peer_access_gbps"), "multi_gpu: expected extra.peer");
    free(dump);
    result_free(&r);
}

/* trace_ops sampled against all at a host-bound point (2^22 async_v2 x128), in one run:
 * the sampled timelines are composed of several shares and whole (run_checked), each
 * chunk's ops in their order (a chunk's ops come from one rep), and the median rep's
 * span is nearer the run's clean median than an every-op rep of the same run stretches its
 * total (issue 21). */
static double span_ratio(const result_t *r) {
    const timeline_t *tl = &r->timelines[r->median_rep];
    double a = INFINITY, b = -INFINITY;
    for (size_t i = 0; i < tl->count; i++) {
        a = fmin(a, tl->ops[i].start_us);
        b = fmax(b, tl->ops[i].end_us);
    }
    return tl->count ? (b - a) / (1000.0 * r->total_ms.median) : 0;
}

static void test_sampled(void) {
    spec_t s;
    result_t rs, ra;
    memset(&rs, 0, sizeof rs);
    memset(&ra, 0, sizeof ra);
    spec_base(&s, VARIANT_ASYNC_V2, 1u << 22, 128);
    s.reps = 5;
    s.warmup = 2;
    s.trace_ops = TRACE_SAMPLED;
    if (run_checked(&s, &rs) != SL_OK)
        return;
    s.trace_ops = TRACE_ALL;
    if (run_checked(&s, &ra) != SL_OK) {
        result_free(&rs);
        return;
    }
    json_t *ts = json_object_get(rs.extra, "timing"), *ta = json_object_get(ra.extra, "timing");
    json_int_t shares = json_integer_value(json_object_get(ts, "shares"));
    CHECK(shares > 1, "sampled x128: expected several shares (the probe's every-op rep is slower), got %lld",
          (long long)shares);
    CHECK(json_integer_value(json_object_get(ta, "shares")) == 1, "all: expected one share");
    CHECK(strcmp(json_string_value(json_object_get(ts, "trace_ops")), "sampled") == 0, "sampled: extra says so");
    /* share_reps: a timeline is composed of shares, its farthest maybe from one every-op rep */
    json_t *sr = json_object_get(ts, "share_reps");
    json_int_t tls = json_integer_value(json_object_get(sr, "timelines")),
               whole = json_integer_value(json_object_get(sr, "whole"));
    CHECK(json_is_integer(json_object_get(sr, "whole")) && whole >= 0 && whole <= tls && tls >= 1,
          "sampled: expected share_reps.whole from 0 to its %lld timelines, got %lld", (long long)tls,
          (long long)whole);
    json_int_t whole_one = json_integer_value(json_object_get(sr, "whole_one_rep"));
    CHECK(json_is_integer(json_object_get(sr, "whole_one_rep")) && whole_one >= 0 && whole_one <= whole,
          "sampled: expected share_reps.whole_one_rep from 0 to its %lld whole, got %lld", (long long)whole,
          (long long)whole_one);
    int disorder = 0;
    for (int k = 0; k < rs.reps; k++) {
        const timeline_t *tl = &rs.timelines[k];
        double end_of[3 * 128 + 3];
        for (int c = 0; c < 128; c++)
            end_of[c] = -INFINITY;
        for (size_t i = 0; i < tl->count; i++) { /* plan order: a chunk's h2d, kernel, d2h */
            const op_event_t *o = &tl->ops[i];
            if (o->chunk < 0 || o->chunk >= 128)
                continue;
            disorder += o->start_us + 0.5 < end_of[o->chunk];
            end_of[o->chunk] = o->end_us;
        }
    }
    CHECK(disorder == 0, "sampled: expected each chunk's ops in order, %d started before the one before ended",
          disorder);
    double rs_ratio = span_ratio(&rs), ra_ratio = span_ratio(&ra);
    char *probe = json_dumps(json_object_get(ts, "probe"), JSON_COMPACT);
    printf("  2^22 async_v2 x128: sampled %lld shares, span / median %.3f (clean %.3f ms); all: %.3f (clean %.3f "
           "ms); probe %s\n",
           (long long)shares, rs_ratio, rs.total_ms.median, ra_ratio, ra.total_ms.median,
           probe ? probe : "-");
    free(probe);
    /* against the every-op rep of the same run (the probe's, the least of three traced reps over
     * the least of three clean ones): the other run's host may have moved its pace meanwhile (a lent
     * H100, 2026-11-27: clean medians 1.571 and 1.997 ms, its every-op span 1.202 of its own) */
    json_t *pr = json_object_get(ts, "probe");
    double pc = json_real_value(json_object_get(pr, "clean_ms"));
    double pt = json_real_value(json_object_get(pr, "traced_ms"));
    CHECK(pc > 0 && pt > 0, "sampled: expected the probe's clean and traced reps");
    CHECK(pc > 0 && fabs(rs_ratio - 1) < pt / pc - 1,
          "sampled: expected a span nearer the median than the same run's every-op rep gives, got %.3f against %.3f "
          "(the other run's every-op span: %.3f)",
          rs_ratio, pc > 0 ? pt / pc : 0.0, ra_ratio);
    result_free(&rs);
    result_free(&ra);
}

/* run_checked, again while the run split its traced reps into one share (up to
 * SHARES_TRIES runs): a check of how shares are composed needs several, and the probe
 * gives one where the events cost no more than the clean reps' spread (on a lent H100,
 * 2026-11-28, one run of six at 2^22 host_overlap x64). *shares: the last run's. */
enum { SHARES_TRIES = 3 };
static int run_shared(const spec_t *s, result_t *r, json_int_t *shares) {
    int rc = SL_OK;
    for (int t = 0; t < SHARES_TRIES; t++) {
        if (t)
            result_free(r);
        memset(r, 0, sizeof *r);
        if ((rc = run_checked(s, r)) != SL_OK)
            return rc;
        *shares = json_integer_value(json_object_get(json_object_get(r->extra, "timing"), "shares"));
        if (*shares > 1)
            break;
    }
    return rc;
}

/* host_overlap with several shares: a measured timeline composed under events takes the
 * host's work from the rep of the op issued right before it (run_checked's check); under
 * CUPTI each rep's timeline keeps its own rep's host times, and the cross-check takes
 * them from the last share's rep both ways (below). Its own runs: a failed async_v2 run
 * above skips nothing here. */
static void test_sampled_host(void) {
    spec_t s;
    json_int_t shares = 0;
    spec_base(&s, VARIANT_HOST_OVERLAP, 1u << 22, 64);
    s.reps = 5;
    s.warmup = 2;
    s.trace_ops = TRACE_SAMPLED;
    for (int t = 0; t < 2; t++) {
        s.timing = t ? TIMING_CUPTI : TIMING_EVENTS;
        result_t rh;
        if (run_shared(&s, &rh, &shares) != SL_OK)
            continue;
        json_t *sr = json_object_get(json_object_get(rh.extra, "timing"), "share_reps");
        if (json_is_integer(json_object_get(sr, "whole")))
            printf("  host_overlap 2^22 x64 %s: %lld shares, whole %lld%s\n", timing_names[s.timing],
                   (long long)shares, (long long)json_integer_value(json_object_get(sr, "whole")),
                   shares > 1 ? "" : " (one share in every run: composition not exercised)");
        else
            printf("  host_overlap 2^22 x64 %s: %lld shares%s\n", timing_names[s.timing], (long long)shares,
                   shares > 1 ? "" : " (one share in every run: composition not exercised)");
        result_free(&rh);
    }
    /* the cross-check's CUPTI timeline takes the host's work from the rep the events' one
     * is built in (the last share's), so the two have one rep's host times: equal lengths.
     * 19 chunks: its 58 ops, the host's last, all in cross_check.ops (the first 64). In
     * 6343ac4 CUPTI's came from the share of the op before it, chunk 18's: that is the
     * last share too where the shares divide 19 (1 or 19 of them), and there this check
     * cannot tell (it ran with 21 chunks on the lent H100s of 2026-11-28, where 3 and 7
     * also divide: 2 runs of 5 had such shares) */
    enum { XC_HOST_CHUNKS = 19 };
    spec_base(&s, VARIANT_HOST_OVERLAP, 1u << 22, XC_HOST_CHUNKS);
    s.reps = 5;
    s.warmup = 2;
    s.trace_ops = TRACE_SAMPLED;
    s.timing = TIMING_CUPTI;
    result_t rx;
    if (run_shared(&s, &rx, &shares) != SL_OK)
        return;
    json_t *xc = json_object_get(json_object_get(rx.extra, "timing"), "cross_check");
    json_t *ops = json_object_get(xc, "ops");
    json_int_t xshares = json_integer_value(json_object_get(xc, "shares"));
    int host_rows = 0;
    double ev_len = 0, cu_len = 0;
    for (size_t i = 0; i < json_array_size(ops); i++) {
        json_t *row = json_array_get(ops, i);
        const char *op = json_string_value(json_array_get(row, 0));
        if (!op || strcmp(op, "host") != 0)
            continue;
        host_rows++;
        ev_len = json_number_value(json_array_get(row, 3)) - json_number_value(json_array_get(row, 2));
        cu_len = json_number_value(json_array_get(row, 5)) - json_number_value(json_array_get(row, 4));
    }
    CHECK(host_rows == 1, "host_overlap 2^22 x%d cupti: expected the host's row in cross_check.ops, got %d",
          XC_HOST_CHUNKS, host_rows);
    CHECK(host_rows != 1 || fabs(ev_len - cu_len) < 0.01,
          "host_overlap 2^22 x%d cupti: the cross-check's host work lasts %.3f us by events and %.3f by CUPTI's "
          "timeline: not one rep's (%lld shares)", XC_HOST_CHUNKS, ev_len, cu_len, (long long)xshares);
    bool tells = xshares > 1 && XC_HOST_CHUNKS % xshares != 0;
    printf("  host_overlap 2^22 x%d cupti: cross-check of %lld shares, host work %.1f us by events, %.1f by CUPTI%s\n",
           XC_HOST_CHUNKS, (long long)xshares, ev_len, cu_len,
           tells ? "" : " (shares that divide the chunks: 6343ac4's rule gave the same rep)");
    result_free(&rx);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    machine_discover(&machine, false, "test-gpu");
    if (machine.backend != BACKEND_CUDA || machine.device_count < 1) {
        printf("gpu: skipped (no GPU)\n");
        return 0;
    }
    const device_info_t *d = &machine.devices[0];
    printf("gpu: %d device(s); device 0: %s (%s), cc %d.%d, %d SMs, %d copy engines, %.1f GiB, driver %s, CUDA "
           "runtime %s / driver %s, PCIe gen %d x%d\n",
           machine.device_count, d->name, d->uuid, d->cc_major, d->cc_minor, d->sm_count, d->async_engines,
           (double)d->mem_bytes / (1u << 30), machine.driver_version, machine.cuda_runtime, machine.cuda_driver,
           d->pcie_gen, d->pcie_width);
    CHECK(d->sm_count > 0 && d->max_threads_per_sm > 0 && d->max_blocks_per_sm > 0 && d->mem_bytes > 0,
          "discover: expected positive SMs, threads/SM, blocks/SM, memory");
    CHECK(strncmp(d->uuid, "GPU-", 4) == 0, "discover: expected a GPU- UUID, got %s", d->uuid);

    for (int i = 0; i < machine.device_count; i++) {
        sl_error_t err;
        memset(&err, 0, sizeof err);
        int rc = cuda_calibrate(&machine, i, &err);
        CHECK(rc == SL_OK, "calibrate %d: expected ok, got %s", i, err.message);
        const calibration_t *c = &machine.devices[i].calib;
        printf("calibration %d: h2d %.1f, d2h %.1f, bidir %.1f (min %.1f), pageable h2d %.1f / d2h %.1f, zero-copy "
               "%.1f GB/s; kernel ns/elem blog %.4f fill %.4f compute %.5f + %.5f/round\n",
               i, c->h2d_gbps, c->d2h_gbps, c->bidir_gbps, c->bidir_gbps_min, c->pageable_h2d_gbps,
               c->pageable_d2h_gbps, c->zero_copy_gbps, c->kernel_ns_per_elem[KERNEL_BLOG], c->kernel_ns_per_elem[KERNEL_FILL],
               c->compute_base_ns_per_elem, c->kernel_ns_per_elem[KERNEL_COMPUTE]);
        CHECK(c->compute_base_ns_per_elem >= 0 && c->compute_base_ns_per_elem < 16 * c->kernel_ns_per_elem[KERNEL_COMPUTE],
              "calibrate %d: expected the compute kernel's base within 0 and 16 rounds' cost, got %.5f + %.5f/round", i,
              c->compute_base_ns_per_elem, c->kernel_ns_per_elem[KERNEL_COMPUTE]);
        CHECK(c->valid && c->h2d_gbps > 1 && c->d2h_gbps > 1 && c->bidir_gbps > 1 && c->bidir_gbps_min <= c->bidir_gbps,
              "calibrate %d: expected valid positive bandwidths with min <= peak", i);
        /* a direction alone is never the slower: a peak under the both-ways one is a slow
         * spell the calibration kept (GPU-07d0423b: H2D alone 38.3, both ways 50.7 GB/s) */
        CHECK(c->h2d_gbps >= 0.98 * c->bidir_gbps && c->d2h_gbps >= 0.98 * c->bidir_gbps,
              "calibrate %d: expected each direction alone at least as fast as both at once, got h2d %.1f, d2h %.1f, "
              "both %.1f GB/s",
              i, c->h2d_gbps, c->d2h_gbps, c->bidir_gbps);
        CHECK(c->zero_copy_gbps > 1, "calibrate %d: expected a positive zero-copy rate, got %.2f GB/s", i,
              c->zero_copy_gbps);
        CHECK(c->kernel_ns_per_elem[KERNEL_BLOG] > 0 && c->kernel_ns_per_elem[KERNEL_FILL] > 0 &&
                  c->kernel_ns_per_elem[KERNEL_COMPUTE] > 0,
              "calibrate %d: expected positive kernel times", i);
        /* the host's share of host_overlap, on the CPU: slower than the GPU's kernel, under 1 us
         * an element (lent H100 host, 16 CPUs: blog 1.3 ns); a pageable copy slower than a
         * pinned one */
        printf("calibration %d: host ns/elem blog %.3f fill %.3f compute %.3f/round\n", i,
               c->host_ns_per_elem[KERNEL_BLOG], c->host_ns_per_elem[KERNEL_FILL], c->host_ns_per_elem[KERNEL_COMPUTE]);
        for (int k = 0; k < KERNEL__COUNT; k++)
            CHECK(c->host_ns_per_elem[k] > c->kernel_ns_per_elem[k] && c->host_ns_per_elem[k] < 1000,
                  "calibrate %d: expected the host's %s within the GPU's %.4f and 1000 ns an element, got %.4f", i,
                  kernel_names[k], c->kernel_ns_per_elem[k], c->host_ns_per_elem[k]);
        CHECK(c->pageable_h2d_gbps > 0.1 && c->pageable_h2d_gbps < c->h2d_gbps && c->pageable_d2h_gbps > 0.1 &&
                  c->pageable_d2h_gbps < c->d2h_gbps,
              "calibrate %d: expected pageable copies slower than pinned, got H2D %.1f of %.1f, D2H %.1f of %.1f GB/s",
              i, c->pageable_h2d_gbps, c->h2d_gbps, c->pageable_d2h_gbps, c->d2h_gbps);
        /* host costs from the seeds' 2^22 over 256 streams, depth-first: a chunk (two copies
         * and a launch) within 1-100 us (the lent hosts: 6.9-8.3) */
        double chunk = 2 * c->copy_submit_us + c->kernel_launch_us;
        printf("calibration %d: host copy %.2f us, launch %.2f: %.2f us a chunk\n", i, c->copy_submit_us,
               c->kernel_launch_us, chunk);
        CHECK(c->copy_submit_us > 0 && c->kernel_launch_us > 0 && chunk > 1 && chunk < 100,
              "calibrate %d: expected positive host costs, a chunk of 1-100 us, got copy %.2f launch %.2f", i,
              c->copy_submit_us, c->kernel_launch_us);
        /* the seeds' step over 2^25 against 2^22 (the reference's own tables on the lent
         * H100s and H200s: 1.02-1.55 at 256 streams, async_v1 and v2 averaged) */
        printf("calibration %d: calls over a 128 MiB array cost %.3fx\n", i, c->issue_scale_large);
        CHECK(c->issue_scale_large > 0.8 && c->issue_scale_large < 3,
              "calibrate %d: expected the large array's issue scale within 0.8-3, got %.3f", i,
              c->issue_scale_large);
        /* where that goes, fitted over 1-256 streams: the rep's head (its start event and first
         * H2D, kernel and D2H) and each later call (the lent tables' plain program, fitted the
         * same way: 31-102 us, 0.3-1.3 us; the head moves by tens of us with the host's state).
         * Both are measured (> 0), and the head costs more than one later call. */
        printf("calibration %d: over a 128 MiB array a rep's head costs %.1f us more, each later call %.3f\n", i,
               c->issue_first_large_us, c->issue_call_large_us);
        CHECK(c->issue_first_large_us > 0 && c->issue_call_large_us > 0 && c->issue_first_large_us < 1000 &&
                  c->issue_call_large_us < 20,
              "calibrate %d: expected the first calls' extra within 0-1000 us and a later call's 0-20, got %.1f, %.3f",
              i, c->issue_first_large_us, c->issue_call_large_us);
        CHECK(c->issue_first_large_us > c->issue_call_large_us,
              "calibrate %d: expected the first three calls to cost more than one later call, got %.1f and %.3f", i,
              c->issue_first_large_us, c->issue_call_large_us);
        /* each direction's own copy set-up, around the pooled median (within a factor of 10) */
        printf("calibration %d: copy set-up %.2f us (H2D %.2f, D2H %.2f)\n", i, c->copy_setup_us, c->copy_setup_h2d_us,
               c->copy_setup_d2h_us);
        CHECK(c->copy_setup_h2d_us > 0 && c->copy_setup_d2h_us > 0 &&
                  fmax(c->copy_setup_h2d_us, c->copy_setup_d2h_us) < 10 * fmax(c->copy_setup_us, 0.1),
              "calibrate %d: expected each direction's copy set-up measured and near the pooled %.2f us, got H2D %.2f, "
              "D2H %.2f", i, c->copy_setup_us, c->copy_setup_h2d_us, c->copy_setup_d2h_us);
    }
    if (machine.device_count < 2) {
        printf("  multi_gpu variant: not run (1 GPU here)\n");
        CHECK(machine.devices[0].calib.host_copy_gbps == 0 && machine.devices[0].calib.host_h2d_gbps == 0,
              "calibrate: one GPU has no shared host rate, got %.1f", machine.devices[0].calib.host_copy_gbps);
    } else {
        sl_error_t err = {0};
        int rc = cuda_calibrate_host(&machine, &err);
        CHECK(rc == SL_OK, "calibrate the host side: expected ok, got %s", err.message);
        const calibration_t *c = &machine.devices[0].calib;
        printf("  host side, every GPU both ways at once: %.1f GB/s, %.1f of it H2D (one GPU both ways: %.1f)\n",
               c->host_copy_gbps, c->host_h2d_gbps, 2 * c->bidir_gbps);
        CHECK(c->host_h2d_gbps > 0 && c->host_h2d_gbps < c->host_copy_gbps,
              "calibrate: expected H2D's part of the host rate within it, got %.1f of %.1f", c->host_h2d_gbps,
              c->host_copy_gbps);
        CHECK(c->host_copy_gbps > c->bidir_gbps, "calibrate: expected the GPUs together to move more than one "
              "direction of one GPU, got %.1f GB/s", c->host_copy_gbps);
        for (int i = 1; i < machine.device_count; i++)
            CHECK(machine.devices[i].calib.host_copy_gbps == c->host_copy_gbps,
                  "calibrate: every device carries the machine's host rate");
    }

    /* STREAMLAB_TEST_ONLY=NAME: the calibration and that section alone (a quick look at one
     * part on a lent GPU, e.g. a build with a fix taken out); the whole suite otherwise */
    const char *only = getenv("STREAMLAB_TEST_ONLY");
    if (only && !*only)
        only = NULL; /* set but empty: the whole suite */
    int sections = 0;
#define SECTION(name, title, call)                   \
    do {                                             \
        if (!only || strcmp(only, name) == 0) {      \
            printf("%s:\n", title);                  \
            call;                                    \
            sections++;                              \
        }                                            \
    } while (0)
    SECTION("matrix", "matrix (small: 1000003 elements over 4 streams, every option)", test_matrix(1000003, 4, true));
    SECTION("matrix", "matrix (small: 777 elements over 3 streams, every option)", test_matrix(777, 3, true));
    SECTION("matrix", "matrix (large: 2^25 elements over 8 streams, defaults, pageable, cupti)",
            test_matrix(1u << 25, 8, false));
    SECTION("verification", "verification", test_verify_catches());
    SECTION("graph", "graph", test_graph());
    SECTION("overlap", "overlap", test_overlap());
    SECTION("cupti", "events vs cupti", test_cupti_agrees());
    SECTION("sampled", "trace_ops sampled", test_sampled());
    SECTION("sampled", "trace_ops sampled: host_overlap", test_sampled_host());
    SECTION("extra", "extra", test_extra());
    SECTION("zero_copy", "zero_copy", test_zero_copy());
    SECTION("floor", "floor", test_floor_is_a_lower_bound());
    SECTION("reference", "reference", test_reference_shared());
    SECTION("multi_gpu", "multi_gpu", test_multi_gpu());
#undef SECTION
    CHECK(sections > 0, "STREAMLAB_TEST_ONLY=%s: no such section (matrix, verification, graph, overlap, cupti, "
          "sampled, extra, zero_copy, floor, reference, multi_gpu)", only ? only : "");

    /* issue 19: every stream, event, graph and allocation the runs made is gone again */
    long long objs[CUDA_OBJ__COUNT];
    cuda_objects(objs);
    for (int k = 0; k < CUDA_OBJ__COUNT; k++)
        CHECK(objs[k] == 0, "after every run: expected no CUDA %s alive, %lld are", cuda_obj_names[k], objs[k]);
    printf("cuda objects alive after the suite: %lld streams, %lld events, %lld graphs, %lld graph instances, %lld "
           "pinned and %lld device allocations\n",
           objs[CUDA_OBJ_STREAM], objs[CUDA_OBJ_EVENT], objs[CUDA_OBJ_GRAPH], objs[CUDA_OBJ_GRAPH_EXEC],
           objs[CUDA_OBJ_HOST_ALLOC], objs[CUDA_OBJ_DEVICE_ALLOC]);
    printf("gpu: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
