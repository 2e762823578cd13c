/* cpu.h — the CPU baseline (gpu/cpu.c). Only the gpu/ C files include it. */
#ifndef STREAMLAB_CPU_H
#define STREAMLAB_CPU_H

#include "core.h"

/* The CPU baseline: the kernel over the array with OpenMP, timed and verified. */
int cpu_run(const spec_t *spec, const machine_info_t *m, result_t *out, sl_error_t *err);

#endif
