/* cuda_host.cu — the CUDA backend's host-side work, parallel with OpenMP: the input
 * (written before every rep: the kernels work in place), the CPU reference (kernels.h's
 * formula, the same one the kernels use), the host's share of host_overlap, and
 * verification. Never timed except where the host's share is part of the experiment.
 * No CUDA calls here. */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu.h"
#include "cuda_internal.h"
#include "kernels.h"

double cuda_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void cuda_host_apply(int kernel, int iters, const float *in, float *out, uint64_t first, uint64_t count) {
    /* the host's share of host_overlap: part of the experiment, OpenMP as the seeds do, on
     * the process's CPUs even where the issuing thread is pinned (cpu_team_open) */
    long long lo = (long long)first, hi = (long long)(first + count);
    cpu_team_t team;
    cpu_team_open(&team);
#pragma omp parallel for schedule(static)
    for (long long i = lo; i < hi; i++)
        out[i] = kernel_apply(kernel, iters, (uint64_t)i, in[i]);
    cpu_team_close(&team);
}

/* The untimed host work (input, reference, verification) runs on plain threads
 * joined before the next rep starts, not on OpenMP's: OpenMP's idle workers spin for a
 * while after a parallel region (libgomp's default), on CPUs the next rep's issuing
 * thread may need. Memory-bound work takes half the CPUs, at most 8; the reference,
 * which is sin/cos-bound, all of them, at most MAX_JOBS. */
#define MAX_JOBS 32

typedef struct host_job {
    int kernel, iters;
    float *buf;
    const float *in, *out, *ref;
    uint64_t lo, hi;
    unsigned long long bad, first_bad;
} host_job_t;

static int host_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

static int compute_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_JOBS ? MAX_JOBS : (int)n;
}

/* The helpers: threads started once and kept, asleep between batches. Each batch's jobs
 * are taken in turn by the helpers; the caller takes none and spins until they are done.
 * Made and joined for every batch instead (until 2026-11-26), they cost the next rep: at
 * 2^22 async_v1 x8 streamlab took 1.021 times the reference (median of 5 interleaved
 * rounds, GPU-de5dffdf), 1.002 with the verification on the issuing thread, 0.999 with
 * none. Where a helper cannot be started its jobs run on the caller. */
static struct {
    pthread_mutex_t mu;           /* guards what follows but the counters marked atomic */
    pthread_cond_t go;            /* a new batch (gen moved) */
    pthread_mutex_t batch;        /* one batch at a time (callers on several threads) */
    pthread_t tid[MAX_JOBS];
    int started;                  /* helpers running */
    int keep_off;                 /* the CPU they were kept off (-1: none) */
    unsigned long gen;
    void *(*fn)(void *);
    host_job_t *jobs;
    int njobs, next;
    int left;                     /* __atomic: jobs of the batch not yet done */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, {0}, 0, -1, 0, NULL, NULL,
          0, 0, 0};

static void *helper_main(void *arg) {
    (void)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (pool.gen == seen)
            pthread_cond_wait(&pool.go, &pool.mu);
        seen = pool.gen;
        while (pool.next < pool.njobs) {
            int j = pool.next++;
            void *(*fn)(void *) = pool.fn;
            host_job_t *job = &pool.jobs[j];
            pthread_mutex_unlock(&pool.mu);
            fn(job);
            __atomic_sub_fetch(&pool.left, 1, __ATOMIC_ACQ_REL);
            pthread_mutex_lock(&pool.mu);
        }
    }
    return NULL;
}

/* every CPU but `self`, even where the caller is pinned to one (bench) */
static void all_but(cpu_set_t *set, long ncpu, int self) {
    CPU_ZERO(set);
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; c++)
        if (c != self || ncpu < 2)
            CPU_SET((int)c, set);
}

/* Up to n helpers kept off the CPU `self`; how many there are. */
static int helpers_for(int n, long ncpu, int self) {
    cpu_set_t others;
    all_but(&others, ncpu, self);
    if (pool.keep_off != self) { /* the caller moved: keep the helpers off its new CPU */
        for (int t = 0; t < pool.started; t++)
            pthread_setaffinity_np(pool.tid[t], sizeof others, &others);
        pool.keep_off = self;
    }
    while (pool.started < n && ncpu >= 2) { /* one CPU: all on the caller */
        pthread_attr_t attr;
        bool have_attr = pthread_attr_init(&attr) == 0;
        if (have_attr)
            pthread_attr_setaffinity_np(&attr, sizeof others, &others);
        int rc = pthread_create(&pool.tid[pool.started], have_attr ? &attr : NULL, helper_main, NULL);
        if (rc != 0 && have_attr) /* e.g. a CPU set the cgroup does not allow */
            rc = pthread_create(&pool.tid[pool.started], NULL, helper_main, NULL);
        if (have_attr)
            pthread_attr_destroy(&attr);
        if (rc != 0)
            break;
        pthread_detach(pool.tid[pool.started]);
        pool.started++;
    }
    return pool.started < n ? pool.started : n;
}

/* The jobs run on the helpers, kept off the caller's CPU while the caller spins: the
 * CPU that issues the next rep keeps its caches (the driver's per-stream state) and
 * stays awake. Measured on the lent H100 (2026-11-23), one process alternating with
 * the reference's loop, 2^22 async_v1 at 4..256 streams, host issue time over the
 * reference's: +75..+345 us (about 1 us a stream) with the helpers free to run on the
 * issuing CPU and the caller doing a share, then sleeping in join; 0..+140 us so; and
 * -80..+10 us with no verification at all (it was the verification: skipping the
 * output's poison (two arrays then), reading either array alone, flushing each
 * verified line or sleeping as long did not show it or did not help). */
static void run_jobs(void *(*fn)(void *), host_job_t *jobs, int n) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pthread_mutex_lock(&pool.batch);
    pthread_mutex_lock(&pool.mu);
    int helpers = helpers_for(n, ncpu, sched_getcpu());
    if (helpers == 0) {
        pthread_mutex_unlock(&pool.mu);
        for (int t = 0; t < n; t++)
            fn(&jobs[t]);
        pthread_mutex_unlock(&pool.batch);
        return;
    }
    pool.fn = fn;
    pool.jobs = jobs;
    pool.njobs = n;
    pool.next = 0;
    __atomic_store_n(&pool.left, n, __ATOMIC_RELEASE);
    pool.gen++;
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.mu);
    /* spin (a helper that landed on this CPU anyway, where a cgroup allowed no other, is
     * not starved for long: after ~50 ms the caller yields between looks) */
    for (long spin = 0; __atomic_load_n(&pool.left, __ATOMIC_ACQUIRE) > 0; spin++) {
        if (spin < (1L << 20)) {
#if defined(__SSE2__)
            _mm_pause();
#endif
        } else {
            sched_yield();
        }
    }
    pthread_mutex_unlock(&pool.batch);
}

static void split(host_job_t *jobs, int n, uint64_t count) {
    for (int t = 0; t < n; t++) {
        /* 64-element (256-byte) boundaries keep each share's stores aligned */
        uint64_t per = (count / (uint64_t)n + 63) & ~63ull;
        jobs[t].lo = per * (uint64_t)t < count ? per * (uint64_t)t : count;
        jobs[t].hi = per * (uint64_t)(t + 1) < count ? per * (uint64_t)(t + 1) : count;
        if (t == n - 1)
            jobs[t].hi = count;
    }
}

static void *verify_job(void *arg) {
    host_job_t *j = (host_job_t *)arg;
    j->bad = 0;
    j->first_bad = ~0ull;
    for (uint64_t i = j->lo; i < j->hi; i++) {
        if (!kernel_output_ok(j->kernel, j->out[i], j->ref[i])) {
            if (!j->bad)
                j->first_bad = i;
            j->bad++;
        }
    }
    return NULL;
}

/* fn over [0, n) in t jobs like proto, each its share (split) */
static void run_split(void *(*fn)(void *), const host_job_t *proto, host_job_t *jobs, int t, uint64_t n) {
    for (int i = 0; i < t; i++)
        jobs[i] = *proto;
    split(jobs, t, n);
    run_jobs(fn, jobs, t);
}

uint64_t cuda_host_verify(int kernel, const float *out, const float *ref, uint64_t n, uint64_t *first_bad) {
    host_job_t jobs[MAX_JOBS], proto = {};
    proto.kernel = kernel, proto.out = out, proto.ref = ref;
    int t = host_threads();
    unsigned long long bad = 0, first = ~0ull;
    run_split(verify_job, &proto, jobs, t, n);
    for (int i = 0; i < t; i++) {
        bad += jobs[i].bad;
        if (jobs[i].bad && jobs[i].first_bad < first)
            first = jobs[i].first_bad;
    }
    *first_bad = first;
    return bad;
}

void cuda_host_fill_input(int kernel, float *buf, uint64_t n) {
    memset(buf, kernel_input_byte(kernel), n * sizeof *buf);
}

static void *reference_job(void *arg) {
    host_job_t *j = (host_job_t *)arg;
    j->bad = 0;
    for (uint64_t i = j->lo; i < j->hi; i++) {
        j->buf[i] = kernel_apply(j->kernel, j->iters, i, j->in[i]);
        j->bad += (unsigned long long)kernel_output_ok(j->kernel, j->in[i], j->buf[i]);
    }
    return NULL;
}

uint64_t cuda_host_reference(int kernel, int iters, const float *in, float *ref, uint64_t n) {
    host_job_t jobs[MAX_JOBS], proto = {};
    proto.kernel = kernel, proto.iters = iters, proto.buf = ref, proto.in = in;
    int t = compute_threads();
    uint64_t same = 0;
    run_split(reference_job, &proto, jobs, t, n);
    for (int i = 0; i < t; i++)
        same += jobs[i].bad;
    return same;
}
