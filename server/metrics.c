/* metrics.c — process-wide counters behind a mutex (see metrics.h). Routes are the
 * routing table's patterns, so the label set is bounded whatever paths clients send. */
#include "metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTTP_SLOTS 128
typedef struct http_count {
    const char *method, *route; /* static strings from the routing table */
    int status;
    unsigned long long n;
} http_count_t;

/* run duration buckets, seconds */
static const double buckets[] = {0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60, 300};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static http_count_t http[HTTP_SLOTS];
static unsigned long long http_overflow;
static unsigned long long runs_done, runs_failed;
static unsigned long long bucket_counts[NBUCKETS];
static unsigned long long run_count;
static double run_sum_s;

void metrics_http(const char *method, const char *route, int status) {
    pthread_mutex_lock(&lock);
    int i;
    for (i = 0; i < HTTP_SLOTS && http[i].route; i++)
        if (http[i].status == status && strcmp(http[i].route, route) == 0 && strcmp(http[i].method, method) == 0)
            break;
    if (i == HTTP_SLOTS) {
        http_overflow++;
    } else {
        if (!http[i].route)
            http[i] = (http_count_t){.method = method, .route = route, .status = status};
        http[i].n++;
    }
    pthread_mutex_unlock(&lock);
}

void metrics_run(const char *status, double seconds) {
    pthread_mutex_lock(&lock);
    if (strcmp(status, "done") == 0)
        runs_done++;
    else
        runs_failed++;
    for (size_t b = 0; b < NBUCKETS; b++)
        if (seconds <= buckets[b])
            bucket_counts[b]++;
    run_count++;
    run_sum_s += seconds;
    pthread_mutex_unlock(&lock);
}

void metrics_printf(metrics_text_t *b, const char *fmt, ...) {
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

void metrics_render_counters(metrics_text_t *b) {
    pthread_mutex_lock(&lock);
    metrics_printf(b, "# HELP streamlab_http_requests_total HTTP requests answered, by method, route and status.\n");
    metrics_printf(b, "# TYPE streamlab_http_requests_total counter\n");
    for (int i = 0; i < HTTP_SLOTS && http[i].route; i++)
        metrics_printf(b, "streamlab_http_requests_total{method=\"%s\",route=\"%s\",status=\"%d\"} %llu\n", http[i].method,
                http[i].route, http[i].status, http[i].n);
    metrics_printf(b, "# HELP streamlab_runs_total Experiments this process finished, by outcome.\n");
    metrics_printf(b, "# TYPE streamlab_runs_total counter\n");
    metrics_printf(b, "streamlab_runs_total{status=\"done\"} %llu\n", runs_done);
    metrics_printf(b, "streamlab_runs_total{status=\"failed\"} %llu\n", runs_failed);
    metrics_printf(b, "# HELP streamlab_run_duration_seconds Wall time of each experiment's run.\n");
    metrics_printf(b, "# TYPE streamlab_run_duration_seconds histogram\n");
    for (size_t i = 0; i < NBUCKETS; i++)
        metrics_printf(b, "streamlab_run_duration_seconds_bucket{le=\"%g\"} %llu\n", buckets[i], bucket_counts[i]);
    metrics_printf(b, "streamlab_run_duration_seconds_bucket{le=\"+Inf\"} %llu\n", run_count);
    metrics_printf(b, "streamlab_run_duration_seconds_sum %.6f\n", run_sum_s);
    metrics_printf(b, "streamlab_run_duration_seconds_count %llu\n", run_count);
    pthread_mutex_unlock(&lock);
}
