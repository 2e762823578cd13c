/* probe_calls.cu — `make bench-host`: each call's host time in the seeds' reps, as ref_overlap
 * runs them (plain CUDA, nothing of streamlab's code): the array memset, the start event on
 * the legacy stream, the ops, the stop event, a sync, the output checked on this thread.
 * A timestamp after every call. Per point (async_v1 and v2, 2^22 and 2^25, 1-256 streams;
 * REPS reps after 3 warm-ups, one point's reps together as a pipeline runs them), medians over
 * the reps, µs: the rep's issue; the start event's call; each kind's first call (the first
 * H2D, kernel and D2H of the rep); the mean of the other op calls; and the stop event's call
 * (on the legacy stream, behind every stream with work left). The 2^25 rows against the 2^22
 * ones give what a large array costs the host call by call (gpu/cuda_calibrate.cu measures
 * the same split: issue_first_large_us, issue_call_large_us).
 * On a lent H100 (GPU-5f114823, 2026-11-26), async_v1 x128: start event 6.0-6.7 / 17.4-24.2,
 * first H2D 5.3-5.8 / 14.3-20.4, first kernel 7.7-8.8 / 19.9-26.8, first D2H 3.1-3.3 /
 * 5.6-5.9, later calls 0.36-0.47 more at 2^25. The stop event's call on a lent H200
 * (GPU-d49c1d00, 2026-11-26 21:29 UTC, pinned): 1.5-5.7 us over every point, 3.9-5.3 at 256
 * streams, v1 or v2: not what makes the reference's breadth-first issue longer.
 * Since 2026-11-27 also the later calls' mean by kind (H2D, kernel, D2H) and when the rep's
 * last call of each kind returned. Two runs each on a lent H100 (GPU-8a57a007) and a lent H200
 * (GPU-18989197), 2^25 over 2^22 at 8-256 streams, the median over points and runs: of the
 * first calls' extra (33 us over the four), the start event 0.33, the first H2D 0.26, the first
 * kernel 0.36, the first D2H 0.06 (alike in v1 and v2, on both GPUs); every later call more by
 * H2D 0.44 us, kernel 0.88, D2H 0.19 (v1 0.05, v2 0.50). The sim charges the three first calls
 * a third each and every later call alike (gpu/sim.c, large_array_host): tried offline split
 * so, it moved the seeds' tables both ways (docs/METHOD.md), and was not kept.
 * usage: probe_calls [REPS] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_util.cuh"
#include "seed_kernel.cuh"
/* the upper of the middle two where n is even, as this probe has always printed */
static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}
enum { MAXS = 256, MAXREPS = 64 };
int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 20, warm = 3;
    if (reps < 1 || reps > MAXREPS) reps = 20;
    size_t nmax = (size_t)1 << 25;
    float *a, *d;
    CK(cudaMallocHost((void **)&a, nmax * 4));
    CK(cudaMalloc((void **)&d, nmax * 4));
    static cudaStream_t st[MAXS];
    cudaEvent_t e0, e1;
    for (int i = 0; i < MAXS; i++) CK(cudaStreamCreate(&st[i]));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    static double ts[3 * MAXS + 3], issue[MAXREPS], ev[MAXREPS], stop[MAXREPS], first[3][MAXREPS], later[MAXREPS],
        later_k[3][MAXREPS], by_k[3][MAXREPS];
    float gms[MAXREPS];
    int SS[] = {1, 8, 16, 32, 64, 128, 256};
    printf("point              gpu ms  issue us  start ev  1st H2D  1st kern  1st D2H  later (mean)  stop ev"
           "  | later H2D  kern  D2H | last H2D, kern, D2H call by (us)\n");
    for (int v2 = 0; v2 < 2; v2++)
        for (int si = 0; si < 7; si++)
            for (int lg = 22; lg <= 25; lg += 3) {
                int ns = SS[si];
                size_t n = (size_t)1 << lg, chunk = n / ns;
                for (int r = -warm; r < reps; r++) {
                    memset(a, 0, n * 4);
                    int k = 0, kind[3 * MAXS + 2];
                    ts[k++] = probe_now_us();
                    CK(cudaEventRecord(e0, 0));
                    ts[k++] = probe_now_us();
                    for (int ph = 0; ph < (v2 ? 3 : 1); ph++)
                        for (int i = 0; i < ns; i++) {
                            size_t off = (size_t)i * chunk;
                            if (!v2 || ph == 0) {
                                CK(cudaMemcpyAsync(d + off, a + off, chunk * 4, cudaMemcpyHostToDevice, st[i]));
                                kind[k] = 0, ts[k++] = probe_now_us();
                            }
                            if (!v2 || ph == 1) {
                                kernel<<<(unsigned)(chunk / BLOCK), BLOCK, 0, st[i]>>>(d, (int)off);
                                kind[k] = 1, ts[k++] = probe_now_us();
                            }
                            if (!v2 || ph == 2) {
                                CK(cudaMemcpyAsync(a + off, d + off, chunk * 4, cudaMemcpyDeviceToHost, st[i]));
                                kind[k] = 2, ts[k++] = probe_now_us();
                            }
                        }
                    CK(cudaGetLastError());
                    CK(cudaEventRecord(e1, 0));
                    ts[k++] = probe_now_us();
                    CK(cudaEventSynchronize(e1));
                    float ms = 0;
                    CK(cudaEventElapsedTime(&ms, e0, e1));
                    for (size_t i = 0; i < n; i++)
                        if (!(fabsf(a[i] - 1.0f) <= 1e-4f)) {
                            fprintf(stderr, "element %zu wrong\n", i);
                            return 1;
                        }
                    if (r < 0) continue;
                    gms[r] = ms;
                    issue[r] = ts[k - 1] - ts[0];
                    ev[r] = ts[1] - ts[0];
                    stop[r] = ts[k - 1] - ts[k - 2];
                    bool seen[3] = {false, false, false};
                    double rest = 0, rest_k[3] = {0, 0, 0};
                    int nrest = 0, nrest_k[3] = {0, 0, 0};
                    for (int c = 2; c < k - 1; c++) { /* the op calls: ts[c] - ts[c - 1] */
                        double du = ts[c] - ts[c - 1];
                        by_k[kind[c]][r] = ts[c] - ts[0];
                        if (!seen[kind[c]]) seen[kind[c]] = true, first[kind[c]][r] = du;
                        else rest += du, nrest++, rest_k[kind[c]] += du, nrest_k[kind[c]]++;
                    }
                    later[r] = nrest ? rest / nrest : 0;
                    for (int q = 0; q < 3; q++)
                        later_k[q][r] = nrest_k[q] ? rest_k[q] / nrest_k[q] : 0;
                }
                double g[MAXREPS];
                for (int r = 0; r < reps; r++) g[r] = gms[r];
                printf("%s 2^%d x%-3d  %7.3f  %8.1f  %8.1f  %7.1f  %8.1f  %7.1f  %6.2f  %7.1f  | %6.2f %5.2f %5.2f | %6.1f %6.1f %6.1f\n",
                       v2 ? "async_v2" : "async_v1", lg, ns, median(g, reps), median(issue, reps), median(ev, reps),
                       median(first[0], reps), median(first[1], reps), median(first[2], reps), median(later, reps),
                       median(stop, reps), median(later_k[0], reps), median(later_k[1], reps), median(later_k[2], reps),
                       median(by_k[0], reps), median(by_k[1], reps), median(by_k[2], reps));
            }
    return 0;
}
