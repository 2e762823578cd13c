/* queue.h — the experiment queue and its workers. The queue itself lives in SQLite
 * (status 'queued', oldest first), so a restart picks up where the last process left
 * off; this module owns the worker threads (one per device) that claim and run them. */
#ifndef STREAMLAB_QUEUE_H
#define STREAMLAB_QUEUE_H

#include "app.h"

typedef struct queue queue_t;

/* How many worker threads queue_start starts for `workers` (-1: one per device), at most
 * SPEC_MAX_DEVICES. */
int queue_worker_count(const app_t *app, int workers);
/* Start `workers` threads (-1: one per device of the machine; 0: none). */
int queue_start(app_t *app, int workers, queue_t **out, sl_error_t *err);
/* Wake idle workers: new work was queued. */
void queue_notify(queue_t *q);
/* Stop taking work; wait for running experiments to finish, then join. */
void queue_stop(queue_t *q);
/* Run one claimed experiment (spec_json is the stored spec) and store its outcome.
 * Used by the workers and by `streamlab run`. Returns 0 when it ended done. */
int queue_run_one(app_t *app, store_t *store, const char *id, json_t *spec_json, sl_error_t *err);

#endif
