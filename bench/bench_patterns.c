/* bench_patterns.c — issue 18: the sim of bench/probe_deps.cu's patterns, to hold the model's copies
 * against the hardware's where nothing but the device sets the pace. For a profile (default: the
 * shipped default sim's), the seeds' async_v1/v2 plans over S chunks are cut down to probe_deps'
 * patterns (h2d; h2d.k and h2d|k with an empty kernel; h2d.d2h; h2d.k.d2h; d2h; k.d2h; h2d/d2h,
 * each D2H in a stream of its own; seeds and seeds.kept, the pipeline itself with and without the
 * array written before each rep) and simulated gated (no
 * host cost: every op queued before any runs) and issued (the profile's host), without the dirty
 * extra but for seeds (probe_deps writes its array once but there). An empty kernel is
 * one block of EMPTY_US. Prints ms and, against its base, us per chunk, as probe_deps does.
 * A probe: it prints, it asserts nothing.
 * usage: bench_patterns [PROFILE.json] */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "gpu/model.h"
#include "gpu/plan.h"
#include "gpu/profile.h"
#include "gpu/sim.h"

#define EMPTY_US 2.0
enum { NPAT = 10 };
static const char *PAT[NPAT] = {"h2d", "h2d.k",   "h2d|k", "h2d.d2h", "h2d.k.d2h",
                                "d2h", "k.d2h", "h2d/d2h", "seeds", "seeds.kept"};
static const int BASE[NPAT] = {0, 0, 0, 3, 3, 5, 5, 3, 4, 4};

/* The pattern's ops of the plan's model input, in place: which kinds stay, kernels made empty,
 * and (h2d/d2h) each D2H moved to a stream of its own, streams + its own. */
static void cut(model_input_t *in, int pat, int streams) {
    if (pat >= 8) /* the seeds' pipeline as it is: its kernel, and (seeds) the dirty extra */
        return;
    bool keep_h = pat <= 4 || pat == 7, keep_k = pat == 1 || pat == 2 || pat == 4 || pat == 6, keep_d = pat >= 3;
    size_t n = 0;
    for (size_t i = 0; i < in->count; i++) {
        model_op_t o = in->ops[i];
        if ((o.kind == PLAN_KERNEL && !keep_k) || (o.kind == PLAN_D2H && !keep_d) || (o.kind == PLAN_H2D && !keep_h))
            continue;
        if (pat == 7 && o.kind == PLAN_D2H) {
            o.stream += streams;
            o.gap_us = 0;
        }
        if (o.kind == PLAN_KERNEL) {
            o.alone_us = EMPTY_US;
            o.blocks = 1;
            o.sat_us = 0;
        }
        o.first_of_kind = false;
        in->ops[n++] = o;
    }
    in->count = n;
    model_mark_first_of_kind(in);
}

static double simulate(const device_info_t *dev, int lg, int streams, int pat, bool gated) {
    spec_t s;
    bench_seed_spec(&s, pat == 2 ? VARIANT_ASYNC_V2 : VARIANT_ASYNC_V1, 1ull << lg, streams);
    s.backend = BACKEND_SIM;
    plan_t plan;
    model_input_t in;
    sl_error_t err = {0};
    if (plan_build(&s, &plan, &err) != SL_OK) {
        fprintf(stderr, "bench_patterns: 2^%d x%d: %s\n", lg, streams, err.message);
        return -1;
    }
    double us = -1;
    if (sim_model_input(&s, &plan, dev, &in, &err) == SL_OK) {
        /* probe_deps writes its array once, not before every rep as the seeds do: no H2D
         * reads lines the CPU has just written, so none pays the dirty extra */
        for (size_t i = 0; pat != 8 && i < in.count && i < plan.count; i++)
            if (plan.ops[i].kind == PLAN_H2D) {
                in.ops[i].alone_us -= plan_dirty_extra_us(&s, &dev->calib, plan.ops[i].offset, plan.ops[i].count);
                in.ops[i].paced_us = 0;
            }
        cut(&in, pat, streams);
        if (gated)
            memset(&in.host, 0, sizeof in.host);
        timeline_t tl;
        memset(&tl, 0, sizeof tl);
        if (model_simulate_reps(&in, 1, 1, &tl, NULL, &err) == SL_OK)
            us = tl.total_us;
        else
            fprintf(stderr, "bench_patterns: 2^%d x%d %s: %s\n", lg, streams, PAT[pat], err.message);
        timeline_free(&tl);
        free(in.ops);
    } else {
        fprintf(stderr, "bench_patterns: 2^%d x%d: %s\n", lg, streams, err.message);
    }
    plan_free(&plan);
    return us < 0 ? -1 : us / 1000.0;
}

int main(int argc, char **argv) {
    machine_info_t m;
    sl_error_t err = {0};
    json_t *profile = NULL;
    if (argc > 1) {
        json_error_t je;
        if (!(profile = json_load_file(argv[1], 0, &je))) {
            fprintf(stderr, "bench_patterns: %s: %s\n", argv[1], je.text);
            return 2;
        }
        if (profile_machine(profile, &m, &err) != SL_OK) {
            fprintf(stderr, "bench_patterns: %s: %s (%s)\n", argv[1], err.message, err.field);
            return 2;
        }
    } else {
        memset(&m, 0, sizeof m);
        m.device_count = 1;
        profile_default_device(&m.devices[0], 0);
    }
    printf("bench_patterns: %s; empty kernel %.1f us\n", m.devices[0].name, EMPTY_US);
    struct {
        int lg, s;
    } pts[] = {{25, 16}, {25, 64}, {25, 128}, {25, 256}, {22, 2},   {22, 4},
               {22, 8},  {22, 32}, {22, 64},  {22, 128}, {22, 256}};
    for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++) {
        double ms[NPAT][2];
        for (int pat = 0; pat < NPAT; pat++)
            for (int g = 0; g < 2; g++)
                ms[pat][g] = simulate(&m.devices[0], pts[k].lg, pts[k].s, pat, g == 1);
        for (int pat = 0; pat < NPAT; pat++) {
            int base = BASE[pat];
            printf("2^%d S %3d %-10s issued %.4f ms gated %.4f ms  over %-7s issued %+6.2f us/chunk gated %+6.2f "
                   "us/chunk\n",
                   pts[k].lg, pts[k].s, PAT[pat], ms[pat][0], ms[pat][1], PAT[base],
                   (ms[pat][0] - ms[base][0]) * 1e3 / pts[k].s, (ms[pat][1] - ms[base][1]) * 1e3 / pts[k].s);
        }
    }
    json_decref(profile);
    return 0;
}
