/* backend.h — the one door into gpu/ for the rooms above it (server/, db/, bench/):
 * what an experiment is and what a run returns (core.h), what this machine is
 * (devices.h), and the dispatcher that checks a spec and runs it on a backend
 * (cuda | cpu | sim), with tuned's choice and a prediction beside it (backend.c).
 *
 * Everything that crosses a room boundary is defined once, in core.h. gpu/ never speaks
 * HTTP or SQL; it may build JSON (jansson) for the free-form parts of a result. */
#ifndef STREAMLAB_BACKEND_H
#define STREAMLAB_BACKEND_H

#include "core.h"
#include "devices.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks a spec against the machine before it is queued: devices exist, memory fits,
 * driver model matches. 0 or SL_E_INVALID with the field named. */
int backend_check(const spec_t *spec, const machine_info_t *m, sl_error_t *err);
/* Run one experiment. On success fills *out (caller frees with result_free). */
int backend_run(const spec_t *spec, const machine_info_t *m, result_t *out, sl_error_t *err);
/* The floor: least time the copies and kernels can take fully overlapped, from calibration. */
double backend_floor_ms(const spec_t *spec, const machine_info_t *m);
/* What this process holds of CUDA now, by cuda_obj_t (streams, events, graphs, graph
 * instances, pinned and device allocations streamlab made and has not freed): after a
 * run, what it held before the run. All 0 without CUDA. */
void backend_cuda_objects(long long out[CUDA_OBJ__COUNT]);

#ifdef __cplusplus
}
#endif
#endif
