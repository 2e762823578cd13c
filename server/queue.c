/* queue.c — worker threads (see queue.h). A worker claims the oldest queued
 * experiment of its device in one UPDATE ... RETURNING, locks every device the spec
 * uses (in index order, so multi_gpu runs cannot deadlock), runs it through
 * backend_run (on this machine, or on the machine its sim_of names, as the model stands
 * in for it) and stores the result and its events in one transaction, or the error
 * as a failed experiment. An idle worker sleeps on a condition variable until new
 * work is queued or a second passes. */
#include "queue.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "push.h"
#include "sim_of.h"
#include "spec.h"

typedef struct worker {
    struct queue *q;
    int device;
    pthread_t thread;
    bool started;
} worker_t;

struct queue {
    app_t *app;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    unsigned long long generation; /* bumped by queue_notify */
    int nworkers;
    worker_t workers[SPEC_MAX_DEVICES];
    pthread_mutex_t device_lock[SPEC_MAX_DEVICES];
};

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int queue_run_one(app_t *app, store_t *store, const char *id, json_t *spec_json, sl_error_t *err) {
    spec_t spec;
    sl_error_t e = {0};
    double t0 = mono_s();
    int rc = spec_from_json(spec_json, &spec, &e);
    const machine_info_t *machine = &app->machine;
    machine_info_t *sim = NULL;
    if (rc == SL_OK && spec.sim_of[0]) { /* the machine it simulates, loaded now: the store may have changed */
        if (!(sim = calloc(1, sizeof *sim)))
            rc = sl_error_set(&e, SL_E_NOMEM, "", "out of memory loading machine %s", spec.sim_of);
        else if (!(machine = sim_of_machine(app, store, &spec, sim, &e)))
            rc = e.code ? (int)e.code : SL_E_INTERNAL;
    }
    if (rc == SL_OK)
        rc = backend_check(&spec, machine, &e);
    result_t result;
    memset(&result, 0, sizeof result);
    if (rc == SL_OK)
        rc = backend_run(&spec, machine, &result, &e);
    free(sim);
    int store_rc;
    if (rc == SL_OK) {
        store_rc = store_finish_experiment(store, id, &result, err);
        result_free(&result);
        metrics_run(store_rc == SL_OK ? "done" : "failed", mono_s() - t0);
        if (store_rc) {
            fprintf(stderr, "streamlab: %s: storing the result failed: %s\n", id, err->message);
            char msg[600];
            snprintf(msg, sizeof msg, "storing the result failed: %s", err->message);
            store_fail_experiment(store, id, msg, NULL);
            push_enqueue(app, store, id);
            return store_rc;
        }
        push_enqueue(app, store, id);
        return SL_OK;
    }
    char msg[600];
    snprintf(msg, sizeof msg, "%s: %s", sl_code_name(e.code), e.message);
    metrics_run("failed", mono_s() - t0);
    store_rc = store_fail_experiment(store, id, msg, err);
    if (store_rc)
        fprintf(stderr, "streamlab: %s: recording the failure failed: %s\n", id, err->message);
    push_enqueue(app, store, id);
    if (err)
        *err = e;
    return rc;
}

static void lock_devices(queue_t *q, const spec_t *spec, bool lock) {
    bool used[SPEC_MAX_DEVICES] = {0};
    for (int i = 0; i < spec->device_count; i++)
        if (spec->devices[i] >= 0 && spec->devices[i] < SPEC_MAX_DEVICES)
            used[spec->devices[i]] = true;
    for (int d = 0; d < SPEC_MAX_DEVICES; d++)
        if (used[d]) {
            int rc = lock ? pthread_mutex_lock(&q->device_lock[d]) : pthread_mutex_unlock(&q->device_lock[d]);
            if (rc)
                fprintf(stderr, "streamlab: device %d %s failed: %s\n", d, lock ? "lock" : "unlock", strerror(rc));
        }
}

static void *worker_main(void *arg) {
    worker_t *w = arg;
    queue_t *q = w->q;
    app_t *app = q->app;
    sl_error_t err = {0};
    int index = (int)(w - q->workers);
    char name[16], why[160];
    snprintf(name, sizeof name, "sl-worker%d", index);
    pthread_setname_np(pthread_self(), name); /* a name for top -H and /proc: best effort */
    /* --worker-cpu N: worker i issues from CPU N + i, the only thread there (the HTTP
     * threads, the store's writers and the verification helpers run elsewhere) */
    if (app->cfg.worker_cpu >= 0 && app_pin_thread(app->cfg.worker_cpu + index, why, sizeof why))
        fprintf(stderr, "streamlab: worker %d runs unpinned: --worker-cpu: %s\n", index, why);
    store_t *store = app_store(app, &err);
    if (!store) {
        fprintf(stderr, "streamlab: worker %d cannot open the store: %s\n", w->device, err.message);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&q->lock);
        bool stopping = q->stopping;
        unsigned long long gen = q->generation;
        pthread_mutex_unlock(&q->lock);
        if (stopping)
            break;
        char id[64];
        json_t *spec_json = NULL;
        int claimed = store_claim_next(store, app->machine.id, w->device, id, &spec_json, &err);
        if (claimed < 0)
            fprintf(stderr, "streamlab: worker %d: %s\n", w->device, err.message);
        if (claimed == 1) {
            spec_t spec;
            sl_error_t e;
            /* a simulation of another machine (sim_of) uses none of this machine's devices */
            bool locks = spec_from_json(spec_json, &spec, &e) == SL_OK && !spec.sim_of[0];
            if (locks)
                lock_devices(q, &spec, true);
            int rc = queue_run_one(app, store, id, spec_json, &err);
            if (locks)
                lock_devices(q, &spec, false);
            fprintf(stderr, "streamlab: experiment %s %s%s%s\n", id, rc == SL_OK ? "done" : "failed",
                    rc == SL_OK ? "" : ": ", rc == SL_OK ? "" : err.message);
            json_decref(spec_json);
            continue;
        }
        /* nothing to do: sleep until notified, stopped, or a second passes */
        pthread_mutex_lock(&q->lock);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        while (!q->stopping && q->generation == gen) {
            int rc = pthread_cond_timedwait(&q->wake, &q->lock, &until);
            if (rc == ETIMEDOUT)
                break;
        }
        pthread_mutex_unlock(&q->lock);
    }
    return NULL;
}

int queue_worker_count(const app_t *app, int workers) {
    int n = workers < 0 ? app->machine.device_count : workers;
    return n > SPEC_MAX_DEVICES ? SPEC_MAX_DEVICES : n;
}

int queue_start(app_t *app, int workers, queue_t **out, sl_error_t *err) {
    queue_t *q = calloc(1, sizeof *q);
    if (!q)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory starting the queue");
    q->app = app;
    if (pthread_mutex_init(&q->lock, NULL) || pthread_cond_init(&q->wake, NULL)) {
        free(q);
        return sl_error_set(err, SL_E_INTERNAL, "", "cannot create the queue's lock");
    }
    for (int d = 0; d < SPEC_MAX_DEVICES; d++)
        if (pthread_mutex_init(&q->device_lock[d], NULL)) {
            free(q);
            return sl_error_set(err, SL_E_INTERNAL, "", "cannot create a device lock");
        }
    int n = queue_worker_count(app, workers);
    *out = q;
    for (int i = 0; i < n; i++) {
        worker_t *w = &q->workers[i];
        w->q = q;
        w->device = i % (app->machine.device_count > 0 ? app->machine.device_count : 1);
        int rc = pthread_create(&w->thread, NULL, worker_main, w);
        if (rc) {
            queue_stop(q);
            *out = NULL;
            return sl_error_set(err, SL_E_INTERNAL, "", "cannot start worker %d: %s", i, strerror(rc));
        }
        w->started = true;
        q->nworkers++;
    }
    return SL_OK;
}

void queue_notify(queue_t *q) {
    if (!q)
        return;
    pthread_mutex_lock(&q->lock);
    q->generation++;
    pthread_cond_broadcast(&q->wake);
    pthread_mutex_unlock(&q->lock);
}

void queue_stop(queue_t *q) {
    if (!q)
        return;
    pthread_mutex_lock(&q->lock);
    q->stopping = true;
    pthread_cond_broadcast(&q->wake);
    pthread_mutex_unlock(&q->lock);
    for (int i = 0; i < SPEC_MAX_DEVICES; i++)
        if (q->workers[i].started)
            pthread_join(q->workers[i].thread, NULL);
    pthread_cond_destroy(&q->wake);
    pthread_mutex_destroy(&q->lock);
    for (int d = 0; d < SPEC_MAX_DEVICES; d++)
        pthread_mutex_destroy(&q->device_lock[d]);
    free(q);
}
