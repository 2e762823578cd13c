/* probe_two_gpus.cu — `make bench-two-gpus`: what the copies of two GPUs of one host do to
 * each other, the question behind multi_gpu's speed-up (docs/METHOD.md, "Two GPUs"). Plain
 * CUDA, nothing of streamlab's code, like ref_overlap.cu.
 * Each case copies B bytes per direction per GPU at once (large single copies, each
 * direction in its own stream, all started together), on GPU 0 alone or on GPUs 0 and 1,
 * H2D alone, D2H alone or both ways, with the host side of the two directions on the same
 * pages (the D2H writes what the H2D reads, as streamlab's calibration does) or on two
 * separate arrays (as a chunked pipeline's H2D and D2H are, a chunk apart). Per case: each
 * direction's GB/s on each GPU over its own time, the median of REPS; cases interleaved.
 * On lent pairs of H100s (2026-11-25): one direction on both GPUs, 53-55 GB/s each (no
 * contention); both directions on both with two arrays, H2D 35-41 and D2H 45-53 on each GPU,
 * 164-184 GB/s together, where one GPU alone moves 46-51 each way. With the same pages,
 * two hosts (GPU-fd7d9f89 + GPU-31349471, GPU-54362e38 + GPU-ae20e1da) gave 162-174,
 * another (GPU-fc1f3bab + GPU-86ce4ca0) none of it, 200-202: the calibration measures with
 * two arrays.
 * GAP_MS: only the calibration's case (both GPUs both ways, 128 MiB), rep by rep.
 * usage: probe_two_gpus [REPS [GAP_MS]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "probe_util.cuh"
enum { G = 2 };
static char *hin[G], *hout[G], *din[G], *dout[G];
static cudaStream_t sh[G], sd[G];
static cudaEvent_t e0[G], eh[G], ed[G];

/* one rep: per GPU the ms of its H2D and its D2H (0 where not run) */
static void rep(int ngpu, int dir, int same, size_t b, float *h2d_ms, float *d2h_ms) {
    for (int g = 0; g < G; g++)
        h2d_ms[g] = d2h_ms[g] = 0;
    for (int g = 0; g < ngpu; g++) {
        CK(cudaSetDevice(g));
        CK(cudaEventRecord(e0[g], sh[g]));
        CK(cudaStreamWaitEvent(sd[g], e0[g], 0));
        if (dir != 1) CK(cudaMemcpyAsync(din[g], hin[g], b, cudaMemcpyHostToDevice, sh[g]));
        if (dir != 0) CK(cudaMemcpyAsync(same ? hin[g] : hout[g], dout[g], b, cudaMemcpyDeviceToHost, sd[g]));
        CK(cudaEventRecord(eh[g], sh[g]));
        CK(cudaEventRecord(ed[g], sd[g]));
    }
    for (int g = 0; g < ngpu; g++) {
        CK(cudaSetDevice(g));
        CK(cudaEventSynchronize(eh[g]));
        CK(cudaEventSynchronize(ed[g]));
        if (dir != 1) CK(cudaEventElapsedTime(&h2d_ms[g], e0[g], eh[g]));
        if (dir != 0) CK(cudaEventElapsedTime(&d2h_ms[g], e0[g], ed[g]));
    }
}

/* `probe_two_gpus REPS GAP_MS`: only the case the calibration times (both GPUs, both ways,
 * 128 MiB, the same pages), REPS reps back to back GAP_MS apart; each rep's together GB/s */
static void calibration_like(int reps, int gap_ms) {
    size_t b = (size_t)128 << 20;
    printf("both GPUs both ways, 128 MiB, same pages, %d reps %d ms apart: together (H2D part) GB/s:", reps, gap_ms);
    for (int r = -1; r < reps; r++) {
        float h[G], d[G];
        if (r > 0)
            usleep((useconds_t)gap_ms * 1000);
        rep(2, 2, 1, b, h, d);
        if (r >= 0)
            printf(" %.0f (%.0f)", (double)b / (h[0] * 1e6) + (double)b / (h[1] * 1e6) + (double)b / (d[0] * 1e6) +
                                       (double)b / (d[1] * 1e6), (double)b / (h[0] * 1e6) + (double)b / (h[1] * 1e6));
    }
    printf("\n");
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 9, count = 0;
    CK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("bench-two-gpus: skipped (%d GPU here; it needs 2)\n", count);
        return 0;
    }
    size_t maxb = (size_t)128 << 20;
    for (int g = 0; g < G; g++) {
        CK(cudaSetDevice(g));
        CK(cudaHostAlloc((void **)&hin[g], maxb, cudaHostAllocPortable));
        CK(cudaHostAlloc((void **)&hout[g], maxb, cudaHostAllocPortable));
        memset(hin[g], 1, maxb);
        memset(hout[g], 2, maxb);
        CK(cudaMalloc((void **)&din[g], maxb));
        CK(cudaMalloc((void **)&dout[g], maxb));
        CK(cudaMemset(dout[g], 0, maxb));
        CK(cudaStreamCreateWithFlags(&sh[g], cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&sd[g], cudaStreamNonBlocking));
        CK(cudaEventCreate(&e0[g]));
        CK(cudaEventCreate(&eh[g]));
        CK(cudaEventCreate(&ed[g]));
    }
    if (argc > 2) {
        calibration_like(reps, atoi(argv[2]));
        return 0;
    }
    const char *dirs[3] = {"h2d", "d2h", "both"};
    size_t sizes[2] = {(size_t)32 << 20, (size_t)128 << 20};
    enum { NC = 2 * 3 * 2 * 2 };
    float *t = (float *)calloc((size_t)NC * reps * 4, sizeof(float));
    for (int r = -1; r < reps; r++) /* r = -1: warm-up */
        for (int k = 0; k < NC; k++) {
            int c = r % 2 ? NC - 1 - k : k; /* forward, then backward */
            int ngpu = 1 + c % 2, dir = (c / 2) % 3, same = (c / 6) % 2;
            size_t b = sizes[c / 12];
            float h[G], d[G];
            usleep(5000);
            rep(ngpu, dir, same, b, h, d);
            if (r >= 0)
                for (int g = 0; g < G; g++) {
                    t[((size_t)c * 4 + g) * reps + r] = h[g];
                    t[((size_t)c * 4 + 2 + g) * reps + r] = d[g];
                }
        }
    printf("%-6s %-5s %-8s %-5s | %-23s | %-23s | %s\n", "MiB", "gpus", "host", "dir", "GPU 0 H2D / D2H GB/s",
           "GPU 1 H2D / D2H GB/s", "together GB/s");
    for (int c = 0; c < NC; c++) {
        int ngpu = 1 + c % 2, dir = (c / 2) % 3, same = (c / 6) % 2;
        size_t b = sizes[c / 12];
        double gb[4] = {0, 0, 0, 0}, sum = 0;
        for (int j = 0; j < 4; j++) {
            float *x = &t[((size_t)c * 4 + j) * reps];
            qsort(x, (size_t)reps, sizeof *x, cmp_float);
            float ms = x[reps / 2];
            gb[j] = ms > 0 ? (double)b / (ms * 1e6) : 0;
            sum += gb[j];
        }
        printf("%-6zu %-5d %-8s %-5s | %10.1f / %-10.1f | %10.1f / %-10.1f | %.1f\n", b >> 20, ngpu,
               same ? "same" : "separate", dirs[dir], gb[0], gb[2], gb[1], gb[3], sum);
    }
    free(t);
    return 0;
}
