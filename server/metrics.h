/* metrics.h — counters for GET /metrics (Prometheus text format): HTTP requests by
 * route and status, experiments finished by status, run durations as a histogram. */
#ifndef STREAMLAB_METRICS_H
#define STREAMLAB_METRICS_H

#include <stddef.h>

void metrics_http(const char *method, const char *route, int status);
void metrics_run(const char *status, double seconds);
/* Append the counters in the text format to a malloc'd buffer (caller frees). */
char *metrics_render_counters(void);

#endif
