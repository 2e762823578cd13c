/* bench_gpu.c — `make bench-gpu`: the seeds' tables on this GPU, checked against an
 * independent program. For 2^22 and 2^25 elements (blog kernel, block 256, pinned):
 * sequential, then async v1 and v2 over 1, 2, 4, ..., 256 streams. Each point runs
 * through streamlab's own path (backend_run: plan, cuda backend, floor) and, just
 * before and just after, through bench/ref_overlap (the blog's code, its own process,
 * answering over a pipe), so both see the machine in the same state. Printed: medians,
 * the floor and efficiency from this run's calibration, and streamlab / reference,
 * which issue 4 requires within 5%. One JSON object per point goes to --json FILE.
 *
 * Both programs issue from one CPU (--cpu, default the last one; -1: unpinned): at many
 * streams the pipeline is bound by the host's issue rate, which varied by up to 40%
 * from run to run on the lent VM, so placement should not be one more difference.
 * Each point runs the
 * reference R+1 times and streamlab R times (--rounds R, default 3), interleaved (ref,
 * sl, ref, ..., sl, ref): compared are the median of each program's medians. At 2^22
 * and many streams the host's issue rate moves by 10-30% from one run to the next on
 * the lent machines, so one run of each would compare two moments, not two programs.
 * Where either program's run medians still differ by more than the tolerance after R
 * rounds, the point goes on, a pair of runs at a time, up to --max-rounds M (default 9):
 * host-bound points are bimodal there (async_v1 x128 at 2^22: streamlab's runs 1.07,
 * 1.53, 1.47 ms, the reference's 1.00, 1.26, 1.35, 1.35), and a median of three runs
 * picks a mode, not the program. The rounds each point took are printed and kept.
 * Beside each ratio: ref/ref, the reference against itself (its even runs over its odd
 * ones), and above, streamlab's runs over the reference's median (a sign test). A miss
 * where the reference misses against itself too, or where streamlab's runs fall on
 * both sides, is marked as within the machine's noise there; it still counts.
 * After each size's tables: the same bytes copied both ways at once with no kernel (what
 * no copy pipeline beats on the machine at that moment), and an estimate of the best a
 * chunked pipeline can do beside it (copies_ceiling), with tuned's time against both.
 *
 * usage: bench_gpu --ref PATH [--reps N] [--warmup N] [--sizes 22,25] [--max-streams N]
 *                  [--cpu N] [--rounds R] [--max-rounds M] [--aa] [--json FILE]
 * --aa: a second reference process in streamlab's place (the seeds' table only), to
 * show what the comparison can resolve on this machine at each point. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu/backend.h"
#include "gpu/cuda.h"
#include "bench_opts.h"
#include "ref_client.h"

#define TOLERANCE 0.05 /* issue 4: streamlab and the reference agree within 5% */
#define MAX_ROUNDS 15

static double median_of(const double *v, int n) {
    stats_t st;
    stats_compute(v, (size_t)n, &st);
    return st.median;
}

/* The reference against itself (an A/A test): the median of its even-numbered runs over
 * that of its odd-numbered ones. Both halves are interleaved with streamlab's runs as
 * the two programs are with each other, so a drift of the machine falls on both: where
 * this ratio is itself over the tolerance, so is any program's at that point. */
static double self_ratio(const double *refs, int n) {
    double even[MAX_ROUNDS + 1], odd[MAX_ROUNDS + 1];
    int ne = 0, no = 0;
    for (int k = 0; k < n; k++) {
        if (k % 2)
            odd[no++] = refs[k];
        else
            even[ne++] = refs[k];
    }
    return ne && no ? median_of(even, ne) / median_of(odd, no) : 1.0;
}

/* The sign test: how many of streamlab's runs sit above the reference's median, and the
 * exact two-sided probability of a split at least that uneven were the two programs
 * the same (each run above or below with even odds). A systematic gap puts all runs on
 * one side (9 of 9: p = 0.004); noise splits them. */
static double sign_p(const double *sls, int n, double ref_median, int *above) {
    int k = 0;
    for (int i = 0; i < n; i++)
        k += sls[i] > ref_median;
    *above = k;
    int hi = k > n - k ? k : n - k;
    double tail = 0, c = 1; /* c = C(n, i), from i = 0 */
    for (int i = 0; i <= n; i++) {
        if (i >= hi)
            tail += c;
        c = c * (double)(n - i) / (double)(i + 1);
    }
    double p = 2.0 * tail / pow(2.0, n);
    return p > 1.0 ? 1.0 : p;
}

/* the runs' medians differ by more than the tolerance: max / min - 1 */
static bool unsettled(const double *v, int n) {
    stats_t st;
    stats_compute(v, (size_t)n, &st);
    return n > 0 && st.min > 0 && st.max / st.min - 1.0 > TOLERANCE;
}

static int bench_cpu = -1; /* the CPU both programs issue from; -1: not pinned */

/* tuned's choice as a spec (extra.tuned: variant, launch, streams, chunks, chunk_ramp,
 * graph) over the tuned spec's other fields; 0, or -1 where the record lacks them. */
static int tuned_spec_of(json_t *t, const spec_t *tuned, spec_t *out) {
    const char *v = json_string_value(json_object_get(t, "variant"));
    const char *l = json_string_value(json_object_get(t, "launch"));
    int vi = v ? sl_enum_parse(variant_names, VARIANT__COUNT, v) : -1;
    int li = l ? sl_enum_parse(launch_names, LAUNCH__COUNT, l) : -1;
    if (vi < 0 || li < 0 || !json_is_integer(json_object_get(t, "streams")) ||
        !json_is_integer(json_object_get(t, "chunks")))
        return -1;
    *out = *tuned;
    out->variant = (variant_t)vi;
    out->launch = (launch_t)li;
    out->streams = (int)json_integer_value(json_object_get(t, "streams"));
    out->chunks = (int)json_integer_value(json_object_get(t, "chunks"));
    out->chunk_ramp = (int)json_integer_value(json_object_get(t, "chunk_ramp"));
    out->graph = json_is_true(json_object_get(t, "graph"));
    return 0;
}

/* Tuned's choice against the best fixed configuration in alternating runs, so that a
 * slow spell of the machine between the table and tuned's own run (seen on the lent
 * H100: the same engine_streams x32 at 2.95 ms in tuned's trials, 3.29 minutes later)
 * does not decide the comparison. Prints both medians of run medians and the ratio. */
static void interleave_pair(const machine_info_t *m, const spec_t *fixed, const char *fixed_name,
                            const spec_t *chosen, int rounds, int *errors) {
    double a[MAX_ROUNDS], b[MAX_ROUNDS];
    for (int k = 0; k < rounds; k++) {
        const spec_t *order[2] = {k % 2 ? chosen : fixed, k % 2 ? fixed : chosen};
        for (int j = 0; j < 2; j++) {
            result_t r;
            sl_error_t err;
            memset(&r, 0, sizeof r);
            memset(&err, 0, sizeof err);
            if (backend_run(order[j], m, &r, &err) != SL_OK) {
                printf("  interleaved: error: %s\n", err.message);
                (*errors)++;
                return;
            }
            (order[j] == fixed ? a : b)[k] = r.total_ms.median;
            result_free(&r);
        }
    }
    double fa = median_of(a, rounds), fb = median_of(b, rounds);
    printf("  interleaved, %d rounds: tuned's choice (%s x%d, %d chunks%s) %.3f ms, %s %.3f ms: tuned / best fixed "
           "%.3f\n",
           rounds, variant_names[chosen->variant], chosen->streams, chosen->chunks, chosen->graph ? ", graph" : "", fb,
           fixed_name, fa, fa > 0 ? fb / fa : 0);
}

/* What no copy pipeline beats on this machine now: the bytes copied both ways at once
 * with no kernel, in the same run. A pipeline of chunks of s bytes pays besides about
 * s / rate (its last chunk's D2H waits for that chunk's H2D and kernel) and a fixed
 * cost c per copy, (bytes / s) c: at best (s = sqrt(c bytes rate)) 2 sqrt(c bytes /
 * rate) over the bare copies, with c the calibration's cost per copy alone
 * (copy_setup_us): the optimistic end, since a copy costs more while the other
 * direction copies (copy_setup_both_us; with that, tuned measured 3-8% under the
 * estimate on the lent H100, with this 0-2% over). Printed beside tuned: how far tuned
 * is from that estimate, and the floor's share of each. */
static void copies_ceiling(const machine_info_t *m, uint64_t size, double floor_ms, double tuned_ms, FILE *jf) {
    double lo = 0, med = 0;
    sl_error_t err;
    memset(&err, 0, sizeof err);
    if (cuda_copies_both_ways(m, 0, size * sizeof(float), 15, &lo, &med, &err) != SL_OK || med <= 0) {
        printf("copies alone: error: %s\n", err.message);
        return;
    }
    double bytes = (double)size * sizeof(float), rate = bytes / (med * 1e3); /* bytes per us */
    double c = m->devices[0].calib.copy_setup_us;
    double bound_ms = med + 2.0 * sqrt(c * bytes / rate) / 1e3;
    printf("copies alone, both ways at once, no kernel: %.3f ms median of 15 (least %.3f), %.1f GB/s each way: "
           "efficiency %.2f, the most any copy pipeline can reach here now\n",
           med, lo, rate / 1e3, floor_ms > 0 ? floor_ms / med : 0);
    printf("  a chunked pipeline adds its last chunk's lag and %.2f us per copy (calibrated alone): at best about %.3f "
           "ms, efficiency %.2f; tuned %.3f ms is %.3f of that\n",
           c, bound_ms, floor_ms > 0 ? floor_ms / bound_ms : 0, tuned_ms, tuned_ms > 0 ? tuned_ms / bound_ms : 0);
    if (jf)
        fprintf(jf,
                "{\"kind\":\"copies_both_ways\",\"size\":%llu,\"median_ms\":%.6f,\"min_ms\":%.6f,\"floor_ms\":%.6f,"
                "\"copy_setup_us\":%.4f,\"pipeline_bound_ms\":%.6f,\"tuned_ms\":%.6f}\n",
                (unsigned long long)size, med, lo, floor_ms, c, bound_ms, tuned_ms);
}

int main(int argc, char **argv) {
    const char *ref_path = NULL, *json_path = NULL, *sizes_arg = "22,25";
    int reps = 20, warmup = 2, max_streams = 256, cpu_arg = -2, rounds = 3, max_rounds = 9;
    bool aa = false; /* --aa: the reference against a second copy of itself */
    const bench_opt_t opts[] = {
        {"--ref", OPT_STR, &ref_path},       {"--reps", OPT_INT, &reps},
        {"--warmup", OPT_INT, &warmup},      {"--sizes", OPT_STR, &sizes_arg},
        {"--max-streams", OPT_INT, &max_streams}, {"--json", OPT_STR, &json_path},
        {"--cpu", OPT_INT, &cpu_arg},        {"--rounds", OPT_INT, &rounds},
        {"--max-rounds", OPT_INT, &max_rounds}, {"--aa", OPT_FLAG, &aa},
    };
    if (bench_options(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), NULL, 0, NULL,
                      "usage: bench_gpu --ref PATH [--reps N] [--warmup N] [--sizes 22,25] [--max-streams N] "
                      "[--cpu N] [--rounds R] [--max-rounds M] [--aa] [--json FILE]"))
        return 2;
    if (max_rounds < rounds)
        max_rounds = rounds;
    if (!ref_path || reps < 1 || rounds < 1 || max_rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench_gpu: --ref PATH is required; --rounds and --max-rounds are 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);

    static machine_info_t m;
    machine_discover(&m, false, "bench-gpu");
    if (m.backend != BACKEND_CUDA) {
        printf("bench-gpu: skipped (no GPU)\n");
        return 0;
    }
    sl_error_t err;
    memset(&err, 0, sizeof err);
    if (cuda_calibrate(&m, 0, &err) != SL_OK) {
        fprintf(stderr, "bench_gpu: calibration failed: %s\n", err.message);
        return 1;
    }
    const device_info_t *d = &m.devices[0];
    const calibration_t *c = &d->calib;
    char date[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
    printf("bench-gpu: %s (%s), driver %s, CUDA %s, %s, host %s\n", d->name, d->uuid, m.driver_version,
           m.cuda_runtime, date, m.cpu);
    printf("calibration: pinned h2d %.1f GB/s, d2h %.1f GB/s, both at once %.1f GB/s per direction (lowest %.1f); "
           "blog kernel %.3f ns/element\n",
           c->h2d_gbps, c->d2h_gbps, c->bidir_gbps, c->bidir_gbps_min, c->kernel_ns_per_elem[KERNEL_BLOG]);

    /* pin this thread (OpenMP's teams still span every CPU: cpu_team_open, gpu/cpu.c) */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bench_cpu = bench_pin_cpu(cpu_arg == -2 ? (int)(ncpu - 1) : cpu_arg, "bench_gpu");
    printf("issuing from CPU %d (both programs)%s\n", bench_cpu, bench_cpu < 0 ? ": unpinned" : "");
    ref_proc_t rp = {0, NULL, NULL, 0};
    ref_proc_t rp_b = {0, NULL, NULL, 0};
    if (ref_start(&rp, ref_path, bench_cpu) != 0 || (aa && ref_start(&rp_b, ref_path, bench_cpu) != 0)) {
        fprintf(stderr, "bench_gpu: cannot start %s\n", ref_path);
        return 1;
    }
    if (aa)
        printf("A/A: a second reference process stands in streamlab's place, started and pinned as the first: the "
               "sl/ref column is then one program against itself, what the comparison can resolve here\n");
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    double worst = 0;
    int points = 0, bad_points = 0, errors = 0, noisy_points = 0, aa_over = 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "%s", sizes_arg);
    for (char *tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
        int log2n = atoi(tok);
        if (log2n < 10 || log2n > 30)
            continue;
        uint64_t size = 1ull << log2n;
        printf("\nsize 2^%d = %llu elements (%.0f MiB), blog kernel, block 256, pinned; medians of %d reps; streamlab "
               "the median of %d runs, the reference of %d, interleaved (up to %d and %d where either program's runs "
               "differ by over 5%%)\n", log2n,
               (unsigned long long)size, (double)size * 4 / (1 << 20), reps, rounds, rounds + 1, max_rounds,
               max_rounds + 1);
        printf("%-10s %7s %12s %10s %10s %9s %8s %7s %9s %10s %8s\n", "variant", "streams", "streamlab_ms", "min_ms",
               "ref_ms", "sl/ref", "ref/ref", "above", "floor_ms", "efficiency", "overlap");
        double ref_kernel_ms = ref_case(&rp, "k", size, 1, reps, warmup);
        double best_fixed_ms = 0;
        char best_fixed[64] = "";
        spec_t best_fixed_spec;
        spec_defaults(&best_fixed_spec, VARIANT_ASYNC_V1);
        for (int v = 0; v < 3; v++) {
            variant_t variant = v == 0 ? VARIANT_SEQUENTIAL : v == 1 ? VARIANT_ASYNC_V1 : VARIANT_ASYNC_V2;
            const char *ref_name = v == 0 ? "seq" : v == 1 ? "v1" : "v2";
            for (int streams = 1; streams <= (v == 0 ? 1 : max_streams); streams *= 2) {
                spec_t s;
                bench_seed_spec(&s, variant, size, streams);
                s.reps = reps;
                s.warmup = warmup;
                s.backend = BACKEND_CUDA;
                double refs[MAX_ROUNDS + 1], sls[MAX_ROUNDS], sl_min = 1e300, sl_max = 0;
                result_t r;
                memset(&r, 0, sizeof r);
                memset(&err, 0, sizeof err);
                int rc = SL_OK, ref_bad = 0, nsl = 0, nref = 0;
                /* ref, then (streamlab, ref) pairs: the base rounds, then more while either
                 * program's runs still disagree */
                refs[nref] = ref_case(&rp, ref_name, size, streams, reps, warmup);
                ref_bad += refs[nref++] <= 0;
                for (int k = 0; k < max_rounds && !ref_bad; k++) {
                    if (k >= rounds && !unsettled(sls, nsl) && !unsettled(refs, nref))
                        break;
                    if (aa) { /* a second reference process in streamlab's place */
                        double b_ms = ref_case(&rp_b, ref_name, size, streams, reps, warmup);
                        if (b_ms <= 0) {
                            ref_bad++;
                            break;
                        }
                        sls[nsl++] = b_ms;
                        sl_min = fmin(sl_min, b_ms);
                        sl_max = fmax(sl_max, b_ms);
                        refs[nref] = ref_case(&rp, ref_name, size, streams, reps, warmup);
                        ref_bad += refs[nref++] <= 0;
                        continue;
                    }
                    result_t rk;
                    memset(&rk, 0, sizeof rk);
                    rc = backend_run(&s, &m, k == 0 ? &r : &rk, &err);
                    if (rc != SL_OK)
                        break;
                    const result_t *got = k == 0 ? &r : &rk;
                    sls[nsl++] = got->total_ms.median;
                    sl_min = fmin(sl_min, got->total_ms.min);
                    sl_max = fmax(sl_max, got->total_ms.max);
                    result_free(&rk);
                    refs[nref] = ref_case(&rp, ref_name, size, streams, reps, warmup);
                    ref_bad += refs[nref++] <= 0;
                }
                double ref_issue_us = rp.last_issue_us;
                if (rc != SL_OK || ref_bad) {
                    printf("%-10s %7d  error: %s\n", variant_names[variant], streams,
                           rc != SL_OK ? err.message : "the reference failed");
                    errors++;
                    result_free(&r);
                    continue;
                }
                json_t *sl_runs = json_array(), *ref_runs = json_array();
                for (int k = 0; k < nref; k++) {
                    if (k < nsl)
                        json_array_append_new(sl_runs, json_real(sls[k]));
                    json_array_append_new(ref_runs, json_real(refs[k]));
                }
                double sl_ms = median_of(sls, nsl);
                double ref = median_of(refs, nref);
                if (best_fixed_ms <= 0 || sl_ms < best_fixed_ms) {
                    best_fixed_ms = sl_ms;
                    snprintf(best_fixed, sizeof best_fixed, "%s x%d", variant_names[variant], streams);
                    best_fixed_spec = s;
                }
                double ratio = sl_ms / ref, self = self_ratio(refs, nref);
                int above = 0;
                double p_sign = sign_p(sls, nsl, ref, &above);
                bool over = fabs(ratio - 1.0) > TOLERANCE, aa_bad = fabs(self - 1.0) > TOLERANCE;
                /* an over that the machine's own noise can make: the reference disagrees
                 * with itself as much, or streamlab's runs are not consistently on one side
                 * (a sign test needs 6 runs to reach p = 0.05 at all: 3 settled runs over
                 * 5% are a plain miss) */
                bool noisy = over && (aa_bad || (nsl >= 6 && p_sign > 0.05));
                points++;
                if (fabs(ratio - 1.0) > worst)
                    worst = fabs(ratio - 1.0);
                bad_points += over;
                noisy_points += noisy;
                aa_over += aa_bad;
                char more[48] = "", sign[16];
                if (nsl > rounds)
                    snprintf(more, sizeof more, "  (%d and %d runs: they differed)", nsl, nref);
                snprintf(sign, sizeof sign, "%d/%d", above, nsl);
                printf("%-10s %7d %12.3f %10.3f %10.3f %9.3f %8.3f %7s %9.3f %10.2f %8.2f%s%s\n", variant_names[variant],
                       streams, sl_ms, sl_min, ref, ratio, self, sign, r.floor_ms, r.floor_ms > 0 ? r.floor_ms / sl_ms : 0,
                       r.overlap,
                       !over   ? ""
                       : noisy ? "  <- over 5%, within this machine's noise here"
                               : "  <- over 5%",
                       more);
                if (variant == VARIANT_SEQUENTIAL)
                    printf("%-10s %7s   (its ops: h2d %.1f GB/s, d2h %.1f GB/s, kernel %.3f ms; the reference's kernel "
                           "alone %.3f ms)\n",
                           "", "", r.h2d_gbps, r.d2h_gbps, r.kernel_ms, ref_kernel_ms);
                if (jf) {
                    json_t *timing = r.extra ? json_object_get(r.extra, "timing") : NULL;
                    json_t *o = json_pack("{s:s, s:I, s:i, s:f, s:O, s:f, s:f, s:O, s:f, s:f, s:f, s:f, s:f, "
                                          "s:f, s:f}",
                                          "variant", variant_names[variant], "size", (json_int_t)size, "streams",
                                          streams, "streamlab_ms", sl_ms, "streamlab_medians_ms", sl_runs,
                                          "streamlab_min_ms", sl_min, "streamlab_max_ms", sl_max, "ref_medians_ms",
                                          ref_runs, "ref_ms", ref, "ratio", ratio, "floor_ms",
                                          r.floor_ms, "efficiency", r.floor_ms > 0 ? r.floor_ms / sl_ms : 0, "overlap",
                                          r.overlap, "h2d_gbps", r.h2d_gbps, "d2h_gbps", r.d2h_gbps);
                    if (o && timing)
                        json_object_set(o, "timing", timing);
                    if (o) {
                        json_object_set_new(o, "ref_issue_us", json_real(ref_issue_us));
                        json_object_set_new(o, "rounds", json_integer(nsl));
                        json_object_set_new(o, "ref_self_ratio", json_real(self));
                        json_object_set_new(o, "streamlab_runs_above_ref", json_integer(above));
                        json_object_set_new(o, "sign_p", json_real(p_sign));
                    }
                    char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
                    if (line)
                        fprintf(jf, "%s\n", line);
                    free(line);
                    json_decref(o);
                }
                json_decref(sl_runs);
                json_decref(ref_runs);
                result_free(&r);
            }
        }
        if (aa) /* the seeds' table alone: nothing below has a reference to stand in */
            continue;
        /* beyond the seeds: one stream per engine chained by events, zero-copy (no copies:
         * one grid-stride kernel on the mapped host array), and the tuned variant (issue
         * order, streams, chunks and chunk ramp chosen on the model), in the same run */
        static const int es_chunks[] = {8, 16, 32, 64};
        double tuned_ms = 0, floor_ms = 0;
        for (int k = -1; k < 5; k++) {
            spec_t s;
            bool zc = k == 4;
            spec_defaults(&s, k < 0 ? VARIANT_TUNED : zc ? VARIANT_ZERO_COPY : VARIANT_ENGINE_STREAMS);
            s.size = size;
            if (!zc) {
                s.streams = k < 0 ? 8 : 3;
                s.chunks = k < 0 ? 8 : es_chunks[k];
            }
            s.reps = reps;
            s.warmup = warmup;
            s.backend = BACKEND_CUDA;
            result_t r;
            memset(&r, 0, sizeof r);
            memset(&err, 0, sizeof err);
            if (backend_run(&s, &m, &r, &err) != SL_OK) {
                printf("%-14s error: %s\n", k < 0 ? "tuned" : zc ? "zero_copy" : "engine_streams", err.message);
                errors++;
                continue;
            }
            floor_ms = r.floor_ms;
            if (k < 0) {
                tuned_ms = r.total_ms.median;
                json_t *t = r.extra ? json_object_get(r.extra, "tuned") : NULL;
                char *why = t ? json_dumps(t, JSON_COMPACT) : NULL;
                printf("%-10s %7s %12.3f %10.3f %10s %9s %9.3f %10.2f %8.2f  chose %s\n", "tuned", "-",
                       r.total_ms.median, r.total_ms.min, "", "", r.floor_ms,
                       r.floor_ms > 0 ? r.floor_ms / r.total_ms.median : 0, r.overlap, why ? why : "?");
                printf("  tuned vs the best fixed configuration measured above (%s, %.3f ms): %.3f\n", best_fixed,
                       best_fixed_ms, best_fixed_ms > 0 ? r.total_ms.median / best_fixed_ms : 0);
                free(why);
                spec_t chosen;
                if (best_fixed_ms > 0 && tuned_spec_of(t, &s, &chosen) == 0)
                    interleave_pair(&m, &best_fixed_spec, best_fixed, &chosen, rounds, &errors);
            } else if (zc) {
                printf("%-10s %7s %12.3f %10.3f %10s %9s %9.3f %10.2f %8.2f  (no copies: one grid-stride kernel on "
                       "mapped memory, %.3f of the best fixed)\n",
                       "zero_copy", "1", r.total_ms.median, r.total_ms.min, "", "", r.floor_ms,
                       r.floor_ms > 0 ? r.floor_ms / r.total_ms.median : 0, r.overlap,
                       best_fixed_ms > 0 ? r.total_ms.median / best_fixed_ms : 0);
            } else {
                printf("%-10s %7s %12.3f %10.3f %10s %9s %9.3f %10.2f %8.2f  (3 streams, %d chunks)\n", "engine_str",
                       "3", r.total_ms.median, r.total_ms.min, "", "", r.floor_ms,
                       r.floor_ms > 0 ? r.floor_ms / r.total_ms.median : 0, r.overlap, es_chunks[k]);
            }
            result_free(&r);
        }
        copies_ceiling(&m, size, floor_ms, tuned_ms, jf);
    }
    if (aa)
        ref_stop(&rp_b);
    ref_stop(&rp);
    if (jf)
        fclose(jf);
    printf("\nthe reference against itself (ref/ref: its even runs over its odd ones) is over 5%% at %d of %d points; "
           "above: streamlab's runs over the reference's median (the sign test: all on one side of 9 is p = 0.004)\n",
           aa_over, points);
    if (bad_points)
        printf("of the %d over 5%%, %d are within this machine's noise there (ref/ref over 5%%, or a sign test p > "
               "0.05); they still count\n",
               bad_points, noisy_points);
    printf("\nbench-gpu: %d points, streamlab vs reference worst %.1f%%, %d over 5%%, %d errors: %s\n", points,
           100.0 * worst, bad_points, errors, bad_points == 0 && errors == 0 && points > 0 ? "PASS" : "FAIL");
    return bad_points == 0 && errors == 0 && points > 0 ? 0 : 1;
}
