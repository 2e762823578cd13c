/* ref_overlap.cu — the independent reference for `make bench-gpu`: plain CUDA, the
 * steps of "How to Overlap Data Transfers in CUDA C/C++" (seeds 000 and 002) and
 * nothing of streamlab's code: one pinned array, the blog's kernel, block 256,
 * streams from cudaStreamCreate, the legacy default stream for the events.
 *   seq: cudaMemcpy H2D, kernel, cudaMemcpy D2H
 *   v1:  per stream: H2D, kernel, D2H (depth-first)
 *   v2:  all H2D, then all kernels, then all D2H (breadth-first)
 *   k:   the kernel alone over the whole array (a diagnostic: the kernels' speed)
 * Each case runs as the seeds' program does, start to end: it allocates its arrays,
 * creates its streams and events, runs warm-ups, then reps timed by an event pair on
 * stream 0 (median printed), and frees all of it, as each streamlab run does too: no
 * case inherits buffers or idle streams from an earlier one. The output is checked
 * after every rep (a[i] == 1 within float tolerance).
 *
 * usage: ref_overlap seq|v1|v2 SIZE STREAMS REPS WARMUP   one case, one line
 *        ref_overlap --serve                              one case per stdin line
 * answer: "ok MEDIAN_MS MIN_MS MAX_MS ISSUE_US" (ISSUE_US: the median host time from the
 * start event's record to the stop event's) or "err MESSAGE". SIZE must divide by
 * STREAMS x 256 (the blog's assumption). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK 256
#define MAX_STREAMS 1024

__global__ void kernel(float *a, int offset) {
    int i = offset + threadIdx.x + blockIdx.x * blockDim.x;
    float x = (float)i;
    float s = sinf(x);
    float c = cosf(x);
    a[i] = a[i] + sqrtf(s * s + c * c);
}

static float *a, *d_a;
static cudaStream_t stream[MAX_STREAMS];
static int nstreams_made;
static cudaEvent_t start_ev, stop_ev;

/* everything a case made, freed (the case's end, or its failure) */
static void release_case(void) {
    cudaDeviceSynchronize();
    for (; nstreams_made > 0; nstreams_made--)
        cudaStreamDestroy(stream[nstreams_made - 1]);
    if (start_ev)
        cudaEventDestroy(start_ev);
    if (stop_ev)
        cudaEventDestroy(stop_ev);
    if (a)
        cudaFreeHost(a);
    if (d_a)
        cudaFree(d_a);
    start_ev = stop_ev = NULL;
    a = d_a = NULL;
    cudaGetLastError();
}

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            snprintf(msg, msglen, "%s:%d: %s: %s", __FILE__, __LINE__, #call,           \
                     cudaGetErrorString(e_));                                           \
            return -1;                                                                  \
        }                                                                               \
    } while (0)

static int cmp_float(const void *x, const void *y) {
    float p = *(const float *)x, q = *(const float *)y;
    return (p > q) - (p < q);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int run_case(const char *variant, size_t n, int nstreams, int reps, int warmup, float *med, float *mn,
                    float *mx, float *issue_us, char *msg, size_t msglen) {
    if (n == 0 || nstreams < 1 || nstreams > MAX_STREAMS || reps < 1 || n % ((size_t)nstreams * BLOCK) ||
        n > 0x7fffffffu) {
        snprintf(msg, msglen, "bad case (size must divide by streams x %d)", BLOCK);
        return -1;
    }
    int mode = strcmp(variant, "seq") == 0 ? 0
               : strcmp(variant, "v1") == 0 ? 1
               : strcmp(variant, "v2") == 0 ? 2
               : strcmp(variant, "k") == 0  ? 3
                                            : -1;
    if (mode < 0) {
        snprintf(msg, msglen, "unknown variant %s", variant);
        return -1;
    }
    size_t bytes = n * sizeof(float);
    CK(cudaMallocHost((void **)&a, bytes)); /* host pinned */
    CK(cudaMalloc((void **)&d_a, bytes));
    CK(cudaEventCreate(&start_ev));
    CK(cudaEventCreate(&stop_ev));
    for (; nstreams_made < nstreams; nstreams_made++)
        CK(cudaStreamCreate(&stream[nstreams_made]));
    int streamSize = (int)(n / (size_t)nstreams);
    size_t streamBytes = (size_t)streamSize * sizeof(float);
    float *times = (float *)malloc(2 * (size_t)reps * sizeof(float));
    float *issue = times + reps;
    if (!times) {
        snprintf(msg, msglen, "out of memory");
        return -1;
    }
    for (int r = -warmup; r < reps; r++) {
        float ms = 0;
        memset(a, 0, bytes);
        double t0 = now_us();
        CK(cudaEventRecord(start_ev, 0));
        if (mode == 0) {
            CK(cudaMemcpy(d_a, a, bytes, cudaMemcpyHostToDevice));
            kernel<<<(unsigned)(n / BLOCK), BLOCK>>>(d_a, 0);
            CK(cudaMemcpy(a, d_a, bytes, cudaMemcpyDeviceToHost));
        } else if (mode == 1) {
            for (int i = 0; i < nstreams; ++i) {
                int offset = i * streamSize;
                CK(cudaMemcpyAsync(&d_a[offset], &a[offset], streamBytes, cudaMemcpyHostToDevice, stream[i]));
                kernel<<<streamSize / BLOCK, BLOCK, 0, stream[i]>>>(d_a, offset);
                CK(cudaMemcpyAsync(&a[offset], &d_a[offset], streamBytes, cudaMemcpyDeviceToHost, stream[i]));
            }
        } else if (mode == 3) {
            kernel<<<(unsigned)(n / BLOCK), BLOCK>>>(d_a, 0);
        } else {
            for (int i = 0; i < nstreams; ++i) {
                int offset = i * streamSize;
                CK(cudaMemcpyAsync(&d_a[offset], &a[offset], streamBytes, cudaMemcpyHostToDevice, stream[i]));
            }
            for (int i = 0; i < nstreams; ++i) {
                int offset = i * streamSize;
                kernel<<<streamSize / BLOCK, BLOCK, 0, stream[i]>>>(d_a, offset);
            }
            for (int i = 0; i < nstreams; ++i) {
                int offset = i * streamSize;
                CK(cudaMemcpyAsync(&a[offset], &d_a[offset], streamBytes, cudaMemcpyDeviceToHost, stream[i]));
            }
        }
        CK(cudaGetLastError());
        CK(cudaEventRecord(stop_ev, 0));
        double t1 = now_us();
        CK(cudaEventSynchronize(stop_ev));
        CK(cudaEventElapsedTime(&ms, start_ev, stop_ev));
        size_t bad = 0;
        for (size_t i = 0; mode != 3 && i < n; i++)
            if (!(fabsf(a[i] - 1.0f) <= 1e-4f))
                bad++;
        if (bad) {
            snprintf(msg, msglen, "%zu of %zu elements wrong", bad, n);
            free(times);
            return -1;
        }
        if (r >= 0) {
            times[r] = ms;
            issue[r] = (float)(t1 - t0);
        }
    }
    qsort(times, (size_t)reps, sizeof *times, cmp_float);
    qsort(issue, (size_t)reps, sizeof *issue, cmp_float);
    *issue_us = issue[reps / 2];
    *mn = times[0];
    *mx = times[reps - 1];
    *med = reps % 2 ? times[reps / 2] : 0.5f * (times[reps / 2 - 1] + times[reps / 2]);
    free(times);
    return 0;
}

static void answer(const char *variant, const char *size, const char *streams, const char *reps, const char *warmup) {
    char msg[512];
    float med = 0, mn = 0, mx = 0, issue_us = 0;
    int rc = run_case(variant, strtoull(size, NULL, 0), atoi(streams), atoi(reps), atoi(warmup), &med, &mn, &mx,
                      &issue_us, msg, sizeof msg);
    release_case();
    if (rc == 0)
        printf("ok %.6f %.6f %.6f %.1f\n", med, mn, mx, issue_us);
    else
        printf("err %s\n", msg);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc == 6) {
        answer(argv[1], argv[2], argv[3], argv[4], argv[5]);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--serve") == 0) {
        char line[256], v[16], size[32], streams[16], reps[16], warmup[16];
        while (fgets(line, sizeof line, stdin)) {
            if (sscanf(line, "%15s %31s %15s %15s %15s", v, size, streams, reps, warmup) == 5)
                answer(v, size, streams, reps, warmup);
            else
                printf("err malformed line\n");
            fflush(stdout);
        }
        return 0;
    }
    fprintf(stderr, "usage: ref_overlap seq|v1|v2 SIZE STREAMS REPS WARMUP | --serve\n");
    return 2;
}
