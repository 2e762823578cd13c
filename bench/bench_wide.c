/* bench_wide.c — `make bench-wide`: is the simulated machine the machine it names beyond
 * the seeds' table? bench_sim holds the sim to a plain CUDA program on the seeds' 38 points
 * (blog kernel, pinned, sequential and async v1/v2); a user submits much else: pageable
 * memory, the legacy default stream, non-blocking streams, the cudaStreamQuery flush,
 * max-occupancy launches, other kernels and block sizes, round-robin chunks, the engine
 * streams, tuned, zero-copy, host/GPU overlap, and sizes from 2^20 to 2^27. Each of WIDE's
 * points is measured on this GPU through streamlab's CUDA backend (backend_run, as the
 * service runs an experiment, with the spec's defaults, so sampled timelines between the
 * clean reps; it agrees with the plain program within 5% on the seeds' table, bench_gpu)
 * and simulated from this machine's calibration, taken in the same run. The files measured
 * on 2026-11-27 ran with trace_ops all (a traced rep before every clean one), which their
 * "program" says; since then each point also keeps its clean reps' host issue (issue_us).
 * Since 2026-11-27 02:29 five more points: the blocking twins of the non-blocking and the
 * compute-kernel async_v2 x32 points, measured in the same round, and 2^20 over one stream,
 * 2^21 and 2^23 over four (the small arrays where the sim ran 22-29% quick); older files
 * lack them and are simulated as they are.
 *
 * On a GPU host (--measure): calibrate, measure every point --rounds times (rounds
 * interleaved over the points, so that a slow spell of the machine falls on all alike;
 * each run the median of --reps reps), and write the calibration and the measurements to
 * --out (kept as data: bench/data/wide/KIND-GPU-….json), then simulate them. Anywhere else: each
 * DATA file given, simulated from the machine it carries. --with PROFILE: then from that
 * profile too (a shipped one, profiles/h100.json: what a GPU-less user sees, against the
 * lent GPU that measured DATA). Printed per point: measured and simulated ms, the
 * error, the measured rounds' spread; then the median and largest error and the points
 * over 10%, overall and per group. A benchmark: it prints, it asserts nothing.
 *
 * usage: bench_wide [--measure --out FILE --name NAME [--rounds R] [--reps N] [--cpu N]]
 *                   [--with PROFILE] [--json FILE] [DATA...] */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/backend.h"
#include "gpu/devices.h"
#include "gpu/profile.h"
#include "bench_opts.h"

#define MAX_ROUNDS 9
#define TOO_FAR 0.10

/* "group variant log2size streams [field=value ...]": the spec's other fields keep their
 * defaults (spec_defaults: blog kernel, block 256, pinned, per-thread default stream) */
static const char *const WIDE[] = {
    "pageable sequential 22 1 host_memory=pageable",
    "pageable sequential 25 1 host_memory=pageable",
    "pageable async_v1 22 4 host_memory=pageable",
    "pageable async_v1 25 4 host_memory=pageable",
    "pageable async_v1 25 16 host_memory=pageable",
    "pageable async_v2 25 8 host_memory=pageable",
    "streams async_v1 22 8 default_stream=legacy",
    "streams async_v1 25 8 default_stream=legacy",
    "streams async_v1 22 8 stream_flags=non_blocking",
    "streams async_v2 22 32 stream_flags=non_blocking",
    "streams async_v2 22 32",
    "streams async_v2 22 8 flush=stream_query",
    "streams async_v2 25 8 flush=stream_query",
    "launch async_v1 25 8 launch=max_occupancy",
    "launch async_v1 22 32 launch=max_occupancy",
    "launch async_v1 25 8 block_size=1024",
    "kernel async_v1 25 8 kernel=fill",
    "kernel async_v1 22 8 kernel=compute kernel_iters=64",
    "kernel async_v1 25 8 kernel=compute kernel_iters=64",
    "kernel async_v2 25 32 kernel=compute kernel_iters=16",
    "kernel async_v2 25 32",
    "variant round_robin 25 4 chunks=64",
    "variant round_robin 22 8 chunks=256",
    "variant engine_streams 25 1 chunks=16",
    "variant tuned 25 8",
    "variant zero_copy 25 1",
    "variant zero_copy 22 1",
    "variant host_overlap 22 4 host_share=0.25",
    "size async_v1 20 4",
    "size async_v2 20 4",
    "size async_v1 20 1",
    "size async_v1 21 4",
    "size async_v1 23 4",
    "size async_v1 24 16",
    "size sequential 27 1",
    "size async_v1 27 8",
    "size async_v2 27 32",
};
#define NWIDE ((int)(sizeof WIDE / sizeof WIDE[0]))

static double median_of(const double *v, int n) {
    stats_t st;
    stats_compute(v, (size_t)n, &st);
    return st.median;
}

/* One field=value of a point onto its spec; 0 or -1 */
static int set_field(spec_t *s, const char *k, const char *v) {
    int e;
#define ENUM_FIELD(name, names, count, dst)                                                                            \
    if (strcmp(k, name) == 0) {                                                                                        \
        if ((e = sl_enum_parse(names, count, v)) < 0)                                                                  \
            return -1;                                                                                                 \
        dst = e;                                                                                                       \
        return 0;                                                                                                      \
    }
    ENUM_FIELD("host_memory", host_memory_names, HOSTMEM__COUNT, s->host_memory)
    ENUM_FIELD("default_stream", default_stream_names, DEFSTREAM__COUNT, s->default_stream)
    ENUM_FIELD("stream_flags", stream_flags_names, SFLAGS__COUNT, s->stream_flags)
    ENUM_FIELD("flush", flush_names, FLUSH__COUNT, s->flush)
    ENUM_FIELD("launch", launch_names, LAUNCH__COUNT, s->launch)
    ENUM_FIELD("kernel", kernel_names, KERNEL__COUNT, s->kernel)
#undef ENUM_FIELD
    if (strcmp(k, "kernel_iters") == 0)
        return (s->kernel_iters = atoi(v)) > 0 ? 0 : -1;
    if (strcmp(k, "block_size") == 0)
        return (s->block_size = atoi(v)) > 0 ? 0 : -1;
    if (strcmp(k, "chunks") == 0)
        return (s->chunks = atoi(v)) > 0 ? 0 : -1;
    if (strcmp(k, "host_share") == 0)
        return (s->host_share = atof(v)) > 0 ? 0 : -1;
    return -1;
}

/* A WIDE line as a spec (reps, backend) and its group; 0 or -1 (said on stderr) */
static int point_spec(const char *line, int reps, backend_kind_t be, spec_t *s, char group[32]) {
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", line);
    char *g = strtok_r(buf, " ", &save), *v = strtok_r(NULL, " ", &save), *lg = strtok_r(NULL, " ", &save),
         *st = strtok_r(NULL, " ", &save);
    int variant = v ? sl_enum_parse(variant_names, VARIANT__COUNT, v) : -1;
    if (!g || variant < 0 || !lg || !st) {
        fprintf(stderr, "bench_wide: bad point \"%s\"\n", line);
        return -1;
    }
    snprintf(group, 32, "%s", g);
    spec_defaults(s, (variant_t)variant);
    s->size = 1ull << atoi(lg);
    s->streams = s->chunks = atoi(st);
    s->reps = reps;
    s->backend = be;
    for (char *kv = strtok_r(NULL, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || (*eq = 0, set_field(s, kv, eq + 1))) {
            fprintf(stderr, "bench_wide: bad field in \"%s\"\n", line);
            return -1;
        }
    }
    return 0;
}

/* Every point measured on this GPU, rounds interleaved: {program, reps, warmup, rounds,
 * cpu, points: [{point, median_ms, rounds_ms}]}, or NULL (said why) */
static json_t *measure(const machine_info_t *m, int rounds, int reps, int cpu) {
    static double ms[NWIDE][MAX_ROUNDS], issue[NWIDE][MAX_ROUNDS];
    spec_t s;
    char group[32];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < NWIDE; i++) {
            result_t res;
            sl_error_t err = {0};
            if (point_spec(WIDE[i], reps, BACKEND_CUDA, &s, group))
                return NULL;
            if (backend_run(&s, m, &res, &err) != SL_OK) {
                fprintf(stderr, "bench_wide: %s: %s\n", WIDE[i], err.message);
                return NULL;
            }
            ms[i][r] = res.total_ms.median;
            /* the host's issue of a clean rep (µs), where the run says it: where the host sets the pace */
            issue[i][r] = json_number_value(json_object_get(json_object_get(res.extra, "timing"), "issue_us_clean"));
            result_free(&res);
        }
        fprintf(stderr, "bench_wide: round %d of %d measured\n", r + 1, rounds);
    }
    json_t *points = json_array();
    for (int i = 0; points && i < NWIDE; i++) {
        json_t *rj = json_array();
        for (int r = 0; rj && r < rounds; r++)
            json_array_append_new(rj, json_real(ms[i][r]));
        json_array_append_new(points, json_pack("{s:s, s:f, s:o*, s:f}", "point", WIDE[i], "median_ms",
                                                median_of(ms[i], rounds), "rounds_ms", rj, "issue_us",
                                                median_of(issue[i], rounds)));
    }
    spec_defaults(&s, VARIANT_ASYNC_V1);
    return points ? json_pack("{s:s, s:i, s:i, s:i, s:i, s:o}", "program",
                              "streamlab's CUDA backend (backend_run), the spec's defaults but for the point's fields",
                              "reps", reps, "warmup", s.warmup, "rounds", rounds, "cpu", cpu, "points", points)
                  : NULL;
}

typedef struct tally {
    char group[32];
    double err[NWIDE];
    int n, over;
} tally_t;

static void tally_add(tally_t *t, double e) {
    if (t->n < NWIDE)
        t->err[t->n++] = e;
    t->over += e > TOO_FAR;
}

static void tally_print(const tally_t *t) {
    double mx = 0;
    for (int i = 0; i < t->n; i++)
        mx = fmax(mx, t->err[i]);
    printf("  %-10s %3d points  median error %5.1f%%  largest %5.1f%%  over 10%%: %d\n", t->group, t->n,
           100 * median_of(t->err, t->n), 100 * mx, t->over);
}

/* The measured points of `data` (from file `label`) simulated from `profile` (a profile or
 * a data file: its machine; from file `sim_label`); the table and the errors printed, each
 * point a JSON line to jf. 0, or -1. */
static int evaluate(const json_t *profile, const char *sim_label, const json_t *data, const char *label, FILE *jf) {
    machine_info_t m;
    sl_error_t err = {0};
    if (profile_machine(profile, &m, &err) != SL_OK) {
        fprintf(stderr, "bench_wide: %s: %s (%s)\n", label, err.message, err.field);
        return -1;
    }
    const json_t *meta = json_object_get(data, "profile"), *wide = json_object_get(data, "wide");
    const json_t *points = json_object_get(wide, "points"), *p;
    if (!json_array_size(points)) {
        fprintf(stderr, "bench_wide: %s: no measured points\n", label);
        return -1;
    }
    printf("\n%s: measured %s on %s (%s), %d rounds of %d reps\nsimulated as %s (%s)\n", label,
           json_string_value(json_object_get(meta, "measured_at")),
           json_string_value(json_object_get(meta, "gpu_name")), json_string_value(json_object_get(meta, "gpu_uuid")),
           (int)json_integer_value(json_object_get(wide, "rounds")),
           (int)json_integer_value(json_object_get(wide, "reps")), m.devices[0].name, sim_label);
    printf("%-52s %10s %10s %8s %8s\n", "point", "measured", "sim_ms", "error", "spread");
    tally_t groups[16], all = {"all", {0}, 0, 0};
    int ngroups = 0;
    size_t i;
    json_array_foreach(points, i, p) {
        const char *key = json_string_value(json_object_get(p, "point"));
        double meas = json_number_value(json_object_get(p, "median_ms"));
        spec_t s;
        char group[32];
        if (!key || !(meas > 0) || point_spec(key, 10, BACKEND_SIM, &s, group))
            continue;
        result_t r;
        if (backend_run(&s, &m, &r, &err) != SL_OK) {
            printf("%-52s  sim failed: %s\n", key, err.message);
            continue;
        }
        double sim = r.total_ms.median, e = (sim - meas) / meas;
        result_free(&r);
        const json_t *rounds = json_object_get(p, "rounds_ms"), *x;
        double lo = INFINITY, hi = 0;
        size_t k;
        json_array_foreach(rounds, k, x) {
            lo = fmin(lo, json_number_value(x));
            hi = fmax(hi, json_number_value(x));
        }
        double spread = hi > 0 ? (hi - lo) / meas : 0;
        printf("%-52s %10.3f %10.3f %+7.1f%% %7.1f%%%s\n", key, meas, sim, 100 * e, 100 * spread,
               fabs(e) > TOO_FAR ? "  <" : "");
        int gi = 0;
        while (gi < ngroups && strcmp(groups[gi].group, group) != 0)
            gi++;
        if (gi == ngroups && ngroups < 16) {
            memset(&groups[gi], 0, sizeof groups[gi]);
            snprintf(groups[gi].group, sizeof groups[gi].group, "%s", group);
            ngroups++;
        }
        if (gi < ngroups)
            tally_add(&groups[gi], fabs(e));
        tally_add(&all, fabs(e));
        if (jf) {
            json_t *line = json_pack("{s:s, s:s?, s:s, s:f, s:f, s:f, s:f}", "sim_from", sim_label, "gpu_uuid",
                                     json_string_value(json_object_get(meta, "gpu_uuid")), "point", key,
                                     "measured_ms", meas, "sim_ms", sim, "error", e, "spread", spread);
            if (line) {
                char *text = json_dumps(line, JSON_COMPACT);
                if (text)
                    fprintf(jf, "%s\n", text);
                free(text);
                json_decref(line);
            }
        }
    }
    printf("errors (|sim - measured| / measured):\n");
    for (int g = 0; g < ngroups; g++)
        tally_print(&groups[g]);
    tally_print(&all);
    return 0;
}

int main(int argc, char **argv) {
    const char *out_path = NULL, *name = NULL, *json_path = NULL, *with_path = NULL, *data_paths[16];
    int ndata = 0, rounds = 3, reps = 10, cpu = -1;
    bool measure_here = false;
    const bench_opt_t opts[] = {
        {"--measure", OPT_FLAG, &measure_here}, {"--out", OPT_STR, &out_path},  {"--name", OPT_STR, &name},
        {"--with", OPT_STR, &with_path},        {"--json", OPT_STR, &json_path}, {"--rounds", OPT_INT, &rounds},
        {"--reps", OPT_INT, &reps},             {"--cpu", OPT_INT, &cpu},
    };
    if (bench_options(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), data_paths, 16, &ndata,
                      "usage: bench_wide [--measure --out FILE --name NAME [--rounds R] [--reps N] [--cpu N]] "
                      "[--with PROFILE] [--json FILE] [DATA...]"))
        return 2;
    if (rounds < 1 || rounds > MAX_ROUNDS || reps < 1 || reps > SPEC_MAX_REPS || (measure_here && (!out_path || !name))) {
        fprintf(stderr, "bench_wide: --measure needs --out and --name; --rounds is 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    FILE *jf = json_path ? fopen(json_path, "w") : NULL;
    if (json_path && !jf) {
        fprintf(stderr, "bench_wide: cannot write %s\n", json_path);
        return 1;
    }
    json_t *with = with_path ? bench_load_json(with_path, "bench_wide") : NULL;
    if (with_path && !with)
        return 1;
    int rc = 0;
    if (measure_here) {
        static machine_info_t m;
        /* unpinned, as the service runs (--cpu N: the calibration and the runs from CPU N;
         * host_overlap's OpenMP share then runs there too, on one CPU) */
        cpu = bench_pin_cpu(cpu, "bench_wide");
        machine_discover(&m, false, name);
        if (m.backend != BACKEND_CUDA) {
            printf("bench-wide: no GPU here: nothing to measure\n");
        } else {
            sl_error_t err = {0};
            if (machine_calibrate(&m, &err) != SL_OK) {
                fprintf(stderr, "bench_wide: calibration failed: %s\n", err.message);
                return 1;
            }
            json_t *wide = measure(&m, rounds, reps, cpu);
            json_t *p = wide ? profile_to_json(&m, name, NULL) : NULL;
            if (!p || json_object_set_new(p, "wide", wide) || json_dump_file(p, out_path, JSON_INDENT(1)) != 0) {
                fprintf(stderr, "bench_wide: cannot write %s\n", out_path);
                return 1;
            }
            printf("bench-wide: wrote %s\n", out_path);
            rc = evaluate(p, "its own calibration", p, out_path, jf);
            if (rc == 0 && with)
                rc = evaluate(with, with_path, p, out_path, jf);
            json_decref(p);
        }
    }
    for (int i = 0; rc == 0 && i < ndata; i++) {
        json_t *d = bench_load_json(data_paths[i], "bench_wide");
        rc = d ? evaluate(d, "its own calibration", d, data_paths[i], jf) : -1;
        if (rc == 0 && with)
            rc = evaluate(with, with_path, d, data_paths[i], jf);
        json_decref(d);
    }
    json_decref(with);
    if (jf)
        fclose(jf);
    return rc ? 1 : 0;
}
