/* cuda.h — gpu/'s internal door to the CUDA backend (the gpu/cuda_ files). Only the gpu/ C files
 * include it. When the build has no nvcc, gpu/cuda_stub.c provides these and says
 * that CUDA was not compiled in. */
#ifndef STREAMLAB_CUDA_H
#define STREAMLAB_CUDA_H

#include "backend.h"
#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill m->devices from the CUDA runtime (and NVML where the driver has it), set
 * m->cuda_runtime / cuda_driver / driver_version. Returns the device count, 0 where
 * there is no usable GPU (no driver, no device: never an error). */
int cuda_discover(machine_info_t *m);

/* Measure device `index`'s copy bandwidths (pinned H2D, D2H, both at once, pageable)
 * and kernel time per element; fills m->devices[index].calib. */
int cuda_calibrate(machine_info_t *m, int index, sl_error_t *err);

/* Execute plan for spec on m's devices: warm-up reps, then spec->reps measured reps,
 * every op timed, every rep's output verified against the CPU reference. */
int cuda_run(const spec_t *spec, const plan_t *plan, const machine_info_t *m,
             result_t *out, sl_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
