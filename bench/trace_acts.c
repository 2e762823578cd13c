/* trace_acts.c — `make bench-order`'s injection library (loaded by the CUDA driver through
 * CUDA_INJECTION64_PATH): CUPTI's activity records of every memcpy and kernel the process
 * runs, written at exit to $TRACE_ACTS_OUT, one line each: "H|D|K|O STREAM_ID START_NS END_NS N CHANNEL CORRELATION"
 * (H2D, D2H, kernel, other copy; N bytes, or a kernel's blocks; CHANNEL the hardware channel
 * the op ran from). With TRACE_ACTS_API=1 also the runtime calls that issued them:
 * "A CALLBACK_ID START_NS END_NS 0 0 CORRELATION". bench/bench_order.py runs the
 * plain reference with and without it: the order the engines served the ops in, and what the
 * recording itself costs the run. Records past TRACE_CAP are counted, not kept. */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_CAP (1u << 22)
#define BUF_BYTES (8u << 20)

typedef struct {
    char kind;
    unsigned stream;
    unsigned long long start, end, n;
    unsigned channel, corr;
} rec_t;

static rec_t *recs;
static unsigned nrecs, dropped;

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    *buf = (uint8_t *)aligned_alloc(8, BUF_BYTES);
    *size = *buf ? BUF_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
        rec_t o;
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
            o = (rec_t){'K', k->streamId, k->start, k->end, (unsigned long long)k->gridX * k->gridY * k->gridZ,
                       k->channelID, k->correlationId};
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
            char kind = m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD   ? 'H'
                        : m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? 'D'
                                                                         : 'O';
            o = (rec_t){kind, m->streamId, m->start, m->end, m->bytes, m->channelID, m->correlationId};
        } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
            const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)r;
            o = (rec_t){'A', a->cbid, a->start, a->end, 0, 0, a->correlationId};
        } else {
            continue;
        }
        if (nrecs < TRACE_CAP)
            recs[nrecs++] = o;
        else
            dropped++;
    }
    free(buf);
}

static void write_records(void) {
    CUptiResult rc = cuptiActivityFlushAll(1);
    if (rc != CUPTI_SUCCESS)
        fprintf(stderr, "trace_acts: cuptiActivityFlushAll: %d\n", (int)rc);
    const char *path = getenv("TRACE_ACTS_OUT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) {
        fprintf(stderr, "trace_acts: cannot write %s\n", path ? path : "(TRACE_ACTS_OUT unset)");
        return;
    }
    for (unsigned i = 0; i < nrecs; i++)
        fprintf(f, "%c %u %llu %llu %llu %u %u\n", recs[i].kind, recs[i].stream, recs[i].start, recs[i].end,
                recs[i].n, recs[i].channel, recs[i].corr);
    if (dropped)
        fprintf(stderr, "trace_acts: %u records past the cap of %u were dropped\n", dropped, TRACE_CAP);
    if (fclose(f) != 0)
        fprintf(stderr, "trace_acts: writing %s failed\n", path);
}

int InitializeInjection(void) {
    recs = (rec_t *)malloc(TRACE_CAP * sizeof *recs);
    if (!recs) {
        fprintf(stderr, "trace_acts: out of memory\n");
        return 0;
    }
    CUptiResult rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (rc == CUPTI_SUCCESS)
        rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (rc == CUPTI_SUCCESS)
        rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    if (rc == CUPTI_SUCCESS && getenv("TRACE_ACTS_API") && strcmp(getenv("TRACE_ACTS_API"), "1") == 0)
        rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (rc != CUPTI_SUCCESS) {
        fprintf(stderr, "trace_acts: CUPTI activity setup failed: %d\n", (int)rc);
        return 0;
    }
    atexit(write_records);
    return 1;
}
