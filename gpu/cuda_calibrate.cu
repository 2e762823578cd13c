/* cuda_calibrate.cu — cuda_calibrate: one device's copy bandwidths and kernel costs,
 * the numbers the floor and the simulator are built on. Pinned H2D and D2H alone,
 * both at once (each direction's rate while the other runs), pageable H2D and D2H,
 * a kernel reading and writing mapped pinned memory itself (zero-copy, both ways at
 * once), and each kernel's time per element. Large transfers (256 MiB) so that latency does
 * not count; each repeated, keeping the peak and (bidirectional) the lowest seen: on
 * the lent H100s the bidirectional rate moves between 43.8 and 50.2 GB/s per direction
 * from one call to the next (issue 4). About a second on an H100, the bidirectional
 * reps spread over 0.3 s of it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda.h"
#include "cuda_internal.h"
#include "kernels.h"

#define CAL_BYTES (256ull << 20)
/* the seeds' two array sizes, in elements */
#define SMALL_ELEMS (1ull << 22)
#define LARGE_ELEMS (1ull << 25)
#define CAL_REPS 5                 /* pinned copies and kernels */
#define CAL_PAGEABLE_REPS 5
#define CAL_PAGEABLE_BYTES (128ull << 20) /* the seeds' 2^25 array */
#define CAL_HOST_ELEMS (1ull << 20)      /* host_overlap's share: the CPU's rate over these */
#define CAL_HOST_REPS 9
#define CAL_BIDIR_REPS 12
#define CAL_BIDIR_GAP_US 25000
#define CAL_KERNEL_ELEMS (1ull << 25) /* the seeds' large size */
#define CAL_COMPUTE_ITERS 16       /* compute: timed at 16 and 64 rounds, the base and the */
#define CAL_COMPUTE_ITERS_HI 64    /* cost per round from the two */

/* Time n back-to-back copies of total/n bytes each on stream s with events; µs. */
static int time_batch(void *dst, const void *src, size_t total, int n, cudaMemcpyKind kind, cudaStream_t s,
                      cudaEvent_t e0, cudaEvent_t e1, double *us, sl_error_t *err) {
    int rc = SL_OK;
    float ms = 0;
    size_t each = total / (size_t)n;
    CUDA_CHECK(cudaEventRecord(e0, s));
    for (int k = 0; k < n; k++)
        CUDA_CHECK(cudaMemcpyAsync((char *)dst + (size_t)k * each, (const char *)src + (size_t)k * each, each, kind,
                                   s));
    CUDA_CHECK(cudaEventRecord(e1, s));
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    *us = (double)ms * 1e3;
cleanup:
    return rc;
}

/* Both directions at once from one start (e0): n back-to-back H2D copies of total/n bytes
 * each on s0 and as many D2H on s1, each direction's end recorded (e1, e2); returns at
 * once. The current device must be the streams'. */
static int issue_both(void *d_dst, const void *h_src, void *h_dst, const void *d_src, size_t total, int n,
                      cudaStream_t s0, cudaStream_t s1, cudaEvent_t e0, cudaEvent_t e1, cudaEvent_t e2,
                      sl_error_t *err) {
    int rc = SL_OK;
    size_t each = total / (size_t)n;
    CUDA_CHECK(cudaEventRecord(e0, s0));
    CUDA_CHECK(cudaStreamWaitEvent(s1, e0, 0));
    for (int k = 0; k < n; k++) {
        size_t off = (size_t)k * each;
        CUDA_CHECK(cudaMemcpyAsync((char *)d_dst + off, (const char *)h_src + off, each, cudaMemcpyHostToDevice, s0));
        CUDA_CHECK(cudaMemcpyAsync((char *)h_dst + off, (const char *)d_src + off, each, cudaMemcpyDeviceToHost, s1));
    }
    CUDA_CHECK(cudaEventRecord(e1, s0));
    CUDA_CHECK(cudaEventRecord(e2, s1));
cleanup:
    return rc;
}

/* issue_both's end: wait for both directions; µs from the start to each one's end. */
static int collect_both(cudaEvent_t e0, cudaEvent_t e1, cudaEvent_t e2, double *h2d_us, double *d2h_us,
                        sl_error_t *err) {
    int rc = SL_OK;
    float a = 0, b = 0;
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaEventSynchronize(e2));
    CUDA_CHECK(cudaEventElapsedTime(&a, e0, e1));
    CUDA_CHECK(cudaEventElapsedTime(&b, e0, e2));
    *h2d_us = (double)a * 1e3;
    *d2h_us = (double)b * 1e3;
cleanup:
    return rc;
}

/* Both directions at once from one start: n back-to-back H2D copies of total/n bytes each
 * on s0 and as many D2H on s1; µs from the start to each direction's end. */
static int time_both_batch(void *d_dst, const void *h_src, void *h_dst, const void *d_src, size_t total, int n,
                           cudaStream_t s0, cudaStream_t s1, cudaEvent_t e0, cudaEvent_t e1, cudaEvent_t e2,
                           double *h2d_us, double *d2h_us, sl_error_t *err) {
    int rc = issue_both(d_dst, h_src, h_dst, d_src, total, n, s0, s1, e0, e1, e2, err);
    return rc ? rc : collect_both(e0, e1, e2, h2d_us, d2h_us, err);
}

/* Time one copy of `bytes` on stream s with events; GB/s (bytes per ns). */
static int time_copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s,
                     cudaEvent_t e0, cudaEvent_t e1, double *gbps, sl_error_t *err) {
    double us = 0;
    int rc = time_batch(dst, src, bytes, 1, kind, s, e0, e1, &us, err);
    *gbps = rc == SL_OK && us > 0 ? (double)bytes / (us * 1e3) : 0;
    return rc;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int cmp_double_cal(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n measures (the upper one of an even n), v sorted in place. */
static double median_cal(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], cmp_double_cal);
    return v[n / 2];
}

/* The seeds' depth-first step over n elements in `streams` chunks (H2D from h, the blog
 * kernel, D2H into back; chunk i into ps[i]) from an idle device: the host's time to
 * issue it, in *us. Where start is given, the step opens as the seeds' rep does: h's n
 * elements memset after the device is idle and just before the time starts, no CUDA call
 * between (the memset before the sync gave smaller heads than every table's: see the
 * large-array block), then that event recorded into the legacy stream, inside the time.
 * Given first_us (and start, and at least 2 streams), it gets what the step's first calls took
 * more than the same calls warm, by the host's clock: its start event's record over a record
 * of the same event after the step's calls, and its first H2D call over its later ones (the
 * median of them). */
static int issue_seeds_step(float *h, float *back, float *d, uint64_t n, int streams, cudaStream_t *ps, double *us,
                            cudaEvent_t start, double *first_us, sl_error_t *err) {
    enum { MAX_CALLS = 256 };
    int rc = SL_OK;
    const uint64_t chunk = n / (uint64_t)streams;
    double call_us[MAX_CALLS];
    int ncalls = 0;
    CUDA_CHECK(cudaDeviceSynchronize());
    if (start)
        memset(h, 0, n * sizeof(float));
    {
        double t0 = cuda_now_us(), record_us = 0;
        if (start)
            CUDA_CHECK(cudaEventRecord(start, 0));
        record_us = cuda_now_us() - t0;
        for (int i = 0; i < streams; i++) {
            size_t off = (size_t)i * chunk;
            double c0 = cuda_now_us();
            CUDA_CHECK(cudaMemcpyAsync(d + off, h + off, chunk * sizeof(float), cudaMemcpyHostToDevice, ps[i]));
            if (ncalls < MAX_CALLS)
                call_us[ncalls++] = cuda_now_us() - c0;
            CUDA_CHECK(cuda_kernel_launch(KERNEL_BLOG, 1, LAUNCH_CHUNK, 0, 256, d + off, off, chunk, ps[i]));
            CUDA_CHECK(cudaMemcpyAsync(back + off, d + off, chunk * sizeof(float), cudaMemcpyDeviceToHost, ps[i]));
        }
        *us = cuda_now_us() - t0;
        if (first_us && start && ncalls >= 2) {
            double w0 = cuda_now_us();
            CUDA_CHECK(cudaEventRecord(start, 0));
            double warm_record_us = cuda_now_us() - w0;
            *first_us = (record_us - warm_record_us) + (call_us[0] - median_cal(call_us + 1, ncalls - 1));
        }
    }
cleanup:
    return rc;
}

/* What the copy measurements hold: two streams, three events, two device buffers and one or
 * two pinned host arrays (h_out NULL where the flags say none). */
typedef struct copy_rig {
    cudaStream_t s0, s1;
    cudaEvent_t e0, e1, e2;
    char *d_a, *d_b, *h, *h_out;
} copy_rig_t;

/* Opens a rig of `bytes` per buffer on the current device: the host arrays allocated with
 * h_flags and (h_out_flags >= 0) h_out_flags and written once, so every page is faulted in
 * before timing; the device buffers zeroed. What it made stays in *r for release_copy_rig,
 * also where it fails. */
static int open_copy_rig(copy_rig_t *r, size_t bytes, unsigned h_flags, int h_out_flags, sl_error_t *err) {
    int rc = SL_OK;
    memset(r, 0, sizeof *r);
    CUDA_CHECK(sl_host_alloc((void **)&r->h, bytes, h_flags));
    memset(r->h, 0, bytes);
    if (h_out_flags >= 0) {
        CUDA_CHECK(sl_host_alloc((void **)&r->h_out, bytes, (unsigned)h_out_flags));
        memset(r->h_out, 0, bytes);
    }
    CUDA_CHECK(sl_malloc((void **)&r->d_a, bytes));
    CUDA_CHECK(sl_malloc((void **)&r->d_b, bytes));
    CUDA_CHECK(cudaMemset(r->d_a, 0, bytes));
    CUDA_CHECK(cudaMemset(r->d_b, 0, bytes));
    CUDA_CHECK(sl_stream_create(&r->s0, cudaStreamNonBlocking));
    CUDA_CHECK(sl_stream_create(&r->s1, cudaStreamNonBlocking));
    CUDA_CHECK(sl_event_create(&r->e0, cudaEventDefault));
    CUDA_CHECK(sl_event_create(&r->e1, cudaEventDefault));
    CUDA_CHECK(sl_event_create(&r->e2, cudaEventDefault));
cleanup:
    return rc;
}

/* Frees what open_copy_rig made (each NULL skipped), on the current device, its work done. */
static void release_copy_rig(copy_rig_t *r) {
    cudaStream_t s[2] = {r->s0, r->s1};
    cudaEvent_t e[3] = {r->e0, r->e1, r->e2};
    void *d[2] = {r->d_a, r->d_b}, *h[2] = {r->h, r->h_out};
    for (int i = 0; i < 2; i++)
        if (s[i])
            sl_stream_destroy(s[i]);
    for (int i = 0; i < 3; i++)
        if (e[i])
            sl_event_destroy(e[i]);
    for (int i = 0; i < 2; i++) {
        if (d[i])
            sl_free(d[i]);
        if (h[i])
            sl_free_host(h[i]);
    }
    memset(r, 0, sizeof *r);
}

/* The calibration's bytes per buffer: `bytes` halved (down to 16 MiB) until two buffers
 * and 256 MiB to spare fit in the device's free memory. */
static size_t fit_bytes(size_t bytes, size_t free_b) {
    while (bytes > (16u << 20) && 2 * bytes + (256u << 20) > free_b)
        bytes /= 2;
    return bytes;
}

int cuda_calibrate(machine_info_t *m, int index, sl_error_t *err) {
    int rc = SL_OK, prev = 0, ordinal = 0;
    size_t bytes = CAL_BYTES, free_b = 0, total_b = 0;
    copy_rig_t rig = {};
    float *h_a = NULL, *h_b = NULL, *p_a = NULL, *d_a = NULL, *d_b = NULL;
    cudaStream_t s0 = NULL, s1 = NULL;
    enum { PSTREAMS = 256 }; /* the host-cost pipeline's streams */
    cudaStream_t ps[PSTREAMS];
    int made = 0;
    cudaEvent_t e0 = NULL, e1 = NULL, e2 = NULL;
    calibration_t c;
    double g = 0;
    float kms[CAL_REPS];
    uint64_t elems = 0;

    if (index < 0 || index >= m->device_count)
        return sl_error_set(err, SL_E_INVALID, "device", "device %d does not exist", index);
    memset(&c, 0, sizeof c);
    ordinal = m->devices[index].index;
    if (cudaGetDevice(&prev) != cudaSuccess)
        (void)cudaGetLastError();
    CUDA_CHECK(cudaSetDevice(ordinal));
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    bytes = fit_bytes(bytes, free_b);
    /* h_a mapped: the zero-copy rate is measured on it (on a 64-bit host with unified
     * addressing every pinned allocation is mapped anyway; the copies see no difference) */
    if ((rc = open_copy_rig(&rig, bytes, cudaHostAllocMapped, cudaHostAllocDefault, err)))
        goto cleanup;
    h_a = (float *)rig.h, h_b = (float *)rig.h_out, d_a = (float *)rig.d_a, d_b = (float *)rig.d_b;
    s0 = rig.s0, s1 = rig.s1, e0 = rig.e0, e1 = rig.e1, e2 = rig.e2;
    p_a = (float *)malloc(bytes);
    if (!p_a)
        SL_FAIL(SL_E_NOMEM, "out of memory for %zu bytes of pageable memory", bytes);
    memset(p_a, 0, bytes); /* fault every page in before timing */

    /* Pinned: each direction alone, and both at once from one start (each direction over
     * its own time, averaged), the three in turn in every rep and the reps spread over a
     * third of a second; keep each one's peak and the lowest of both. On the lent H100 the
     * rate moved from 22 to 49 GB/s within one start-up's five back-to-back reps, and one
     * server's five all came out at 37.5-37.7 while its pipelines ran at 46 (its model then
     * priced every overlapped copy 25% dear, 2026-11-23 08:19 UTC). The alone rates were
     * five back-to-back reps before the both-ways ones until a lent H100's calibration
     * caught a slow spell in all five (GPU-07d0423b, 2026-11-26 14:32 UTC: H2D alone 38.3
     * GB/s, both ways 50.7, where a direction alone is never the slower; the profile's sim
     * came out 20-28% slow at every point of its own table). Taken in turn, a slow spell
     * falls on the three alike. The D2H writes the pages the H2D reads (the contents do not
     * matter here), as a pipeline's D2H writes the pages its H2D read: on the lent H100
     * that gave the same peak as two arrays (50.4 against 50.6 and 49.9 GB/s) and a
     * steadier rate (median 49.9 against 48.2-48.5, 30 reps each, 09:25 UTC). The first
     * rep is a warm-up. */
    c.bidir_gbps_min = 1e30;
    for (int r = -1; r < CAL_BIDIR_REPS; r++) {
        if (r > 0)
            usleep(CAL_BIDIR_GAP_US);
        if ((rc = time_copy(d_a, h_a, bytes, cudaMemcpyHostToDevice, s0, e0, e1, &g, err)))
            goto cleanup;
        if (r >= 0 && g > c.h2d_gbps)
            c.h2d_gbps = g;
        if ((rc = time_copy(h_b, d_b, bytes, cudaMemcpyDeviceToHost, s0, e0, e1, &g, err)))
            goto cleanup;
        if (r >= 0 && g > c.d2h_gbps)
            c.d2h_gbps = g;
        double us_h2d = 0, us_d2h = 0;
        if ((rc = time_both_batch(d_a, h_a, h_a, d_b, bytes, 1, s0, s1, e0, e1, e2, &us_h2d, &us_d2h, err)))
            goto cleanup;
        if (r < 0 || us_h2d <= 0 || us_d2h <= 0)
            continue;
        g = 0.5 * ((double)bytes / (us_h2d * 1e3) + (double)bytes / (us_d2h * 1e3));
        if (g > c.bidir_gbps) {
            c.bidir_gbps = g;
            plan_both_ways_split(bytes, us_h2d, us_d2h, c.h2d_gbps, c.d2h_gbps, &c.bidir_h2d_gbps, &c.bidir_d2h_gbps);
        }
        if (g < c.bidir_gbps_min)
            c.bidir_gbps_min = g;
    }
    /* A copy's fixed cost on its engine, paid even queued behind another: 16 MiB as
     * SETUP_COPIES copies against one, per extra copy, both directions, the median.
     * On the lent H100 (2026-11-23) 1 MiB copies cost 2.3-3.4 us each over one big copy
     * (49 against 55 GB/s at 64 of them), which is what makes small chunks dear. */
    {
        enum { SETUP_COPIES = 32 };
        size_t total = 16u << 20;
        double extra[2 * CAL_REPS], each_dir[2][CAL_REPS];
        int nextra = 0;
        for (int r = -1; r < CAL_REPS; r++)
            for (int dir = 0; dir < 2; dir++) {
                double one = 0, many = 0;
                void *dst = dir == 0 ? (void *)d_a : (void *)h_b;
                const void *src = dir == 0 ? (const void *)h_a : (const void *)d_b;
                cudaMemcpyKind kind = dir == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
                if ((rc = time_batch(dst, src, total, 1, kind, s0, e0, e1, &one, err)) ||
                    (rc = time_batch(dst, src, total, SETUP_COPIES, kind, s0, e0, e1, &many, err)))
                    goto cleanup;
                if (r >= 0)
                    extra[nextra++] = each_dir[dir][r] = (many - one) / (SETUP_COPIES - 1);
            }
        c.copy_setup_us = fmax(0.0, median_cal(extra, nextra));
        /* and each direction's own: the sim's copies pay their direction's (CUPTI, lent H100
         * GPU-b6a67520, 2026-11-26: 64 KiB copies in 2^22 async_v2 x256 took 3.84 us H2D and
         * 2.82 D2H, where one pooled set-up gives both about 4.3). Fourteen calibrations of three
         * lent H100s and two H200s (2026-11-26/27): H2D 2.46-2.86 us, D2H 1.68-2.16. */
        for (int dir = 0; dir < 2; dir++) {
            double v = median_cal(each_dir[dir], CAL_REPS);
            *(dir == 0 ? &c.copy_setup_h2d_us : &c.copy_setup_d2h_us) = v > 0 ? v : 0.001;
        }
        /* and with the other direction copying too, each direction in its own stream: on
         * the lent H100 (2026-11-24) 3.3-3.9 us a copy against 2.4 alone, more than the
         * derate accounts for; the model adds the difference to copies that start while
         * the other direction copies (plan_bidir_copy_us), without which it had 2^22
         * pipelines of 16-64 streams 5-9% short */
        nextra = 0;
        for (int r = -1; r < 2 * CAL_REPS; r++) {
            double one[2] = {0, 0}, many[2] = {0, 0};
            if ((rc = time_both_batch(d_a, h_a, h_b, d_b, total, 1, s0, s1, e0, e1, e2, &one[0], &one[1], err)) ||
                (rc = time_both_batch(d_a, h_a, h_b, d_b, total, SETUP_COPIES, s0, s1, e0, e1, e2, &many[0],
                                      &many[1], err)))
                goto cleanup;
            if (r >= 0)
                extra[nextra++] = (fmax(many[0], many[1]) - fmax(one[0], one[1])) / (SETUP_COPIES - 1);
        }
        c.copy_setup_both_us = fmax(0.0, median_cal(extra, nextra));
    }
    /* The same copies both ways at once, each into a stream of its own, as every
     * multi-stream pipeline issues them, against each direction's copies in one stream:
     * what a copy costs more when the one before it on its engine came from another
     * stream (copy_switch_us). Timed from the host around the whole batch, both ways
     * alike (the device, not the issue, sets the pace: 64 calls against 32 copies of
     * 0.5 MiB each way). On the lent H100 (2026-11-24) the seeds' 2^25 pipelines of
     * 64-256 streams ran 10-15% over a model without it. */
    {
        size_t each = CAL_SWITCH_PIECE_BYTES;
        enum { SW = (16u << 20) / CAL_SWITCH_PIECE_BYTES };
        for (; made < PSTREAMS; made++)
            CUDA_CHECK(sl_stream_create(&ps[made], cudaStreamNonBlocking));
        double extra[2 * CAL_REPS];
        int nextra = 0;
        for (int r = -1; r < 2 * CAL_REPS; r++) {
            double us[2];
            for (int spread = 0; spread < 2; spread++) {
                CUDA_CHECK(cudaDeviceSynchronize());
                double t0 = cuda_now_us();
                for (int k = 0; k < SW; k++) {
                    size_t off = (size_t)k * each;
                    CUDA_CHECK(cudaMemcpyAsync((char *)d_a + off, (const char *)h_a + off, each,
                                               cudaMemcpyHostToDevice, ps[spread ? k : 0]));
                    CUDA_CHECK(cudaMemcpyAsync((char *)h_b + off, (const char *)d_b + off, each,
                                               cudaMemcpyDeviceToHost, ps[spread ? SW + k : 1]));
                }
                CUDA_CHECK(cudaDeviceSynchronize());
                us[spread] = cuda_now_us() - t0;
            }
            if (r >= 0)
                extra[nextra++] = (us[1] - us[0]) / SW;
        }
        c.copy_switch_us = fmax(0.0, median_cal(extra, nextra));
    }
    /* The host array as a pipeline finds it: every rep memsets it first, and an H2D then
     * reads lines still dirty in the CPU's cache (the lent H100's 16 MiB H2D: 343 us after
     * a memset against 304 clean, CUPTI, 2026-11-24). h_b is clean (only DMA wrote it);
     * h_a is memset just before its copy. The extra sits on the array's last MiB, those the
     * memset wrote last: CUPTI put 17 us on the last 1 MiB chunk of a 4 MiB array, 33 on the
     * last 2 MiB of 8 and 31 on the last 4 MiB of 16, the chunks before them paying about
     * nothing (lent H100 GPU-2b7c6390, 2026-11-27). So a 1 MiB array gives the price of a
     * dirty MiB, and 16 MiB and a larger array (128 MiB, the seeds' 2^25) how many MiB pay
     * it. Calibrations before 2026-11-27 took the price from 16 MiB, as if all 16 were dirty
     * (2.4 us a MiB where the last MiB pays 17). */
    {
        enum { DIRTY_REPS = 11 }; /* a 20-40 us effect on a noisy machine: the median of 11 */
        size_t sizes[3] = {1u << 20, 16u << 20, bytes < (128u << 20) ? bytes : (128u << 20)};
        double ex[3][DIRTY_REPS], med[3];
        for (int r = -1; r < DIRTY_REPS; r++)
            for (int k = 0; k < 3; k++) {
                double clean = 0, dirty = 0;
                if ((rc = time_batch(d_a, h_b, sizes[k], 1, cudaMemcpyHostToDevice, s0, e0, e1, &clean, err)))
                    goto cleanup;
                memset(h_a, r & 0x7f, sizes[k]);
                if ((rc = time_batch(d_a, h_a, sizes[k], 1, cudaMemcpyHostToDevice, s0, e0, e1, &dirty, err)))
                    goto cleanup;
                if (r >= 0)
                    ex[k][r] = dirty - clean;
            }
        for (int k = 0; k < 3; k++)
            med[k] = median_cal(ex[k], DIRTY_REPS);
        c.dirty_16mib_us = fmax(0.0, med[1]);
        c.dirty_large_us = fmax(0.0, med[2]);
        double total = fmax(med[1], med[2]), large_mib = (double)(sizes[2] >> 20);
        if (med[0] > 0 && total > 0) {
            c.dirty_h2d_us_per_mib = med[0];
            c.dirty_cache_mib = fmin(large_mib, fmax(1.0, total / med[0]));
        } else if (med[1] > 0) { /* no tail seen: the 16 MiB array's extra over all of it */
            c.dirty_h2d_us_per_mib = med[1] / 16.0;
            c.dirty_cache_mib = fmin(large_mib, fmax(16.0, med[2] / c.dirty_h2d_us_per_mib));
        }
    }
    /* pageable: the driver stages through its own pinned buffers, the CPU copying between
     * them and the array, and the call returns once the host's part is done. A pipeline
     * waits for all of it, so the host's clock times it: the call and its stream's sync,
     * the source memset just before (as every rep writes its array), over the seeds' 2^25
     * array; the median. Events on the stream see only the DMA behind the staging: on a lent
     * H100 (GPU-54cd77b7, 2026-11-27) they gave 16.8 GB/s H2D where a plain program's
     * cudaMemcpy, and streamlab's pageable pipelines, got 6.6-6.8 (bench/probe_pageable.cu),
     * and the sim ran those pipelines 24-43% fast (make bench-wide). */
    {
        size_t pbytes = bytes < CAL_PAGEABLE_BYTES ? bytes : CAL_PAGEABLE_BYTES;
        double gb[2][CAL_PAGEABLE_REPS];
        for (int dir = 0; dir < 2; dir++)
            for (int r = -1; r < CAL_PAGEABLE_REPS; r++) {
                if (dir == 0)
                    memset(p_a, r & 1, pbytes);
                double t0 = cuda_now_us();
                if (dir == 0)
                    CUDA_CHECK(cudaMemcpyAsync(d_a, p_a, pbytes, cudaMemcpyHostToDevice, s0));
                else
                    CUDA_CHECK(cudaMemcpyAsync(p_a, d_b, pbytes, cudaMemcpyDeviceToHost, s0));
                CUDA_CHECK(cudaStreamSynchronize(s0));
                double us = cuda_now_us() - t0;
                if (r >= 0)
                    gb[dir][r] = us > 0 ? (double)pbytes / (us * 1e3) : 0;
            }
        c.pageable_h2d_gbps = median_cal(gb[0], CAL_PAGEABLE_REPS);
        c.pageable_d2h_gbps = median_cal(gb[1], CAL_PAGEABLE_REPS);
    }
    /* kernels: one chunk launch (block 256) over the seeds' 2^25 elements; median. Each
     * rep runs on the input a pipeline's kernel sees (its memset byte, kernels.h): the
     * compute kernel once ran on the fill kernel's output (a[i] = i, up to 3.4e7), where
     * every sinf/cosf takes the slow large-argument path: 0.0147 ns per element and
     * round against 0.0017 on the pipelines' input (lent H100, 2026-11-23), so 15
     * rounds over 2^25 floored at 7.4 ms while whole pipelines ran in 2.93 (efficiency
     * 2.48), and bench-model's "1x" and "3x the copy" kernels were 0.12x and 0.35x. */
    /* The compute kernel at 16 and at 64 rounds: each element's load, store and share of
     * the launch cost the same at any count, so 16 rounds alone (the cost per round once
     * taken from them) priced 127 rounds 3% dear and a tuned run beat its floor (lent
     * H100, 2026-11-24: 7.21 ms against a 7.37 ms floor, efficiency 1.03). */
    elems = bytes / sizeof(float) < CAL_KERNEL_ELEMS ? bytes / sizeof(float) : CAL_KERNEL_ELEMS;
    for (int k = 0; k < KERNEL__COUNT; k++) {
        double ns[2] = {0, 0}; /* ns per element at each round count */
        for (int pass = 0; pass < (k == KERNEL_COMPUTE ? 2 : 1); pass++) {
            int iters = k != KERNEL_COMPUTE ? 1 : pass ? CAL_COMPUTE_ITERS_HI : CAL_COMPUTE_ITERS;
            for (int r = -1; r < CAL_REPS; r++) {
                float ms = 0;
                CUDA_CHECK(cudaMemsetAsync(d_a, kernel_input_byte(k), elems * sizeof(float), s0));
                CUDA_CHECK(cudaEventRecord(e0, s0));
                CUDA_CHECK(cuda_kernel_launch(k, iters, LAUNCH_CHUNK, 0, 256, d_a, 0, elems, s0));
                CUDA_CHECK(cudaEventRecord(e1, s0));
                CUDA_CHECK(cudaEventSynchronize(e1));
                CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 0)
                    kms[r] = ms;
            }
            qsort(kms, CAL_REPS, sizeof kms[0], cmp_float);
            ns[pass] = (double)kms[CAL_REPS / 2] * 1e6 / (double)elems;
        }
        if (k != KERNEL_COMPUTE) {
            c.kernel_ns_per_elem[k] = ns[0];
            continue;
        }
        double per_round = (ns[1] - ns[0]) / (CAL_COMPUTE_ITERS_HI - CAL_COMPUTE_ITERS);
        double base = ns[0] - CAL_COMPUTE_ITERS * per_round;
        if (!(per_round > 0) || base < 0) { /* noise past the base: all of it in the rounds */
            per_round = ns[1] / CAL_COMPUTE_ITERS_HI;
            base = 0;
        }
        c.kernel_ns_per_elem[k] = per_round;
        c.compute_base_ns_per_elem = base;
    }
    /* zero-copy: a kernel loading and storing every element of the mapped array itself,
     * both directions at once over PCIe; the peak of CAL_REPS, bytes each way. On the
     * lent H100 (2026-11-23) 41.5 GB/s, where the copy engines move 49-50 each way. */
    {
        float *mapped = NULL;
        int can_map = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, ordinal));
        if (can_map) {
            CUDA_CHECK(cudaHostGetDevicePointer((void **)&mapped, h_a, 0));
            for (int r = -1; r < CAL_REPS; r++) {
                float ms = 0;
                CUDA_CHECK(cudaEventRecord(e0, s0));
                CUDA_CHECK(cuda_zero_copy_touch(mapped, bytes / sizeof(float), 256, s0));
                CUDA_CHECK(cudaEventRecord(e1, s0));
                CUDA_CHECK(cudaEventSynchronize(e1));
                CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
                g = ms > 0 ? (double)bytes / ((double)ms * 1e6) : 0;
                if (r >= 0 && g > c.zero_copy_gbps)
                    c.zero_copy_gbps = g;
            }
        }
    }
    /* host costs of issuing (the model's submission costs): batches of small async
     * copies and of one-block kernel launches into one stream; median per call */
    {
        enum { CALLS = 256, BATCHES = 7 };
        double copy_us[BATCHES], launch_us[BATCHES];
        for (int r = -1; r < BATCHES; r++) {
            CUDA_CHECK(cudaStreamSynchronize(s0));
            double t0 = cuda_now_us();
            for (int i = 0; i < CALLS; i++)
                CUDA_CHECK(cudaMemcpyAsync(d_a + (size_t)i * 1024, h_a + (size_t)i * 1024, 4096, cudaMemcpyHostToDevice, s0));
            double t1 = cuda_now_us();
            CUDA_CHECK(cudaStreamSynchronize(s0));
            double t2 = cuda_now_us();
            for (int i = 0; i < CALLS; i++)
                CUDA_CHECK(cuda_kernel_launch(KERNEL_FILL, 1, LAUNCH_CHUNK, 0, 256, d_a, (uint64_t)i * 256, 256, s0));
            double t3 = cuda_now_us();
            if (r >= 0) {
                copy_us[r] = (t1 - t0) / CALLS;
                launch_us[r] = (t3 - t2) / CALLS;
            }
        }
        CUDA_CHECK(cudaStreamSynchronize(s0));
        c.copy_submit_us = median_cal(copy_us, BATCHES);
        c.kernel_launch_us = median_cal(launch_us, BATCHES);
        /* A pipeline issues otherwise: H2D, kernel, D2H of small chunks, each into the next
         * of many streams, and what that costs a call is not what one-stream batches say:
         * on one lent H100 3.6-3.8 us a call where the batches said 2.3 and 4.8; on others
         * 6.9-7.5 us a chunk at 256 streams (the reference's own issue times) where the
         * batches, raised by a 64-stream pattern of 4 KiB copies, said 7.6-8.3. So the
         * chunk's cost comes from the pattern the model is asked about where the host sets
         * the pace: the seeds' 2^22 over PSTREAMS blocking streams, 64 KiB copies and the
         * blog kernel, depth-first; split between copies and launches in the batches'
         * ratio. (Breadth-first, alternated rep by rep with depth-first, the same chunks
         * cost no more at 2^22; in blocks of breadth-first reps, as the tables and a
         * pipeline run them, 1.10-1.30x at 256 streams on some hosts, and only on streams
         * made for the block on others: bench/probe_order.cu. Not measured here: blocks of
         * 7 or 23 reps each way gave 0.001-0.48 us a reordered call in eight calibrations of
         * one lent H100 (GPU-e9091fc7, 2026-11-26) as its pace swung from 7.3 to 10.0 us a
         * chunk. A profile fits issue_reorder_us to its reference table instead
         * (profile_refit_reorder). The closing event on the legacy stream is not the
         * extra: 4-5 us at 256 streams, probe_calls.) */
        double chunk_us[BATCHES], us = 0;
        for (; made < PSTREAMS; made++)
            CUDA_CHECK(sl_stream_create(&ps[made], cudaStreamDefault));
        for (int r = -1; r < BATCHES; r++) {
            if ((rc = issue_seeds_step(h_a, h_b, d_a, SMALL_ELEMS, PSTREAMS, ps, &us, NULL, NULL, err)))
                goto cleanup;
            if (r >= 0)
                chunk_us[r] = us / PSTREAMS;
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        double per_chunk = median_cal(chunk_us, BATCHES), ratio = c.copy_submit_us > 0 ? c.kernel_launch_us / c.copy_submit_us : 1;
        if (per_chunk > 0) {
            c.copy_submit_us = per_chunk / (2 + ratio);
            c.kernel_launch_us = ratio * c.copy_submit_us;
        }
        /* The same step over the seeds' 2^25 array against their 2^22, each array memset
         * before its step and written back in place, as a pipeline's reps run: blocks of
         * reps of one size, the blocks alternated, each block's first reps left out (they
         * carry the other size's host caches). Rep by rep alternated, the two cost the same
         * (0.98-1.01 twice on GPU-60ad1d4f, 2026-11-26), while in blocks 2^25 cost 1.07-1.51
         * times 2^22 at 256 streams (bench/probe_issue.cu on GPU-1bad40cf: blocking streams
         * or not, the array read after each rep or not, events around it or not), and the
         * reference's own tables say 1.02-1.55, async_v1 and v2 averaged (eighteen lent
         * runs, H100s and H200s, 2026-11-24/26). Under CUPTI a 2^25 rep's first calls each
         * took 3-4 times a 2^22 rep's, the event record before any copy among them
         * (GPU-cf1ab62f): the host's caches after the array went through them, not the
         * copies' bytes. */
        if (bytes >= (size_t)LARGE_ELEMS * sizeof(float)) {
            enum { BLOCKS = 3, BLOCK_REPS = 5, BLOCK_SKIP = 2, KEPT = BLOCKS * (BLOCK_REPS - BLOCK_SKIP), NFIT = 5 };
            static const int fit_streams[NFIT] = {1, 4, 16, 64, PSTREAMS};
            double step_us[NFIT][2][KEPT], x[NFIT], y[NFIT], lead[NFIT * KEPT];
            int kept[NFIT][2] = {{0}}, nlead = 0;
            for (int b = 0; b < BLOCKS; b++)
                for (int f = 0; f < NFIT; f++)
                    for (int k = 0; k < 2; k++)
                        for (int r = 0; r < BLOCK_REPS; r++) {
                            uint64_t n = k ? LARGE_ELEMS : SMALL_ELEMS;
                            double first = NAN;
                            if ((rc = issue_seeds_step(h_a, h_a, d_a, n, fit_streams[f], ps, &us, e0, &first, err)))
                                goto cleanup;
                            if (r >= BLOCK_SKIP)
                                step_us[f][k][kept[f][k]++] = us;
                            if (r >= BLOCK_SKIP && k == 0 && isfinite(first))
                                lead[nlead++] = first;
                        }
            CUDA_CHECK(cudaDeviceSynchronize());
            /* The rep's lead (rep_lead_us, kept as measured, not used): what the 2^22 steps'
             * first calls took over the same calls warm, the median over the steps of 4 streams
             * and more */
            if (nlead > 0)
                c.rep_lead_us = fmax(0.001, median_cal(lead, nlead));
            for (int f = 0; f < NFIT; f++) {
                for (int k = 0; k < 2; k++)
                    qsort(step_us[f][k], KEPT, sizeof step_us[f][k][0], cmp_double_cal);
                x[f] = 3.0 * fit_streams[f] - 3;
                y[f] = step_us[f][1][KEPT / 2] - step_us[f][0][KEPT / 2];
            }
            double small256 = step_us[NFIT - 1][0][KEPT / 2], large256 = step_us[NFIT - 1][1][KEPT / 2];
            double scale = small256 > 0 ? large256 / small256 : 0; /* at 256 streams, as before */
            c.issue_scale_large = scale > 0 ? fmin(4.0, fmax(0.25, scale)) : 0;
            /* Where that extra time goes, as the reference tables' own issue times are fitted
             * (profile_fit_large_host): over 1-256 streams, the 2^25 step's extra over 2^22 is
             * a head plus a cost per call past each kind's first (3 x streams - 3), fitted
             * robustly. The head is what a rep pays once whatever its stream count: its start
             * event and first H2D, kernel and D2H (bench/probe_calls.cu, lent H100s
             * GPU-5f114823 and GPU-292ec535, 2026-11-26: the start event 12-27 us more at
             * 2^25, the first H2D and kernel 15-25 each, the first D2H 2-5, with the host's
             * caches just flushed by the array's memset). It moves with the host's state:
             * 30-90 us from one pass of bench/probe_rep.cu to the next a minute later on one
             * lent host. While the array was memset before issue_seeds_step's sync, three
             * calibrations fitted 6.1-32.3 us where every probe pass and table gave 31-102;
             * memset after it, as the reference does, four fitted 39.8-66.5 on two lent H200s
             * (2026-11-26, GPU-c6f60d55 and GPU-5bce4520, beside probe passes of 54-83 and a
             * table's 57.3) and five 20.7-48.6 on two lent H100s (beside probe passes of 16-53;
             * their tables fit 68.5 and 79.0). bench_sim --measure still writes its table's fit
             * into the profile (nine stream counts, rounds of 20 reps, where this has five of
             * nine reps). Measured: a floor of 0.001 (0 reads as not measured). */
            double head = 0, per_call = 0;
            if (stats_fit_line(x, y, NFIT, &head, &per_call) == 0) {
                c.issue_first_large_us = fmax(0.001, head);
                c.issue_call_large_us = fmax(0.001, per_call);
            }
        }
    }
    /* the host's share of host_overlap: the kernel's work on the CPU as the run does it
     * (cuda_host_apply: OpenMP over the machine's CPUs, in place), on input the run gives
     * it, over 2^20 elements (a 2^22 run's quarter: over 2^22 three calibrations on a lent
     * H200's host read 2.2-2.5 ns a blog element where its host_overlap runs took 1.4 at
     * most); the median of 9, per element (the compute kernel's per round).
     * Last: measured before the kernels, what was measured after it came out slow on a lent
     * H100 (GPU-a893228d, 2026-11-27: zero-copy 31.1 GB/s where 37 calibrations read
     * 39.4-42.2, the host's copy and launch 3.0 and 6.0 us; OpenMP's workers outlive the
     * region, the likely cause, not shown); placed last, eleven calibrations since read
     * zero-copy at 41.7-42.1. */
    {
        uint64_t n = (uint64_t)(bytes / sizeof(float)) < CAL_HOST_ELEMS ? bytes / sizeof(float) : CAL_HOST_ELEMS;
        for (int k = 0; k < KERNEL__COUNT; k++) {
            int iters = k == KERNEL_COMPUTE ? CAL_COMPUTE_ITERS : 1;
            double ns[CAL_HOST_REPS];
            for (int r = -1; r < CAL_HOST_REPS; r++) {
                cuda_host_fill_input(k, p_a, n);
                double t0 = cuda_now_us();
                cuda_host_apply(k, iters, p_a, p_a, 0, n);
                double us = cuda_now_us() - t0;
                if (r >= 0)
                    ns[r] = us * 1e3 / (double)n / iters;
            }
            c.host_ns_per_elem[k] = median_cal(ns, CAL_HOST_REPS);
        }
    }
    c.samples = CAL_REPS;
    c.valid = c.h2d_gbps > 0 && c.d2h_gbps > 0 && c.bidir_gbps > 0;
    if (!c.valid)
        SL_FAIL(SL_E_DEVICE, "calibration of device %d measured no bandwidth", ordinal);
    m->devices[index].calib = c;

cleanup:
    if (cudaSetDevice(ordinal) == cudaSuccess)
        cudaDeviceSynchronize();
    while (made > 0)
        sl_stream_destroy(ps[--made]);
    release_copy_rig(&rig);
    free(p_a);
    (void)cudaGetLastError();
    cudaSetDevice(prev);
    return rc;
}

/* Bare copies, the ceiling of any copy pipeline: `bytes` H2D and `bytes` D2H at once
 * from one start (the D2H writing the pages the H2D reads, as a pipeline's does), no
 * kernel; each rep's time is the later end, reps 25 ms apart as the calibration's. On
 * a calm lent H100 (2026-11-24, GPU-0f99a664) 128 MiB took 2.675 ms at best, 2.686
 * median: the floor issue 5 quotes for its best H100 (2.674 ms) is this. */
int cuda_copies_both_ways(const machine_info_t *m, int index, uint64_t bytes, int reps, double *min_ms,
                          double *median_ms, sl_error_t *err) {
    int rc = SL_OK, prev = 0, got = 0;
    copy_rig_t r = {};
    double *t = NULL;
    if (index < 0 || index >= m->device_count || bytes == 0 || reps < 1)
        return sl_error_set(err, SL_E_INVALID, "", "copies both ways: device %d, %llu bytes, %d reps", index,
                            (unsigned long long)bytes, reps);
    if (cudaGetDevice(&prev) != cudaSuccess)
        (void)cudaGetLastError();
    t = (double *)calloc((size_t)reps, sizeof *t);
    if (!t)
        SL_FAIL(SL_E_NOMEM, "out of memory");
    CUDA_CHECK(cudaSetDevice(m->devices[index].index));
    if ((rc = open_copy_rig(&r, bytes, cudaHostAllocPortable, -1, err)))
        goto cleanup;
    for (int k = -1; k < reps; k++) { /* the first is a warm-up */
        double a = 0, b = 0;
        usleep(CAL_BIDIR_GAP_US);
        if ((rc = time_both_batch(r.d_a, r.h, r.h, r.d_b, bytes, 1, r.s0, r.s1, r.e0, r.e1, r.e2, &a, &b, err)))
            goto cleanup;
        if (k >= 0)
            t[got++] = (a > b ? a : b) / 1e3;
    }
    {
        stats_t st;
        stats_compute(t, (size_t)got, &st);
        *min_ms = st.min;
        *median_ms = st.median;
    }
cleanup:
    if (r.s0)
        cudaStreamSynchronize(r.s0);
    if (r.s1)
        cudaStreamSynchronize(r.s1);
    release_copy_rig(&r);
    free(t);
    cudaSetDevice(prev);
    return rc;
}

/* Every device copying both ways at once, each direction on its own pinned array (as a
 * chunked pipeline's H2D and D2H touch different chunks): the bytes all of them move
 * together, both directions, each over its own time, summed over devices, and the H2D
 * part of it; the median rep of CAL_BIDIR_REPS spread like the per-device reps. On lent
 * pairs of H100s (2026-11-25, bench-two-gpus) one direction on both GPUs moved 53-55 GB/s
 * each, and both directions on both (two arrays) 164-184 GB/s together, H2D 35-41 of it
 * on each GPU and D2H 45-53, where one GPU alone moves 46-51 each way: the host side (its memory, the
 * root complex) is shared, and 2^26 pipelines of 4-16 streams on two GPUs ran 1.51-1.78x
 * one GPU, not 1.95. With the D2H writing the very pages the H2D reads, one host showed
 * no such limit (200 GB/s) and another the same one (162-174): the pipelines' way is
 * measured. The peak would pick a rep whose devices happened not to overlap. Stored in
 * every device's calibration, for the model (model_device_t.host_copy_gbps, host_h2d_gbps). */
typedef struct host_rep {
    double total, h2d; /* GB/s all devices moved in one rep, both directions; its H2D part */
} host_rep_t;

static int cmp_host_rep(const void *a, const void *b) {
    return cmp_double_cal(&((const host_rep_t *)a)->total, &((const host_rep_t *)b)->total);
}

int cuda_calibrate_host(machine_info_t *m, sl_error_t *err) {
    enum { MAXD = SPEC_MAX_DEVICES };
    int rc = SL_OK, prev = 0, nd = m->device_count < MAXD ? m->device_count : MAXD;
    size_t bytes = CAL_BYTES / 2;
    copy_rig_t rig[MAXD] = {};
    host_rep_t agg[CAL_BIDIR_REPS];
    int d = 0, got = 0;
    if (nd < 2)
        return SL_OK;
    if (cudaGetDevice(&prev) != cudaSuccess)
        (void)cudaGetLastError();
    for (d = 0; d < nd; d++) {
        size_t free_b = 0, total_b = 0;
        CUDA_CHECK(cudaSetDevice(m->devices[d].index));
        CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        bytes = fit_bytes(bytes, free_b);
    }
    for (d = 0; d < nd; d++) {
        CUDA_CHECK(cudaSetDevice(m->devices[d].index));
        if ((rc = open_copy_rig(&rig[d], bytes, cudaHostAllocPortable, cudaHostAllocPortable, err)))
            goto cleanup;
    }
    for (int r = -1; r < CAL_BIDIR_REPS; r++) { /* the first is a warm-up */
        if (r > 0)
            usleep(CAL_BIDIR_GAP_US);
        for (d = 0; d < nd; d++) {
            CUDA_CHECK(cudaSetDevice(m->devices[d].index));
            copy_rig_t *r = &rig[d];
            if ((rc = issue_both(r->d_a, r->h, r->h_out, r->d_b, bytes, 1, r->s0, r->s1, r->e0, r->e1, r->e2, err)))
                goto cleanup;
        }
        double g = 0, g_h2d = 0;
        for (d = 0; d < nd; d++) {
            double us_h2d = 0, us_d2h = 0;
            CUDA_CHECK(cudaSetDevice(m->devices[d].index));
            if ((rc = collect_both(rig[d].e0, rig[d].e1, rig[d].e2, &us_h2d, &us_d2h, err)))
                goto cleanup;
            if (us_h2d > 0 && us_d2h > 0) {
                g += (double)bytes / (us_h2d * 1e3) + (double)bytes / (us_d2h * 1e3);
                g_h2d += (double)bytes / (us_h2d * 1e3);
            }
        }
        if (r >= 0 && g > 0) {
            agg[got].total = g;
            agg[got++].h2d = g_h2d;
        }
    }
    if (got > 0) { /* the median rep's total, and its H2D part */
        qsort(agg, (size_t)got, sizeof agg[0], cmp_host_rep);
        for (d = 0; d < nd; d++) {
            m->devices[d].calib.host_copy_gbps = agg[got / 2].total;
            m->devices[d].calib.host_h2d_gbps = agg[got / 2].h2d;
        }
    }
cleanup:
    for (d = 0; d < nd; d++) {
        if (cudaSetDevice(m->devices[d].index) != cudaSuccess)
            continue;
        cudaDeviceSynchronize();
        release_copy_rig(&rig[d]);
    }
    (void)cudaGetLastError();
    cudaSetDevice(prev);
    return rc;
}
