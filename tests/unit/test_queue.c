/* test_queue.c — unit tests of server/queue.c with a simulated machine and a temporary
 * database: workers run queued experiments in FIFO order, zero workers run nothing,
 * a run that fails is stored as failed and the worker goes on, queue_stop never leaves
 * an experiment running, several devices run their own work. Waits poll the store
 * with a deadline; the deadline only stops a hung test, it is not a speed limit. */
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../db/store.h"
#include "../../server/app.h"
#include "../../server/queue.h"
#include "../../server/spec.h"
#include "check.h"

static void close_store(void *p) {
    store_close(p);
}

#define DEADLINE_S 120.0 /* only against a hang; sanitizer builds are slow */

/* ---- fixture: an app on a simulated machine with a temporary, migrated database ---- */

typedef struct fixture {
    char dir[64];
    app_t app;
    store_t *s; /* the test's own connection */
    bool key;
    int saved_stderr; /* the workers log each run to stderr: kept in dir/log, shown if the test fails */
} fixture_t;

static void log_to_file(fixture_t *f) {
    char path[128];
    snprintf(path, sizeof path, "%s/log", f->dir);
    fflush(stderr);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    f->saved_stderr = fd >= 0 ? dup(2) : -1;
    if (f->saved_stderr >= 0)
        dup2(fd, 2);
    if (fd >= 0)
        close(fd);
}

static void log_restore(fixture_t *f) {
    if (f->saved_stderr < 0)
        return;
    fflush(stderr);
    dup2(f->saved_stderr, 2);
    close(f->saved_stderr);
    f->saved_stderr = -1;
    char path[128];
    snprintf(path, sizeof path, "%s/log", f->dir);
    if (check_failures_in_test) {
        FILE *log = fopen(path, "r");
        char line[1024];
        fprintf(stderr, "  --- %s: the test's log ---\n", check_current_test);
        while (log && fgets(line, sizeof line, log))
            fputs(line, stderr);
        if (log)
            fclose(log);
    }
    unlink(path);
}

static bool fixture_open(fixture_t *f, int sim_devices) {
    memset(f, 0, sizeof *f);
    f->saved_stderr = -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/sl-test-queue-XXXXXX");
    if (!mkdtemp(f->dir)) {
        perror("mkdtemp");
        return false;
    }
    log_to_file(f);
    snprintf(f->app.cfg.db_path, sizeof f->app.cfg.db_path, "%s/streamlab.db", f->dir);
    f->app.cfg.workers = 1;
    char n[8];
    snprintf(n, sizeof n, "%d", sim_devices);
    setenv("STREAMLAB_SIM_DEVICES", n, 1);
    machine_discover(&f->app.machine, true, "unit-queue");
    unsetenv("STREAMLAB_SIM_DEVICES");
    if (f->app.machine.device_count != sim_devices) {
        fprintf(stderr, "  fixture: asked for %d sim devices, got %d\n", sim_devices, f->app.machine.device_count);
        return false;
    }
    if (pthread_key_create(&f->app.store_key, close_store))
        return false;
    f->key = true;
    sl_error_t err = {0};
    if (store_open(f->app.cfg.db_path, &f->s, &err) || store_migrate(f->s, &err) ||
        store_upsert_machine(f->s, &f->app.machine, &err)) {
        fprintf(stderr, "  fixture: %s\n", err.message);
        return false;
    }
    return true;
}

static void fixture_close(fixture_t *f) {
    log_restore(f);
    store_close(f->s);
    f->s = NULL;
    /* a store this (main) thread opened through app_store */
    if (f->key) {
        store_close(pthread_getspecific(f->app.store_key));
        pthread_setspecific(f->app.store_key, NULL);
        pthread_key_delete(f->app.store_key);
    }
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char p[1100];
        snprintf(p, sizeof p, "%s%s", f->app.cfg.db_path, suffixes[i]);
        unlink(p);
    }
    rmdir(f->dir);
}

#define FIXTURE(f, devices)              \
    fixture_t f;                         \
    if (!fixture_open(&f, devices)) {    \
        CHECK(!"fixture opened");        \
        fixture_close(&f);               \
        return;                          \
    }

/* Insert experiment id with the stored spec `stored` (inserted as is, bypassing the
 * parser, as a spec from an older or buggy writer would be) and the spec_t of `text`. */
static int add_raw(fixture_t *f, const char *id, const char *text, const char *stored) {
    json_t *j = json_loads(text, 0, NULL);
    spec_t spec;
    sl_error_t err = {0};
    int rc = j ? spec_from_json(j, &spec, &err) : SL_E_PARSE;
    json_decref(j);
    if (rc) {
        fprintf(stderr, "  test spec %s: %s\n", text, err.message);
        return rc;
    }
    json_t *full = stored ? json_loads(stored, 0, NULL) : spec_to_json(&spec);
    store_new_experiment_t e = {.id = id, .machine_id = f->app.machine.id, .spec = &spec, .spec_json = full};
    rc = full ? store_insert_experiment(f->s, &e, &err) : SL_E_PARSE;
    if (rc)
        fprintf(stderr, "  insert %s: %s\n", id, err.message);
    json_decref(full);
    return rc;
}

static int add(fixture_t *f, const char *id, const char *text) {
    return add_raw(f, id, text, NULL);
}

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool counts(fixture_t *f, store_counts_t *c) {
    sl_error_t err = {0};
    if (store_count_by_status(f->s, c, &err)) {
        fprintf(stderr, "  counts: %s\n", err.message);
        return false;
    }
    return true;
}

/* Poll until nothing is queued or running (and `finished` experiments have ended), or the deadline. */
static bool wait_all_ended(fixture_t *f, long long finished) {
    double until = mono_s() + DEADLINE_S;
    store_counts_t c;
    while (mono_s() < until) {
        if (!counts(f, &c))
            return false;
        if (c.queued == 0 && c.running == 0 && c.done + c.failed + c.cancelled >= finished)
            return true;
        sleep_ms(10);
    }
    fprintf(stderr, "  still %lld queued, %lld running after %.0f s\n", c.queued, c.running, DEADLINE_S);
    return false;
}

/* A string field of the experiment, copied to out ("" when null). */
static const char *field_of(fixture_t *f, const char *id, const char *field, char *out, size_t n) {
    sl_error_t err = {0};
    json_t *e = store_experiment_json(f->s, id, &err);
    const char *v = e ? json_string_value(json_object_get(e, field)) : NULL;
    snprintf(out, n, "%s", v ? v : "");
    json_decref(e);
    return out;
}

#define SMALL "\"size\":\"2^16\",\"reps\":2,\"warmup\":0"

/* ---- tests ---- */

TEST(one_worker_runs_everything_in_fifo_order) {
    FIXTURE(f, 1);
    enum { N = 8 };
    static const char *const specs[N] = {
        "{\"variant\":\"async_v1\"," SMALL "}",
        "{\"variant\":\"async_v2\"," SMALL "}",
        "{\"variant\":\"sequential\"," SMALL "}",
        "{\"variant\":\"round_robin\",\"streams\":2,\"chunks\":8," SMALL "}",
        "{\"variant\":\"engine_streams\"," SMALL "}",
        "{\"variant\":\"async_v1\",\"streams\":1," SMALL "}",
        "{\"variant\":\"async_v2\",\"streams\":16," SMALL "}",
        "{\"variant\":\"async_v1\",\"kernel\":\"fill\"," SMALL "}",
    };
    char ids[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "e-%02d", i);
        CHECK_INT(SL_OK, add(&f, ids[i], specs[i]));
    }
    queue_t *q = NULL;
    sl_error_t err = {0};
    CHECK_INT(SL_OK, queue_start(&f.app, 1, &q, &err));
    CHECK(q != NULL);
    queue_notify(q);
    CHECK(wait_all_ended(&f, N));
    queue_stop(q);
    store_counts_t c;
    CHECK(counts(&f, &c));
    CHECK_INT(N, c.done);
    CHECK_INT(0, c.failed);
    /* FIFO: one worker takes them oldest first, one after another */
    char prev_start[40] = "", prev_end[40] = "";
    for (int i = 0; i < N; i++) {
        char status[16], start[40], end[40];
        CHECK_STR("done", field_of(&f, ids[i], "status", status, sizeof status));
        field_of(&f, ids[i], "started_at", start, sizeof start);
        field_of(&f, ids[i], "finished_at", end, sizeof end);
        CHECK(start[0] && end[0]);
        CHECK(strcmp(start, end) <= 0);
        if (i > 0 && (strcmp(prev_start, start) > 0 || strcmp(prev_end, start) > 0)) {
            fprintf(stderr, "  FAIL %s: %s started at %s, before %s (started %s, finished %s)\n", check_current_test,
                    ids[i], start, ids[i - 1], prev_start, prev_end);
            check_failures_in_test++;
        }
        snprintf(prev_start, sizeof prev_start, "%s", start);
        snprintf(prev_end, sizeof prev_end, "%s", end);
    }
    /* each run stored its result and timeline */
    json_t *tl = store_timeline_json(f.s, ids[0], -1, &err);
    CHECK(tl != NULL);
    CHECK(json_array_size(json_object_get(tl, "ops")) > 0);
    json_decref(tl);
    fixture_close(&f);
}

TEST(work_queued_after_start_is_picked_up) {
    FIXTURE(f, 1);
    queue_t *q = NULL;
    sl_error_t err = {0};
    CHECK_INT(SL_OK, queue_start(&f.app, 1, &q, &err));
    if (!q) {
        fixture_close(&f);
        return;
    }
    for (int round = 0; round < 3; round++) {
        char id[32];
        snprintf(id, sizeof id, "e-late-%d", round);
        CHECK_INT(SL_OK, add(&f, id, "{\"variant\":\"async_v1\"," SMALL "}"));
        queue_notify(q);
        CHECK(wait_all_ended(&f, round + 1));
        char status[16];
        CHECK_STR("done", field_of(&f, id, "status", status, sizeof status));
    }
    queue_stop(q);
    fixture_close(&f);
}

TEST(zero_workers_run_nothing) {
    FIXTURE(f, 1);
    CHECK_INT(SL_OK, add(&f, "e-a", "{\"variant\":\"async_v1\"," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-b", "{\"variant\":\"async_v2\"," SMALL "}"));
    queue_t *q = NULL;
    sl_error_t err = {0};
    CHECK_INT(SL_OK, queue_start(&f.app, 0, &q, &err));
    CHECK(q != NULL);
    queue_notify(q);
    /* the one bounded wait: nothing may happen in it */
    sleep_ms(300);
    store_counts_t c;
    CHECK(counts(&f, &c));
    CHECK_INT(2, c.queued);
    CHECK_INT(0, c.running + c.done + c.failed);
    queue_stop(q);
    CHECK(counts(&f, &c));
    CHECK_INT(2, c.queued);
    fixture_close(&f);
}

TEST(a_failed_run_is_stored_and_the_worker_goes_on) {
    FIXTURE(f, 1);
    /* multi_gpu passes the parser (devices [0, 1]) but this machine has one device */
    CHECK_INT(SL_OK, add(&f, "e-1-good", "{\"variant\":\"async_v1\"," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-2-multi", "{\"variant\":\"multi_gpu\"," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-3-good", "{\"variant\":\"async_v2\"," SMALL "}"));
    /* a stored spec the parser refuses */
    CHECK_INT(SL_OK, add_raw(&f, "e-4-badspec", "{\"variant\":\"async_v1\"}", "{\"variant\":\"no_such_variant\"}"));
    /* a driver model this machine does not run */
    CHECK_INT(SL_OK, add(&f, "e-5-wddm", "{\"variant\":\"async_v1\",\"driver_mode\":\"wddm\"," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-6-good", "{\"variant\":\"sequential\"," SMALL "}"));
    queue_t *q = NULL;
    sl_error_t err = {0};
    CHECK_INT(SL_OK, queue_start(&f.app, 1, &q, &err));
    queue_notify(q);
    CHECK(wait_all_ended(&f, 6));
    queue_stop(q);
    char status[16], error[600];
    CHECK_STR("done", field_of(&f, "e-1-good", "status", status, sizeof status));
    CHECK_STR("failed", field_of(&f, "e-2-multi", "status", status, sizeof status));
    field_of(&f, "e-2-multi", "error", error, sizeof error);
    CHECK(strstr(error, "devices") != NULL || strstr(error, "device") != NULL);
    CHECK(strstr(error, "invalid") != NULL); /* the code's name leads the message */
    CHECK_STR("done", field_of(&f, "e-3-good", "status", status, sizeof status));
    CHECK_STR("failed", field_of(&f, "e-4-badspec", "status", status, sizeof status));
    field_of(&f, "e-4-badspec", "error", error, sizeof error);
    CHECK(strstr(error, "variant") != NULL);
    CHECK_STR("failed", field_of(&f, "e-5-wddm", "status", status, sizeof status));
    field_of(&f, "e-5-wddm", "error", error, sizeof error);
    CHECK(strstr(error, "wddm") != NULL);
    CHECK_STR("done", field_of(&f, "e-6-good", "status", status, sizeof status));
    /* a failed experiment has an end time and no result */
    json_t *e = store_experiment_json(f.s, "e-2-multi", &err);
    CHECK(json_is_string(json_object_get(e, "finished_at")));
    CHECK(json_is_null(json_object_get(e, "result")));
    json_decref(e);
    store_counts_t c;
    CHECK(counts(&f, &c));
    CHECK_INT(3, c.done);
    CHECK_INT(3, c.failed);
    fixture_close(&f);
}

TEST(queue_run_one_reports_done_and_failed) {
    FIXTURE(f, 1);
    sl_error_t err = {0};
    store_t *s = app_store(&f.app, &err);
    CHECK(s != NULL);
    if (!s) {
        fixture_close(&f);
        return;
    }
    CHECK_INT(SL_OK, add(&f, "e-ok", "{\"variant\":\"async_v1\"," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-bad", "{\"variant\":\"multi_gpu\"," SMALL "}"));
    char id[64];
    json_t *spec = NULL;
    CHECK_INT(1, store_claim_next(s, f.app.machine.id, 0, id, &spec, &err));
    CHECK_STR("e-ok", id);
    CHECK_INT(SL_OK, queue_run_one(&f.app, s, id, spec, &err));
    json_decref(spec);
    spec = NULL;
    char status[16];
    CHECK_STR("done", field_of(&f, "e-ok", "status", status, sizeof status));
    CHECK_INT(1, store_claim_next(s, f.app.machine.id, 0, id, &spec, &err));
    CHECK_STR("e-bad", id);
    memset(&err, 0, sizeof err);
    int rc = queue_run_one(&f.app, s, id, spec, &err);
    json_decref(spec);
    CHECK(rc != SL_OK);
    CHECK_INT(rc, err.code);
    CHECK(err.message[0] != 0);
    CHECK_STR("failed", field_of(&f, "e-bad", "status", status, sizeof status));
    fixture_close(&f);
}

TEST(queue_stop_leaves_nothing_running) {
    FIXTURE(f, 1);
    enum { N = 20 };
    for (int i = 0; i < N; i++) {
        char id[16];
        snprintf(id, sizeof id, "e-%02d", i);
        CHECK_INT(SL_OK, add(&f, id, "{\"variant\":\"async_v1\",\"size\":\"2^18\",\"reps\":3,\"warmup\":0}"));
    }
    queue_t *q = NULL;
    sl_error_t err = {0};
    CHECK_INT(SL_OK, queue_start(&f.app, 1, &q, &err));
    queue_notify(q);
    /* stop as soon as the first has been taken */
    double until = mono_s() + DEADLINE_S;
    store_counts_t c = {0};
    while (mono_s() < until && counts(&f, &c) && c.queued == N)
        sleep_ms(1);
    queue_stop(q);
    CHECK(counts(&f, &c));
    CHECK_INT(0, c.running);
    CHECK_INT(0, c.failed);
    CHECK_INT(N, c.queued + c.done);
    CHECK(c.done >= 1);
    /* what was left is still queued and runs on the next start */
    CHECK_INT(SL_OK, queue_start(&f.app, 1, &q, &err));
    queue_notify(q);
    CHECK(wait_all_ended(&f, N));
    queue_stop(q);
    CHECK(counts(&f, &c));
    CHECK_INT(N, c.done);
    fixture_close(&f);
}

TEST(one_worker_per_device_runs_each_devices_work) {
    FIXTURE(f, 2);
    CHECK_INT(SL_OK, add(&f, "e-d0-a", "{\"variant\":\"async_v1\"," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-d1-a", "{\"variant\":\"async_v1\",\"devices\":[1]," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-multi", "{\"variant\":\"multi_gpu\"," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-d1-b", "{\"variant\":\"async_v2\",\"devices\":[1]," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-multi-10", "{\"variant\":\"multi_gpu\",\"devices\":[1,0]," SMALL "}"));
    CHECK_INT(SL_OK, add(&f, "e-d0-b", "{\"variant\":\"sequential\"," SMALL "}"));
    queue_t *q = NULL;
    sl_error_t err = {0};
    CHECK_INT(SL_OK, queue_start(&f.app, -1, &q, &err));
    queue_notify(q);
    CHECK(wait_all_ended(&f, 6));
    queue_stop(q);
    store_counts_t c;
    CHECK(counts(&f, &c));
    CHECK_INT(6, c.done);
    CHECK_INT(0, c.failed);
    char a[40], b[40];
    /* per device, still FIFO */
    field_of(&f, "e-d0-a", "started_at", a, sizeof a);
    field_of(&f, "e-d0-b", "started_at", b, sizeof b);
    CHECK(strcmp(a, b) <= 0);
    field_of(&f, "e-d1-a", "started_at", a, sizeof a);
    field_of(&f, "e-d1-b", "started_at", b, sizeof b);
    CHECK(strcmp(a, b) <= 0);
    fixture_close(&f);
}

TEST(notify_and_stop_accept_null) {
    queue_notify(NULL);
    queue_stop(NULL);
    CHECK(1);
}

static const check_test_t tests[] = {
    TEST_ENTRY(one_worker_runs_everything_in_fifo_order),
    TEST_ENTRY(work_queued_after_start_is_picked_up),
    TEST_ENTRY(zero_workers_run_nothing),
    TEST_ENTRY(a_failed_run_is_stored_and_the_worker_goes_on),
    TEST_ENTRY(queue_run_one_reports_done_and_failed),
    TEST_ENTRY(queue_stop_leaves_nothing_running),
    TEST_ENTRY(one_worker_per_device_runs_each_devices_work),
    TEST_ENTRY(notify_and_stop_accept_null),
};

CHECK_MAIN("unit-queue", tests)
