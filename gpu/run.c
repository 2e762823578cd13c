/* run.c — one spec's plan on one backend, nothing around it: which backend a spec
 * resolves to on this machine, and the plan built, checked for coverage and run on the
 * sim or the CUDA backend. The dispatcher (backend.c) and tuned's trials (tuned.c) both
 * stand on it, so tuned measures its candidates without calling back up. */
#include "run.h"

#include <string.h>

#include "cpu.h"
#include "cuda.h"
#include "devices.h"
#include "plan.h"
#include "sim.h"

int run_resolve(const spec_t *spec, const machine_info_t *m, backend_kind_t *out, sl_error_t *err) {
    if (spec->variant == VARIANT_CPU) {
        *out = BACKEND_CPU;
        return SL_OK;
    }
    switch (spec->backend) {
    case BACKEND_AUTO: *out = m->backend == BACKEND_CUDA ? BACKEND_CUDA : BACKEND_SIM; return SL_OK;
    case BACKEND_SIM: *out = BACKEND_SIM; return SL_OK;
    case BACKEND_CPU:
        return sl_error_set(err, SL_E_INVALID, "backend", "backend \"cpu\" runs only the cpu variant");
    case BACKEND_CUDA:
        if (m->backend != BACKEND_CUDA)
            return sl_error_set(err, SL_E_INVALID, "backend",
                                "backend \"cuda\" requested but this machine has no usable CUDA device%s",
                                cuda_compiled_in() ? "" : " (built without nvcc)");
        *out = BACKEND_CUDA;
        return SL_OK;
    default: break;
    }
    return sl_error_set(err, SL_E_INVALID, "backend", "unknown backend");
}

int run_plan(backend_kind_t be, const spec_t *spec, const machine_info_t *m, result_t *out, sl_error_t *err) {
    plan_t plan;
    int rc = plan_build(spec, &plan, err);
    if (rc)
        return rc;
    rc = plan_check_coverage(&plan, err);
    if (rc == SL_OK)
        rc = be == BACKEND_SIM ? sim_run(spec, &plan, m, out, err) : cuda_run(spec, &plan, m, out, err);
    plan_free(&plan);
    return rc;
}

int run_spec(const spec_t *spec, const machine_info_t *m, result_t *out, sl_error_t *err) {
    memset(out, 0, sizeof *out);
    backend_kind_t be;
    int rc = run_resolve(spec, m, &be, err);
    if (rc == SL_OK)
        rc = be == BACKEND_CPU ? cpu_run(spec, m, out, err) : run_plan(be, spec, m, out, err);
    if (rc)
        result_free(out);
    return rc;
}
