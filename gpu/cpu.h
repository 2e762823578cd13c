/* cpu.h — the CPU baseline (gpu/cpu.c), the CPUs an OpenMP team of the host's work runs on,
 * and the output checksum. Only gpu/ (and its unit test) includes it. */
#ifndef STREAMLAB_CPU_H
#define STREAMLAB_CPU_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CPU baseline: the kernel over the array with OpenMP, timed and verified. */
int cpu_run(const spec_t *spec, const machine_info_t *m, result_t *out, sl_error_t *err);

/* An OpenMP team made by a thread pinned to one CPU (--worker-cpu, the benchmarks' issuing
 * thread) inherits that one CPU: libgomp starts its threads with their maker's affinity. On
 * a lent H100's 16 CPUs the calibration's host rate, pinned, read 121.7 ns a blog element,
 * where unpinned it reads 1.0-1.4 (2026-11-27, GPU-a3eb1f87; bench_wide's pinned
 * host_overlap: 87 ms against 1.1-1.4). cpu_team_open gives the calling thread every CPU
 * the process had at its start for the length of a parallel region, so the team it makes
 * (and keeps) spans them; cpu_team_close pins it back. Where the thread already has them,
 * both do nothing. */
typedef struct {
    cpu_set_t saved;
    bool widened;
} cpu_team_t;
void cpu_team_open(cpu_team_t *t);
void cpu_team_close(cpu_team_t *t);
/* How many CPUs the threads of an OpenMP team of nthreads may run on, all together. */
int cpu_team_cpus(int nthreads);

/* A 64-bit checksum of an output's bits, for telling whether a rep's output is the same, bit
 * for bit, as one already checked element by element (gpu/cuda_backend.cu, run_rep). Eight
 * lanes of 32-bit words, each a Fletcher pair of 64-bit sums (a += word; b += a), folded into
 * one (gpu/cpu.c says how): any one word changed, or two different words of one lane swapped,
 * always changes it; other changes all but always (one chance in 2^64 of missing). It reads the
 * array once at the pace of the memory (AVX2 where the CPU has it, else SSE2): it runs between
 * reps, and the time between reps is time the GPU waits (docs/METHOD.md, issue 19).
 * cpu_checksum_portable: the same sums one lane at a time, what runs without either.
 * cpu_checksum_avx2, cpu_checksum_sse2: each path alone, the same sums into *sum, false where
 * this build or this CPU lacks it. cpu_checksum_path: "avx2", "sse2" or "portable", the one
 * cpu_checksum takes here. Built with -DSTREAMLAB_NO_AVX2 (EXTRA_CFLAGS), there is no AVX2 path:
 * for a compiler without target attributes, or to set the SSE2 path against it on one host. */
uint64_t cpu_checksum(const float *buf, uint64_t n);
uint64_t cpu_checksum_portable(const float *buf, uint64_t n);
bool cpu_checksum_avx2(const float *buf, uint64_t n, uint64_t *sum);
bool cpu_checksum_sse2(const float *buf, uint64_t n, uint64_t *sum);
const char *cpu_checksum_path(void);

#ifdef __cplusplus
}
#endif

#endif
