/* run.h — one spec's plan on one backend (gpu/run.c), below the dispatcher. */
#ifndef STREAMLAB_RUN_H
#define STREAMLAB_RUN_H

#include "core.h"

/* Resolve spec->backend (auto) for this machine; 0 or SL_E_INVALID / SL_E_UNAVAILABLE. */
int run_resolve(const spec_t *spec, const machine_info_t *m, backend_kind_t *out, sl_error_t *err);
/* Build spec's plan, check that it covers every element once, and run it on be (sim or cuda). */
int run_plan(backend_kind_t be, const spec_t *spec, const machine_info_t *m, result_t *out, sl_error_t *err);
/* A fixed variant's run, nothing around it (no tuned choice, prediction or floor):
 * resolve, then the cpu baseline or the plan. On success fills *out (result_free). */
int run_spec(const spec_t *spec, const machine_info_t *m, result_t *out, sl_error_t *err);

#endif
