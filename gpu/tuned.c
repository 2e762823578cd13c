/* tuned.c — the tuned variant: every candidate pipeline (issue order x streams x
 * chunks) is predicted on the engine-queue model with this machine's calibration, and
 * the fastest is run. What was tried and why the winner won goes into the result. */
#include "tuned.h"

#include <stdio.h>
#include <stdlib.h>

#include "model.h"
#include "plan.h"
#include "sim.h"

static int predict_ms(const spec_t *spec, const device_info_t *dev, double *ms, sl_error_t *err) {
    plan_t plan;
    int rc = plan_build(spec, &plan, err);
    if (rc)
        return rc;
    model_input_t in;
    rc = sim_model_input(spec, &plan, dev, &in, err);
    plan_free(&plan);
    if (rc)
        return rc;
    timeline_t tl;
    rc = model_simulate(&in, &tl, err);
    free(in.ops);
    if (rc)
        return rc;
    *ms = tl.total_us / 1000.0;
    timeline_free(&tl);
    return SL_OK;
}

int tuned_choose(const spec_t *spec, const machine_info_t *m, spec_t *chosen, json_t **why, sl_error_t *err) {
    static const variant_t variants[] = {VARIANT_ASYNC_V1, VARIANT_ASYNC_V2, VARIANT_ENGINE_STREAMS};
    static const int stream_counts[] = {1, 2, 4, 8, 16, 32, 64};
    static const int chunk_factors[] = {1, 2, 4, 8};
    static const int ramps[] = {0, 1, 2, 3, 4}; /* chunk-size ramp at each end */
    device_info_t dev;
    sim_device_for(m, spec, 0, &dev);
    double best_ms = -1;
    spec_t best = *spec;
    int tried = 0;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        for (size_t si = 0; si < sizeof stream_counts / sizeof stream_counts[0]; si++) {
            int streams = variants[v] == VARIANT_ENGINE_STREAMS ? 3 : stream_counts[si];
            for (size_t ci = 0; ci < sizeof chunk_factors / sizeof chunk_factors[0]; ci++) {
                int chunks = variants[v] == VARIANT_ENGINE_STREAMS ? 2 * stream_counts[si] * chunk_factors[ci]
                                                                   : streams * chunk_factors[ci];
                if (chunks > 512 || (uint64_t)chunks > spec->size)
                    continue;
                for (size_t ri = 0; ri < sizeof ramps / sizeof ramps[0]; ri++) {
                    if (2 * ramps[ri] > chunks / 2)
                        continue;
                    spec_t c = *spec;
                    c.variant = variants[v];
                    c.streams = streams;
                    c.chunks = chunks;
                    c.chunk_ramp = ramps[ri];
                    double ms;
                    sl_error_t e;
                    if (predict_ms(&c, &dev, &ms, &e) != SL_OK)
                        continue;
                    tried++;
                    if (best_ms < 0 || ms < best_ms - 1e-9) {
                        best_ms = ms;
                        best = c;
                    }
                }
            }
        }
    }
    if (best_ms < 0)
        return sl_error_set(err, SL_E_INVALID, "size", "no pipeline fits a size of %llu elements",
                            (unsigned long long)spec->size);
    *chosen = best;
    char reason[256];
    snprintf(reason, sizeof reason,
             "fastest of %d candidates on the engine-queue model with %s's calibration "
             "(bidirectional %.1f GB/s, %d copy engines)",
             tried, dev.name, dev.calib.bidir_gbps, dev.async_engines);
    *why = json_pack("{s:s, s:i, s:i, s:f, s:f, s:i, s:s}", "variant", variant_names[best.variant], "streams",
                     best.streams, "chunks", best.chunks, "chunk_ramp", (double)best.chunk_ramp,
                     "predicted_ms", best_ms, "candidates", tried, "reason", reason);
    return SL_OK;
}
