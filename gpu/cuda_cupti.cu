/* cuda_cupti.cu — timing "cupti": hardware timestamps of every copy and kernel from
 * CUPTI's activity API, with no events added to the streams. libcupti is loaded with
 * dlopen at the first cupti run (the binary starts without it) from the usual CUDA
 * places, or from $STREAMLAB_CUPTI. CUPTI is per process: one cupti run at a time
 * (a lock), its records collected once, after the timed reps (cupti_collect). The
 * records' layouts are the compile-time header's, so the library must be of the same
 * CUPTI major version (checked at load). Only the activity API is used. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

#if defined(__has_include)
#if __has_include(<cupti.h>)
#include <cupti.h>
#define SL_HAVE_CUPTI 1
#endif
#endif

#ifndef SL_HAVE_CUPTI

int cupti_begin(size_t expected_records, sl_error_t *err) {
    (void)expected_records;
    return sl_error_set(err, SL_E_UNAVAILABLE, "timing",
                        "timing \"cupti\" is unavailable: streamlab was built without CUPTI's headers");
}
uint64_t cupti_timestamp_ns(void) { return 0; }
int cupti_collect(cupti_record_t **recs, size_t *n, sl_error_t *err) {
    *recs = NULL;
    *n = 0;
    return sl_error_set(err, SL_E_UNAVAILABLE, "timing", "CUPTI not compiled in");
}
void cupti_end(void) {}
const char *cupti_library(void) { return "unavailable: built without CUPTI headers"; }

#else

/* The CUPTI record versions of the header this file is compiled against (CUDA 13:
 * Memcpy6, Kernel10; CUDA 12: Memcpy5, Kernel9). Only kind, copyKind, bytes, start,
 * end, deviceId, streamId and correlationId are read. */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityMemcpy6 sl_memcpy_rec;
typedef CUpti_ActivityKernel10 sl_kernel_rec;
#else
typedef CUpti_ActivityMemcpy5 sl_memcpy_rec;
typedef CUpti_ActivityKernel9 sl_kernel_rec;
#endif

#define CUPTI_BUFFER_BYTES (2u << 20)
#define CUPTI_POOL 64      /* buffers kept for reuse: 128 MiB at most */
#define CUPTI_RECORD_BYTES 256 /* room per record in a buffer (a Kernel10 is about 200) */

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t cu_run_lock = PTHREAD_MUTEX_INITIALIZER; /* one cupti run at a time */
static pthread_mutex_t cu_rec_lock = PTHREAD_MUTEX_INITIALIZER; /* records, filled from CUPTI's thread */
static pthread_mutex_t cu_pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* Record buffers come zeroed and already touched from a pool filled before the timed
 * reps: CUPTI asks for a buffer from the thread that issues the work, and zeroes one
 * itself there unless told it comes zeroed. Buffers are zeroed again when they come
 * back, outside the timed reps. On the lent H100, with a fresh buffer and a forced
 * flush per rep, each rep's first copy started 0.35-0.5 ms after its start event;
 * with this pool and no flush until the reps are done, 0.04 ms (events: 0.01 ms). */
static uint8_t *cu_pool[CUPTI_POOL];
static int cu_pool_n;

static uint8_t *pool_take(void) {
    uint8_t *b = NULL;
    pthread_mutex_lock(&cu_pool_lock);
    if (cu_pool_n > 0)
        b = cu_pool[--cu_pool_n];
    pthread_mutex_unlock(&cu_pool_lock);
    if (!b)
        b = (uint8_t *)calloc(1, CUPTI_BUFFER_BYTES); /* zeroed; pages touched below */
    if (b)
        for (size_t i = 0; i < CUPTI_BUFFER_BYTES; i += 4096)
            ((volatile uint8_t *)b)[i] = 0;
    return b;
}

static void pool_give(uint8_t *b) {
    pthread_mutex_lock(&cu_pool_lock);
    if (cu_pool_n < CUPTI_POOL) {
        cu_pool[cu_pool_n++] = b;
        b = NULL;
    }
    pthread_mutex_unlock(&cu_pool_lock);
    free(b);
}

static struct {
    bool ok;
    char status[256];
    void *lib;
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*result_string)(CUptiResult, const char **);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*version)(uint32_t *);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*set_attribute)(CUpti_ActivityAttribute, size_t *, void *);
    cupti_record_t *recs;
    size_t count, cap;
    size_t dropped_total;
    bool oom;
} cu;

static const char *cupti_err(CUptiResult r) {
    const char *s = NULL;
    if (cu.result_string && cu.result_string(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "CUPTI error";
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = pool_take();
    *size = *buffer ? CUPTI_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void push_record(const cupti_record_t *r) {
    if (cu.count == cu.cap) {
        size_t cap = cu.cap ? cu.cap * 2 : 1024;
        cupti_record_t *p = (cupti_record_t *)realloc(cu.recs, cap * sizeof *p);
        if (!p) {
            cu.oom = true;
            return;
        }
        cu.recs = p;
        cu.cap = cap;
    }
    cu.recs[cu.count++] = *r;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                                      size_t valid) {
    (void)size;
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&cu_rec_lock);
    while (buffer && cu.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
        cupti_record_t r;
        memset(&r, 0, sizeof r);
        if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const sl_memcpy_rec *m = (const sl_memcpy_rec *)rec;
            if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD)
                r.op = OP_H2D;
            else if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH)
                r.op = OP_D2H;
            else
                continue;
            r.ordinal = (int)m->deviceId;
            r.correlation = m->correlationId;
            r.stream_id = m->streamId;
            r.start_ns = m->start;
            r.end_ns = m->end;
            r.bytes = m->bytes;
            push_record(&r);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const sl_kernel_rec *k = (const sl_kernel_rec *)rec;
            r.op = OP_KERNEL;
            r.ordinal = (int)k->deviceId;
            r.correlation = k->correlationId;
            r.stream_id = k->streamId;
            r.start_ns = k->start;
            r.end_ns = k->end;
            push_record(&r);
        }
    }
    size_t dropped = 0;
    if (cu.dropped && cu.dropped(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
        cu.dropped_total += dropped;
    pthread_mutex_unlock(&cu_rec_lock);
    if (buffer) {
        memset(buffer, 0, valid); /* CUPTI was told the buffers come zeroed */
        pool_give(buffer);
    }
}

#define CUPTI_SYM(field, name) (*(void **)&cu.field = dlsym(cu.lib, name))

static void cupti_load(void) {
    static const char *const paths[] = {
        "libcupti.so.13",
        "libcupti.so",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda/lib64/libcupti.so.13",
        "/usr/local/cuda/lib64/libcupti.so",
        "/usr/local/cuda/lib/libcupti.so.13",
        "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
    };
    const char *env = getenv("STREAMLAB_CUPTI");
    const char *used = NULL;
    if (env && *env) {
        cu.lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        used = env;
    }
    for (size_t i = 0; !cu.lib && i < sizeof paths / sizeof paths[0]; i++) {
        cu.lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        used = paths[i];
    }
    if (!cu.lib) {
        snprintf(cu.status, sizeof cu.status,
                 "unavailable: libcupti not found (set STREAMLAB_CUPTI to its path; tried libcupti.so.13 and "
                 "/usr/local/cuda/extras/CUPTI/lib64)");
        return;
    }
    CUPTI_SYM(enable, "cuptiActivityEnable");
    CUPTI_SYM(disable, "cuptiActivityDisable");
    CUPTI_SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
    CUPTI_SYM(flush_all, "cuptiActivityFlushAll");
    CUPTI_SYM(next_record, "cuptiActivityGetNextRecord");
    CUPTI_SYM(result_string, "cuptiGetResultString");
    CUPTI_SYM(timestamp, "cuptiGetTimestamp");
    CUPTI_SYM(version, "cuptiGetVersion");
    CUPTI_SYM(dropped, "cuptiActivityGetNumDroppedRecords");
    CUPTI_SYM(set_attribute, "cuptiActivitySetAttribute");
    uint32_t v = 0;
    if (!cu.enable || !cu.disable || !cu.register_callbacks || !cu.flush_all || !cu.next_record || !cu.timestamp ||
        !cu.version) {
        snprintf(cu.status, sizeof cu.status, "unavailable: %s lacks the activity API", used);
        goto fail;
    }
    if (cu.version(&v) != CUPTI_SUCCESS ||
        (v >= 10000 ? v / 10000 : v) != (CUPTI_API_VERSION >= 10000 ? CUPTI_API_VERSION / 10000 : CUPTI_API_VERSION)) {
        snprintf(cu.status, sizeof cu.status,
                 "unavailable: %s has CUPTI API version %u, streamlab was built for %u (record layouts differ)",
                 used, v, (unsigned)CUPTI_API_VERSION);
        goto fail;
    }
    if (cu.set_attribute) {
        uint8_t zeroed = 1;
        size_t len = sizeof zeroed;
        cu.set_attribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &zeroed);
    }
    {
        CUptiResult r = cu.register_callbacks(buffer_requested, buffer_completed);
        if (r != CUPTI_SUCCESS) {
            snprintf(cu.status, sizeof cu.status, "unavailable: cuptiActivityRegisterCallbacks: %s", cupti_err(r));
            goto fail;
        }
    }
    cu.ok = true;
    snprintf(cu.status, sizeof cu.status, "%s (CUPTI API %u)", used, v);
    return;
fail:
    /* CUPTI stays loaded: unloading a half-initialised CUPTI is not safe. */
    cu.ok = false;
}

const char *cupti_library(void) {
    pthread_once(&cu_once, cupti_load);
    return cu.status;
}

int cupti_begin(size_t expected_records, sl_error_t *err) {
    pthread_once(&cu_once, cupti_load);
    if (!cu.ok)
        return sl_error_set(err, SL_E_UNAVAILABLE, "timing", "timing \"cupti\" is %s", cu.status);
    pthread_mutex_lock(&cu_run_lock);
    {
        /* enough ready buffers for every record the run will make, so that none is
         * allocated while a rep is timed */
        size_t want = expected_records * CUPTI_RECORD_BYTES / CUPTI_BUFFER_BYTES + 3;
        uint8_t *ready[CUPTI_POOL];
        size_t n = 0;
        if (want > CUPTI_POOL)
            want = CUPTI_POOL;
        while (n < want && (ready[n] = pool_take()) != NULL)
            n++;
        while (n > 0)
            pool_give(ready[--n]);
    }
    CUptiResult r = cu.enable(CUPTI_ACTIVITY_KIND_MEMCPY);
    if (r == CUPTI_SUCCESS)
        r = cu.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); /* does not serialise kernels */
    if (r != CUPTI_SUCCESS) {
        cu.disable(CUPTI_ACTIVITY_KIND_MEMCPY);
        pthread_mutex_unlock(&cu_run_lock);
        return sl_error_set(err, SL_E_UNAVAILABLE, "timing", "timing \"cupti\": cuptiActivityEnable: %s",
                            cupti_err(r));
    }
    pthread_mutex_lock(&cu_rec_lock);
    cu.count = 0;
    cu.dropped_total = 0;
    cu.oom = false;
    pthread_mutex_unlock(&cu_rec_lock);
    return SL_OK;
}

uint64_t cupti_timestamp_ns(void) {
    uint64_t t = 0;
    if (cu.ok)
        cu.timestamp(&t);
    return t;
}

int cupti_collect(cupti_record_t **recs, size_t *n, sl_error_t *err) {
    *recs = NULL;
    *n = 0;
    CUptiResult r = cu.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS)
        return sl_error_set(err, SL_E_DEVICE, "timing", "cuptiActivityFlushAll: %s", cupti_err(r));
    pthread_mutex_lock(&cu_rec_lock);
    int rc = SL_OK;
    if (cu.oom)
        rc = sl_error_set(err, SL_E_NOMEM, "timing", "out of memory collecting CUPTI records");
    else if (cu.dropped_total)
        rc = sl_error_set(err, SL_E_DEVICE, "timing", "CUPTI dropped %zu activity records", cu.dropped_total);
    if (rc == SL_OK && cu.count) {
        *recs = (cupti_record_t *)malloc(cu.count * sizeof **recs);
        if (!*recs)
            rc = sl_error_set(err, SL_E_NOMEM, "timing", "out of memory collecting CUPTI records");
        else {
            memcpy(*recs, cu.recs, cu.count * sizeof **recs);
            *n = cu.count;
        }
    }
    cu.count = 0;
    cu.dropped_total = 0;
    cu.oom = false;
    pthread_mutex_unlock(&cu_rec_lock);
    return rc;
}

void cupti_end(void) {
    cu.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cu.disable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cu.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&cu_rec_lock);
    cu.count = 0;
    cu.dropped_total = 0;
    pthread_mutex_unlock(&cu_rec_lock);
    pthread_mutex_unlock(&cu_run_lock);
}

#endif
