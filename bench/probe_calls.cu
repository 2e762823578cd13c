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
    static double ts[3 * MAXS + 3], issue[MAXREPS], ev[MAXREPS], stop[MAXREPS], first[3][MAXREPS], later[MAXREPS];
    float gms[MAXREPS];
    int SS[] = {1, 8, 32, 128, 256};
    printf("point              gpu ms  issue us  start ev  1st H2D  1st kern  1st D2H  later (mean)  stop ev\n");
    for (int v2 = 0; v2 < 2; v2++)
        for (int si = 0; si < 5; si++)
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
                    double rest = 0;
                    int nrest = 0;
                    for (int c = 2; c < k - 1; c++) { /* the op calls: ts[c] - ts[c - 1] */
                        double du = ts[c] - ts[c - 1];
                        if (!seen[kind[c]]) seen[kind[c]] = true, first[kind[c]][r] = du;
                        else rest += du, nrest++;
                    }
                    later[r] = nrest ? rest / nrest : 0;
                }
                double g[MAXREPS];
                for (int r = 0; r < reps; r++) g[r] = gms[r];
                printf("%s 2^%d x%-3d  %7.3f  %8.1f  %8.1f  %7.1f  %8.1f  %7.1f  %6.2f  %7.1f\n", v2 ? "async_v2" : "async_v1",
                       lg, ns, median(g, reps), median(issue, reps), median(ev, reps), median(first[0], reps),
                       median(first[1], reps), median(first[2], reps), median(later, reps), median(stop, reps));
            }
    return 0;
}
