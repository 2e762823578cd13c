/* probe_seeds.cuh — the seeds' pipeline as the device-floor probes run it (probe_small.cu,
 * probe_head.cu), and the spin kernel that gates a case (those two and probe_host.cu). Plain
 * CUDA beside probe_util.cuh and seed_kernel.cuh, which it brings in; like probe_util's
 * helpers it exits on a CUDA error. */
#ifndef STREAMLAB_BENCH_PROBE_SEEDS_CUH
#define STREAMLAB_BENCH_PROBE_SEEDS_CUH

#include "probe_util.cuh"
#include "seed_kernel.cuh"

/* One thread spinning `cycles` SM clocks: a case's streams queue their work behind it. */
__global__ void spin(long long cycles) {
    long long t = clock64();
    while (clock64() - t < cycles) {
    }
}

/* n non-blocking streams and, for each, an untimed event that joins it back. */
static inline void probe_seeds_streams(int n, cudaStream_t *ps, cudaEvent_t *pe) {
    for (int i = 0; i < n; i++) {
        CK(cudaStreamCreateWithFlags(&ps[i], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&pe[i], cudaEventDisableTiming));
    }
}

/* The seeds' pipeline over n elements in S chunks, chunk i in ps[i]: H2D from hf into df, the
 * seeds' kernel, D2H back into hf; depth-first, or (v2) all H2Ds, then all kernels, then all
 * D2Hs. Every stream first waits for e0, recorded on s0 behind whatever the caller queued
 * there (a spin gates the pipeline: every op is queued before any runs), and is joined back
 * into s0 through pe[i]; e1 is recorded after the join. Returns once all is queued. */
static inline void probe_seeds_issue(float *hf, float *df, size_t n, int S, int v2, cudaStream_t s0, cudaStream_t *ps,
                                     cudaEvent_t *pe, cudaEvent_t e0, cudaEvent_t e1) {
    size_t chunk = n / S;
    CK(cudaEventRecord(e0, s0));
    for (int i = 0; i < S; i++) CK(cudaStreamWaitEvent(ps[i], e0, 0));
    for (int ph = 0; ph < (v2 ? 3 : 1); ph++)
        for (int i = 0; i < S; i++) {
            size_t off = (size_t)i * chunk;
            if (!v2 || ph == 0) CK(cudaMemcpyAsync(df + off, hf + off, chunk * 4, cudaMemcpyHostToDevice, ps[i]));
            if (!v2 || ph == 1) kernel<<<(unsigned)(chunk / BLOCK), BLOCK, 0, ps[i]>>>(df, (int)off);
            if (!v2 || ph == 2) CK(cudaMemcpyAsync(hf + off, df + off, chunk * 4, cudaMemcpyDeviceToHost, ps[i]));
        }
    for (int i = 0; i < S; i++) {
        CK(cudaEventRecord(pe[i], ps[i]));
        CK(cudaStreamWaitEvent(s0, pe[i], 0));
    }
    CK(cudaEventRecord(e1, s0));
}

/* probe_seeds_issue, then wait for it: the ms from e0 to e1. */
static inline float probe_seeds_pipeline(float *hf, float *df, size_t n, int S, int v2, cudaStream_t s0,
                                         cudaStream_t *ps, cudaEvent_t *pe, cudaEvent_t e0, cudaEvent_t e1) {
    probe_seeds_issue(hf, df, n, S, v2, s0, ps, pe, e0, e1);
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

#endif
