/* cuda_stub.c — the CUDA backend's door when the build had no nvcc: no devices are
 * discovered, and calibrating or running says plainly that CUDA was not compiled in.
 * The Makefile compiles this file instead of gpu/cuda_*.cu; it must stay free of CUDA. */
#include "cuda.h"

int cuda_discover(machine_info_t *m) {
    (void)m;
    return 0;
}

int cuda_calibrate(machine_info_t *m, int index, sl_error_t *err) {
    (void)m;
    return sl_error_set(err, SL_E_UNAVAILABLE, "", "cannot calibrate device %d: streamlab was built without CUDA "
                        "(nvcc not found at build time)", index);
}

int cuda_calibrate_host(machine_info_t *m, sl_error_t *err) {
    (void)m;
    return sl_error_set(err, SL_E_UNAVAILABLE, "", "cannot calibrate the host's copies: streamlab was built without "
                        "CUDA (nvcc not found at build time)");
}

int cuda_copies_both_ways(const machine_info_t *m, int index, uint64_t bytes, int reps, double *min_ms,
                          double *median_ms, sl_error_t *err) {
    (void)m;
    (void)bytes;
    (void)reps;
    *min_ms = *median_ms = 0;
    return sl_error_set(err, SL_E_UNAVAILABLE, "", "cannot time copies on device %d: streamlab was built without "
                        "CUDA (nvcc not found at build time)", index);
}

void cuda_reference_keep(bool on) {
    (void)on;
}

uint64_t cuda_reference_count(void) {
    return 0;
}

void cuda_objects(long long out[CUDA_OBJ__COUNT]) {
    for (int k = 0; k < CUDA_OBJ__COUNT; k++)
        out[k] = 0;
}

int cuda_run(const spec_t *spec, const plan_t *plan, const machine_info_t *m, result_t *out, sl_error_t *err) {
    (void)spec;
    (void)plan;
    (void)m;
    (void)out;
    return sl_error_set(err, SL_E_UNAVAILABLE, "backend", "the cuda backend is not available: streamlab was built "
                        "without CUDA (nvcc not found at build time); use backend \"sim\"");
}
