/* push.h — `--push URL`: every finished experiment (done or failed) is sent as a bundle
 * to a central streamlab's POST URL/api/import. The store's outbox (db/outbox.h) holds
 * each one until the central server accepts it, so nothing is lost while it is down; a
 * push thread (serve) or the caller (run) delivers, retrying with exponential backoff
 * (1 s doubling to 60 s) on connection failures, 5xx, 409 and 429. Plain HTTP/1.1 over
 * POSIX sockets; STREAMLAB_PUSH_TOKEN, when set, is sent as "Authorization: Bearer". */
#ifndef STREAMLAB_PUSH_H
#define STREAMLAB_PUSH_H

#include "app.h"

#define PUSH_BACKOFF_MIN_S 1.0
#define PUSH_BACKOFF_MAX_S 60.0

/* Is url a push target we can use ("http://host[:port][/prefix]")? 0, or -1 with why. */
int push_check_url(const char *url, char *why, size_t whylen);
/* Put a finished experiment in the outbox and wake the push thread; a no-op without
 * --push. Failures are logged: the experiment itself is stored whatever happens here. */
void push_enqueue(app_t *app, store_t *store, const char *experiment_id);
/* serve: start the push thread (nothing without --push); push_stop joins it. */
int push_start(app_t *app, sl_error_t *err);
void push_stop(app_t *app);
/* run: deliver the outbox in the calling thread until it is empty or wait_s have passed.
 * Returns 0 when experiment_id is delivered, else 1 with why filled. */
int push_drain(app_t *app, store_t *store, const char *experiment_id, double wait_s, char *why, size_t whylen);

#endif
