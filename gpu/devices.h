/* devices.h — what this machine is: host facts, its CUDA devices or the simulated
 * H100, a stable machine id, and calibration (gpu/devices.c). A machine as JSON, and
 * the simulated device, are profile.h's. */
#ifndef STREAMLAB_DEVICES_H
#define STREAMLAB_DEVICES_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Discover this machine: CUDA devices where present, else the simulated H100.
 * force_sim: ignore CUDA devices. Never fails: returns a sim machine at worst. */
void machine_discover(machine_info_t *m, bool force_sim, const char *label);
bool cuda_compiled_in(void);
/* Calibrate every CUDA device (copy bandwidths, kernel rates); the sim's is built in.
 * Returns 0, or the first device's error (the others are still tried). */
int machine_calibrate(machine_info_t *m, sl_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
