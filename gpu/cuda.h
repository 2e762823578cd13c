/* cuda.h — gpu/'s internal door to the CUDA backend (the gpu/cuda_ files). Only the gpu/ C files
 * include it. When the build has no nvcc, gpu/cuda_stub.c provides these and says
 * that CUDA was not compiled in. */
#ifndef STREAMLAB_CUDA_H
#define STREAMLAB_CUDA_H

#include "core.h"
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

/* Every device of m copying both ways at once: the GB/s they move together, the host
 * side's limit, into every device's calib.host_copy_gbps. Nothing where m has one device. */
int cuda_calibrate_host(machine_info_t *m, sl_error_t *err);

/* Bare copies on device `index`: `bytes` H2D and `bytes` D2H at once from one start, no
 * kernel, `reps` times; the least and the median time to the later end (ms). What no
 * copy pipeline of those bytes can beat on this machine now (bench-gpu prints it). */
int cuda_copies_both_ways(const machine_info_t *m, int index, uint64_t bytes, int reps, double *min_ms,
                          double *median_ms, sl_error_t *err);

/* Execute plan for spec on m's devices: warm-up reps, then spec->reps measured reps,
 * every op timed, every rep's output verified against the CPU reference. */
int cuda_run(const spec_t *spec, const plan_t *plan, const machine_info_t *m,
             result_t *out, sl_error_t *err);

/* Keep the CPU reference a run computes for the next runs of this thread with the same
 * kernel, rounds and size (on), or free it (off). A tuned run's trials, its final run and
 * a prediction's basis then check every rep against one reference instead of computing
 * it for each run: at 2^25 elements a compute kernel of 127 rounds costs the host seconds
 * per reference, and tuned runs some sixty. */
void cuda_reference_keep(bool on);
/* How many CPU references this process has computed (what the tests see of the above). */
uint64_t cuda_reference_count(void);

/* What this process holds of CUDA now, as streamlab made it (gpu/cuda_objects.cu): alive
 * streams, events, graphs, graph instances, pinned and device allocations, by
 * cuda_obj_t. All 0 without CUDA. */
void cuda_objects(long long out[CUDA_OBJ__COUNT]);

#ifdef __cplusplus
}
#endif
#endif
