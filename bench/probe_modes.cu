/* probe_modes.cu — what picks the mode of a many-stream pipeline (issue 18), in plain CUDA
 * sharing no code with streamlab: the seeds' v1 or v2 steps exactly as bench/ref_overlap.cu
 * runs them (one pinned array, the blog's kernel, block 256, streams from cudaStreamCreate,
 * events on the legacy default stream), set up afresh for every trial. Before a trial's
 * streams it creates PAD streams, so that the number of streams this process has created
 * before the trial's first one is OFFSET (mod 16), where OFFSET steps 0..15 over the trials;
 * "keep" keeps the pads alive through the trial, "drop" destroys them before it. Where the
 * runtime hands streams to its hardware queues in turn, OFFSET moves which queue stream 0
 * lands on; where the mode follows OFFSET, it is that.
 *
 * usage: probe_modes v1|v2 SIZE STREAMS REPS TRIALS keep|drop [stamps]
 * prints one line a trial: "trial T offset O pad P created C median MS min MS max MS reps MS...",
 * every rep checked (a[i] == 1). With "stamps" the kernels stamp their first block's start
 * and last block's end on the GPU's global timer, and every rep prints a line
 * "rep T R MS K0S K0E K1S K1E ..." (us from the rep's earliest kernel start).
 * PROBE_EVENTS=K (a diagnostic): a CUDA event recorded after each op of the first K streams,
 * as a timeline traced by events puts them, to see what the records do to the modes.
 * PROBE_EDGES=1 (with stamps): a one-thread kernel on the legacy stream stamps the rep's start
 * (right after the start event) and its end (after every stream, before the stop event), and
 * the rep line gains "edges S E" (us from the earliest kernel start; S negative): where a
 * rep's time goes before its first kernel, between its kernels and after its last, untraced.
 * PROBE_CALLS=1 (with stamps): the host's clock (CLOCK_REALTIME) read as each call of a rep returns,
 * every rep a line "calls T R T0 S H0 K0 D0 H1 K1 D1 ..." (T0: the kernels' earliest start on the
 * global timer, ns; S: the start event's call, ns on the host's clock; the rest µs after S, in
 * issue order per stream: H2D, kernel, D2H), and before the trials "clock HOST_NS GPU_NS HOST_NS"
 * lines: the host's clock before and after a one-thread kernel's stamp of the global timer, to
 * set the two clocks side by side. An untraced rep's own issue, against its kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed_kernel.cuh"

#define MAX_STREAMS 1024

__device__ unsigned long long now_ns(void) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

/* the same kernel, stamping on the GPU's global timer when its first block starts (st[0],
 * the earliest block start) and its last block ends (st[1]): no host work, no event */
__global__ void kernel_stamped(float *a, int offset, unsigned long long *st, unsigned *done) {
    if (threadIdx.x == 0)
        atomicMin(&st[0], now_ns());
    seed_step(a, offset + threadIdx.x + blockIdx.x * blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(done, 1u) == gridDim.x - 1)
            st[1] = now_ns();
    }
}

/* one thread stamping the global timer: the rep's edges on the kernels' clock */
__global__ void edge_stamp(unsigned long long *at) {
    *at = now_ns();
}

#include "probe_util.cuh"

static unsigned long long host_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void launch(int stamps, float *d_a, int off, int count, cudaStream_t st, unsigned long long *stamp,
                   unsigned *done) {
    if (stamps)
        kernel_stamped<<<count / BLOCK, BLOCK, 0, st>>>(d_a, off, stamp, done);
    else
        kernel<<<count / BLOCK, BLOCK, 0, st>>>(d_a, off);
}

int main(int argc, char **argv) {
    if ((argc != 7 && (argc != 8 || strcmp(argv[7], "stamps"))) || (strcmp(argv[1], "v1") && strcmp(argv[1], "v2")) ||
        (strcmp(argv[6], "keep") && strcmp(argv[6], "drop"))) {
        fprintf(stderr, "usage: probe_modes v1|v2 SIZE STREAMS REPS TRIALS keep|drop [stamps]\n");
        return 2;
    }
    int v2 = strcmp(argv[1], "v2") == 0, keep = strcmp(argv[6], "keep") == 0, stamps = argc == 8;
    int edges = stamps && getenv("PROBE_EDGES") && atoi(getenv("PROBE_EDGES")) == 1;
    int calls = stamps && getenv("PROBE_CALLS") && atoi(getenv("PROBE_CALLS")) == 1;
    size_t n = strtoull(argv[2], NULL, 0);
    int nstreams = atoi(argv[3]), reps = atoi(argv[4]), trials = atoi(argv[5]);
    if (nstreams < 1 || nstreams > MAX_STREAMS || reps < 1 || trials < 1 || n == 0 || n > 0x7fffffffu ||
        n % ((size_t)nstreams * BLOCK)) {
        fprintf(stderr, "probe_modes: SIZE must divide by STREAMS x %d\n", BLOCK);
        return 2;
    }
    size_t bytes = n * sizeof(float);
    int streamSize = (int)(n / (size_t)nstreams);
    size_t streamBytes = (size_t)streamSize * sizeof(float);
    static cudaStream_t stream[MAX_STREAMS], pad[16];
    static cudaEvent_t marks[MAX_STREAMS][3];
    int nmarked = getenv("PROBE_EVENTS") ? atoi(getenv("PROBE_EVENTS")) : 0;
    nmarked = nmarked < 0 ? 0 : nmarked > nstreams ? nstreams : nmarked;
    long created = 0;
    float *times = (float *)malloc((size_t)reps * sizeof(float));
    if (!times)
        return 1;
    CK(cudaFree(0));
    for (int i = 0; i < nmarked; i++)
        for (int j = 0; j < 3; j++)
            CK(cudaEventCreate(&marks[i][j]));
    unsigned long long *d_st, *h_st;
    unsigned *d_done;
    CK(cudaMalloc((void **)&d_st, (2 * (size_t)nstreams + 2) * sizeof *d_st));
    CK(cudaMalloc((void **)&d_done, (size_t)nstreams * sizeof *d_done));
    CK(cudaMallocHost((void **)&h_st, (2 * (size_t)nstreams + 2) * sizeof *h_st));
    unsigned long long *at = (unsigned long long *)malloc((3 * (size_t)nstreams + 1) * sizeof *at);
    if (!at)
        return 1;
    for (int k = 0; calls && k < 20; k++) { /* the two clocks side by side */
        unsigned long long before = host_ns();
        edge_stamp<<<1, 1>>>(d_st);
        CK(cudaDeviceSynchronize());
        unsigned long long after = host_ns();
        CK(cudaMemcpy(h_st, d_st, sizeof *h_st, cudaMemcpyDeviceToHost));
        printf("clock %llu %llu %llu\n", before, h_st[0], after);
    }
    for (int t = 0; t < trials; t++) {
        int offset = t % 16;
        int npad = (int)(((offset - created) % 16 + 16) % 16);
        float *a, *d_a;
        cudaEvent_t start_ev, stop_ev;
        for (int i = 0; i < npad; i++)
            CK(cudaStreamCreate(&pad[i]));
        created += npad;
        if (!keep)
            for (int i = 0; i < npad; i++)
                CK(cudaStreamDestroy(pad[i]));
        CK(cudaMallocHost((void **)&a, bytes));
        CK(cudaMalloc((void **)&d_a, bytes));
        CK(cudaEventCreate(&start_ev));
        CK(cudaEventCreate(&stop_ev));
        long before = created;
        for (int i = 0; i < nstreams; i++)
            CK(cudaStreamCreate(&stream[i]));
        created += nstreams;
        for (int r = -2; r < reps; r++) {
            memset(a, 0, bytes);
            if (stamps) {
                CK(cudaMemset(d_st, 0xff, 2 * (size_t)nstreams * sizeof *d_st));
                CK(cudaMemset(d_done, 0, (size_t)nstreams * sizeof *d_done));
                CK(cudaDeviceSynchronize());
            }
            CK(cudaEventRecord(start_ev, 0));
            if (calls)
                at[0] = host_ns();
            if (edges)
                edge_stamp<<<1, 1, 0, 0>>>(d_st + 2 * nstreams);
            for (int i = 0; i < nstreams; ++i) {
                int off = i * streamSize;
                CK(cudaMemcpyAsync(&d_a[off], &a[off], streamBytes, cudaMemcpyHostToDevice, stream[i]));
                if (calls)
                    at[1 + 3 * i] = host_ns();
                if (i < nmarked)
                    CK(cudaEventRecord(marks[i][0], stream[i]));
                if (!v2) {
                    launch(stamps, d_a, off, streamSize, stream[i], d_st + 2 * i, d_done + i);
                    if (calls)
                        at[2 + 3 * i] = host_ns();
                    if (i < nmarked)
                        CK(cudaEventRecord(marks[i][1], stream[i]));
                    CK(cudaMemcpyAsync(&a[off], &d_a[off], streamBytes, cudaMemcpyDeviceToHost, stream[i]));
                    if (calls)
                        at[3 + 3 * i] = host_ns();
                    if (i < nmarked)
                        CK(cudaEventRecord(marks[i][2], stream[i]));
                }
            }
            for (int i = 0; v2 && i < nstreams; ++i) {
                launch(stamps, d_a, i * streamSize, streamSize, stream[i], d_st + 2 * i, d_done + i);
                if (calls)
                    at[2 + 3 * i] = host_ns();
                if (i < nmarked)
                    CK(cudaEventRecord(marks[i][1], stream[i]));
            }
            for (int i = 0; v2 && i < nstreams; ++i) {
                int off = i * streamSize;
                CK(cudaMemcpyAsync(&a[off], &d_a[off], streamBytes, cudaMemcpyDeviceToHost, stream[i]));
                if (calls)
                    at[3 + 3 * i] = host_ns();
                if (i < nmarked)
                    CK(cudaEventRecord(marks[i][2], stream[i]));
            }
            if (edges)
                edge_stamp<<<1, 1, 0, 0>>>(d_st + 2 * nstreams + 1);
            CK(cudaGetLastError());
            CK(cudaEventRecord(stop_ev, 0));
            CK(cudaEventSynchronize(stop_ev));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, start_ev, stop_ev));
            for (size_t i = 0; i < n; i++)
                if (!(fabsf(a[i] - 1.0f) <= 1e-4f)) {
                    fprintf(stderr, "probe_modes: element %zu is %g, not 1\n", i, a[i]);
                    return 1;
                }
            if (r >= 0)
                times[r] = ms;
            if (stamps && r >= 0) {
                CK(cudaMemcpy(h_st, d_st, (2 * (size_t)nstreams + 2) * sizeof *h_st, cudaMemcpyDeviceToHost));
                unsigned long long t0 = h_st[0];
                for (int i = 0; i < nstreams; i++)
                    t0 = h_st[2 * i] < t0 ? h_st[2 * i] : t0;
                printf("rep %d %d %.4f", t, r, ms);
                for (int i = 0; i < 2 * nstreams; i++)
                    printf(" %.1f", (double)(h_st[i] - t0) / 1e3);
                if (edges)
                    printf(" edges %.1f %.1f", ((double)h_st[2 * nstreams] - (double)t0) / 1e3,
                           ((double)h_st[2 * nstreams + 1] - (double)t0) / 1e3);
                printf("\n");
                if (calls) {
                    printf("calls %d %d %llu %llu", t, r, t0, at[0]);
                    for (int i = 1; i <= 3 * nstreams; i++)
                        printf(" %.2f", (double)(long long)(at[i] - at[0]) / 1e3);
                    printf("\n");
                }
            }
        }
        qsort(times, (size_t)reps, sizeof *times, cmp_float);
        printf("trial %d offset %d pad %d created %ld median %.4f min %.4f max %.4f reps", t, (int)(before % 16), npad,
               before, times[reps / 2], times[0], times[reps - 1]);
        for (int r = 0; r < reps; r++)
            printf(" %.4f", times[r]);
        printf("\n");
        fflush(stdout);
        for (int i = 0; i < nstreams; i++)
            CK(cudaStreamDestroy(stream[i]));
        if (keep)
            for (int i = 0; i < npad; i++)
                CK(cudaStreamDestroy(pad[i]));
        CK(cudaEventDestroy(start_ev));
        CK(cudaEventDestroy(stop_ev));
        CK(cudaFreeHost(a));
        CK(cudaFree(d_a));
    }
    for (int i = 0; i < nmarked; i++)
        for (int j = 0; j < 3; j++)
            CK(cudaEventDestroy(marks[i][j]));
    CK(cudaFree(d_st));
    CK(cudaFree(d_done));
    CK(cudaFreeHost(h_st));
    free(at);
    free(times);
    return 0;
}
