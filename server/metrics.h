/* metrics.h — counters for GET /metrics (Prometheus text format): HTTP requests by
 * route and status, experiments finished by status, run durations as a histogram. */
#ifndef STREAMLAB_METRICS_H
#define STREAMLAB_METRICS_H

#include <stddef.h>

/* A growing text buffer: p is malloc'd (the caller frees it), failed once a printf or an
 * allocation failed (what was appended before stays, nothing after). */
typedef struct metrics_text {
    char *p;
    size_t len, cap;
    int failed;
} metrics_text_t;
void metrics_printf(metrics_text_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void metrics_http(const char *method, const char *route, int status);
void metrics_run(const char *status, double seconds);
/* Append the counters in the text format to b. */
void metrics_render_counters(metrics_text_t *b);

#endif
