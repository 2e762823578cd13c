/* probe_streams.cu — `make bench-copies`, its second part: does a copy cost more when the
 * copies come from many streams? The many-stream pipelines (2^25 at 64-256 streams) are where
 * the sim is faster than the hardware, and this asks whether the copies themselves are why.
 * 128 MiB each way in pieces of 512 KiB, 1 MiB and 4 MiB, round-robin over S = 1..256 streams;
 * "sep": the H2Ds and the D2Hs on streams of their own; "shared": stream i takes H2D(n) then
 * D2H(n), in stream order, as a pipeline without its kernels. Plain CUDA, nothing of
 * streamlab's code. Per case the median of REPS reps (each after one unmeasured pass of the
 * same case), cases interleaved forward and backward; printed in us per piece.
 * On a lent H100 (2026-11-26, GPU-f9f19e8f): 1 MiB both ways 24.9 us a piece from 1 stream,
 * 25.5 from 128 (26.0 shared); H2D alone 21.6 to 22.2: within 3% from 1 to 128 streams.
 * usage: probe_streams [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "probe_util.cuh"
enum { MS = 256 };
static cudaStream_t s0, sh[MS], sd[MS];
static cudaEvent_t e0, e1, ej[2 * MS];
static char *h0, *h1, *d0, *d1;
static void issue(size_t b, size_t piece, int dir, int S, int shared) {
    CK(cudaEventRecord(e0, s0));
    for (int i = 0; i < S; i++) { CK(cudaStreamWaitEvent(sh[i], e0, 0)); if (!shared) CK(cudaStreamWaitEvent(sd[i], e0, 0)); }
    int n = 0;
    for (size_t off = 0; off < b; off += piece, n++) {
        cudaStream_t a = sh[n % S], d = shared ? sh[n % S] : sd[n % S];
        if (dir != 1) CK(cudaMemcpyAsync(d0 + off, h0 + off, piece, cudaMemcpyHostToDevice, a));
        if (dir != 0) CK(cudaMemcpyAsync(h1 + off, d1 + off, piece, cudaMemcpyDeviceToHost, d));
    }
    for (int i = 0; i < S; i++) {
        CK(cudaEventRecord(ej[2 * i], sh[i])); CK(cudaStreamWaitEvent(s0, ej[2 * i], 0));
        if (!shared) { CK(cudaEventRecord(ej[2 * i + 1], sd[i])); CK(cudaStreamWaitEvent(s0, ej[2 * i + 1], 0)); }
    }
}
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    size_t b = (size_t)128 << 20;
    probe_copy_arrays(b, &h0, &h1, &d0, &d1);
    probe_copy_streams(MS, &s0, sh, sd, &e0, &e1, ej);
    struct C { size_t piece; int dir, S, shared; std::vector<float> t; };
    std::vector<C> cs;
    size_t pieces[] = {(size_t)512 << 10, (size_t)1 << 20, (size_t)4 << 20};
    int Ss[] = {1, 4, 8, 16, 32, 64, 128, 256};
    for (size_t pc : pieces) for (int dir = 0; dir < 3; dir += 2) for (int S : Ss) for (int sharedl = 0; sharedl < 2; sharedl++) {
        if ((int)(b / pc) < S) continue;
        if (dir == 0 && sharedl) continue;
        cs.push_back({pc, dir, S, sharedl, {}});
    }
    for (int r = -2; r < reps; r++)
        for (size_t k = 0; k < cs.size(); k++) {
            C &c = cs[r % 2 ? cs.size() - 1 - k : k];
            issue(b, c.piece, c.dir, c.S, c.shared);  // prime the streams' order
            CK(cudaStreamSynchronize(s0));
            CK(cudaEventRecord(e1, s0));
            issue(b, c.piece, c.dir, c.S, c.shared);
            cudaEvent_t end; CK(cudaEventCreate(&end)); CK(cudaEventRecord(end, s0)); CK(cudaEventSynchronize(end));
            float ms; CK(cudaEventElapsedTime(&ms, e1, end)); CK(cudaEventDestroy(end));
            if (r >= 0) c.t.push_back(ms);
        }
    printf("piece    dir   S  layout   ms      us/piece\n");
    for (C &c : cs) {
        std::sort(c.t.begin(), c.t.end());
        float med = c.t[c.t.size() / 2];
        printf("%5zuK  %-4s %3d  %-6s %7.3f  %7.2f\n", c.piece >> 10, c.dir == 0 ? "h2d" : "both", c.S, c.shared ? "shared" : "sep",
               med, 1000.0 * med / (double)(b / c.piece));
    }
    return 0;
}
