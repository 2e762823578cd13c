/* test_store.c — unit tests of db/store.c on temporary databases: migrations (a fresh
 * DB, an up-to-date DB, a DB from a newer streamlab refused, a corrupt file), the
 * experiment life cycle (insert, claim, finish with a real sim result, fail, requeue,
 * cancel, recover), timelines, list filters and paging, sweeps as one transaction,
 * machines, counts and the integrity check. */
#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../db/store.h"
#include "../../server/spec.h"
#include "check.h"

/* ---- fixture: a temporary directory with one migrated database ---- */

typedef struct fixture {
    char dir[64];
    char path[128];
    store_t *s;
    machine_info_t m;
} fixture_t;

static void sim_machine(machine_info_t *m, const char *label) {
    unsetenv("STREAMLAB_SIM_DEVICES"); /* one simulated H100 */
    machine_discover(m, true, label);
}

/* Make the directory and the path; open (and migrate) only when asked. */
static bool fixture_dir(fixture_t *f) {
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sl-test-store-XXXXXX");
    if (!mkdtemp(f->dir)) {
        perror("mkdtemp");
        return false;
    }
    snprintf(f->path, sizeof f->path, "%s/streamlab.db", f->dir);
    sim_machine(&f->m, "unit-store");
    return true;
}

static bool fixture_open(fixture_t *f) {
    if (!fixture_dir(f))
        return false;
    sl_error_t err = {0};
    if (store_open(f->path, &f->s, &err) || store_migrate(f->s, &err) || store_upsert_machine(f->s, &f->m, &err)) {
        fprintf(stderr, "  fixture: %s\n", err.message);
        return false;
    }
    return true;
}

static void fixture_close(fixture_t *f) {
    store_close(f->s);
    f->s = NULL;
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s%s", f->path, suffixes[i]);
        unlink(p);
    }
    rmdir(f->dir);
}

#define FIXTURE(f)                   \
    fixture_t f;                     \
    if (!fixture_open(&f)) {         \
        CHECK(!"fixture opened");    \
        fixture_close(&f);           \
        return;                      \
    }

/* Parse a spec; the test's specs are valid. */
static bool spec_parse_text(const char *text, spec_t *spec) {
    json_t *j = json_loads(text, 0, NULL);
    sl_error_t err = {0};
    int rc = j ? spec_from_json(j, spec, &err) : -1;
    json_decref(j);
    if (rc)
        fprintf(stderr, "  test spec %s: %s\n", text, err.message);
    return rc == SL_OK;
}

static bool insert_failure_expected; /* quiet the insert error a test asks for */

/* Insert experiment `id` of spec `text` on `machine_id` (NULL: the fixture's machine). */
static int add_on(fixture_t *f, const char *id, const char *text, const char *machine_id) {
    spec_t spec;
    if (!spec_parse_text(text, &spec))
        return -1;
    json_t *full = spec_to_json(&spec);
    store_new_experiment_t e = {.id = id, .machine_id = machine_id ? machine_id : f->m.id, .spec = &spec,
                                .spec_json = full};
    sl_error_t err = {0};
    int rc = full ? store_insert_experiment(f->s, &e, &err) : SL_E_NOMEM;
    if (rc && !insert_failure_expected)
        fprintf(stderr, "  insert %s: %s\n", id, err.message);
    json_decref(full);
    return rc;
}

static int add(fixture_t *f, const char *id, const char *text) {
    return add_on(f, id, text, NULL);
}

/* The experiment's status ("" when it cannot be read). */
static const char *status_of(fixture_t *f, const char *id, char out[16]) {
    sl_error_t err = {0};
    json_t *e = store_experiment_json(f->s, id, &err);
    snprintf(out, 16, "%s", e && json_string_value(json_object_get(e, "status")) ?
                                json_string_value(json_object_get(e, "status")) : "");
    json_decref(e);
    return out;
}

#define CHECK_STATUS(f, id, want)                   \
    do {                                            \
        char st_[16];                               \
        CHECK_STR(want, status_of(&(f), id, st_));  \
    } while (0)

/* Claim on the fixture's machine, device 0; returns the claimed id ("" for none). */
static const char *claim(fixture_t *f, int device, char id[64]) {
    json_t *spec = NULL;
    sl_error_t err = {0};
    id[0] = 0;
    int rc = store_claim_next(f->s, f->m.id, device, id, &spec, &err);
    if (rc < 0)
        fprintf(stderr, "  claim: %s\n", err.message);
    if (rc != 1)
        id[0] = 0;
    json_decref(spec);
    return id;
}

/* ---- migrations ---- */

TEST(fresh_db_migrates_to_the_latest_version) {
    fixture_t f;
    CHECK(fixture_dir(&f));
    sl_error_t err = {0};
    CHECK_INT(SL_OK, store_open(f.path, &f.s, &err));
    if (!f.s) {
        fixture_close(&f);
        return;
    }
    CHECK_INT(0, store_schema_version(f.s));
    CHECK(store_latest_version() >= 1);
    CHECK_INT(SL_OK, store_migrate(f.s, &err));
    CHECK_INT(store_latest_version(), store_schema_version(f.s));
    CHECK_INT(SL_OK, store_integrity_check(f.s, &err));
    /* the schema is there: every table the store reads answers */
    store_counts_t c;
    CHECK_INT(SL_OK, store_count_by_status(f.s, &c, &err));
    CHECK_INT(0, c.queued + c.running + c.done + c.failed + c.cancelled);
    CHECK_INT(SL_OK, store_upsert_machine(f.s, &f.m, &err));
    CHECK_INT(SL_OK, add(&f, "e-fresh", "{\"variant\":\"async_v1\"}"));
    fixture_close(&f);
}

TEST(migrating_an_up_to_date_db_is_a_no_op) {
    FIXTURE(f);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, add(&f, "e-keep", "{\"variant\":\"async_v1\",\"label\":\"kept\"}"));
    CHECK_INT(SL_OK, store_migrate(f.s, &err));
    CHECK_INT(store_latest_version(), store_schema_version(f.s));
    /* again after a reopen, as a restart does */
    store_close(f.s);
    f.s = NULL;
    CHECK_INT(SL_OK, store_open(f.path, &f.s, &err));
    if (!f.s) {
        fixture_close(&f);
        return;
    }
    CHECK_INT(store_latest_version(), store_schema_version(f.s));
    CHECK_INT(SL_OK, store_migrate(f.s, &err));
    CHECK_INT(store_latest_version(), store_schema_version(f.s));
    json_t *e = store_experiment_json(f.s, "e-keep", &err);
    CHECK(e != NULL);
    CHECK_STR("kept", json_string_value(json_object_get(json_object_get(e, "spec"), "label")));
    json_decref(e);
    CHECK_INT(SL_OK, store_integrity_check(f.s, &err));
    fixture_close(&f);
}

static bool set_user_version(const char *path, int version) {
    sqlite3 *db = NULL;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d", version);
    bool ok = sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_close(db);
    return ok;
}

TEST(db_from_a_newer_version_is_refused) {
    fixture_t f;
    CHECK(fixture_dir(&f));
    CHECK(set_user_version(f.path, 999));
    sl_error_t err = {0};
    CHECK_INT(SL_OK, store_open(f.path, &f.s, &err));
    if (!f.s) {
        fixture_close(&f);
        return;
    }
    CHECK_INT(999, store_schema_version(f.s));
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_DB, store_migrate(f.s, &err));
    CHECK_INT(SL_E_DB, err.code);
    CHECK(strstr(err.message, "newer") != NULL);
    CHECK(strstr(err.message, "999") != NULL);
    CHECK_INT(999, store_schema_version(f.s)); /* untouched */
    /* and nothing was created in it */
    store_counts_t c;
    CHECK(store_count_by_status(f.s, &c, &err) != SL_OK);
    fixture_close(&f);
}

TEST(db_one_version_ahead_is_refused) {
    FIXTURE(f);
    store_close(f.s);
    f.s = NULL;
    CHECK(set_user_version(f.path, store_latest_version() + 1));
    sl_error_t err = {0};
    CHECK_INT(SL_OK, store_open(f.path, &f.s, &err));
    if (f.s) {
        CHECK_INT(SL_E_DB, store_migrate(f.s, &err));
        CHECK(strstr(err.message, "newer") != NULL);
    }
    fixture_close(&f);
}

TEST(corrupt_file_is_refused_not_crashed) {
    fixture_t f;
    CHECK(fixture_dir(&f));
    FILE *fp = fopen(f.path, "wb");
    CHECK(fp != NULL);
    if (fp) {
        for (int i = 0; i < 512; i++)
            fputs("this is not a database ", fp);
        fclose(fp);
    }
    sl_error_t err = {0};
    int rc = store_open(f.path, &f.s, &err);
    if (rc == SL_OK)
        rc = store_migrate(f.s, &err);
    CHECK_INT(SL_E_DB, rc);
    CHECK_INT(SL_E_DB, err.code);
    CHECK(err.message[0] != 0);
    fixture_close(&f);
}

TEST(corrupt_pages_are_reported_by_the_integrity_check) {
    FIXTURE(f);
    for (int i = 0; i < 40; i++) {
        char id[16];
        snprintf(id, sizeof id, "e-%02d", i);
        CHECK_INT(SL_OK, add(&f, id, "{\"variant\":\"async_v1\",\"label\":\"some text to fill the pages\"}"));
    }
    store_close(f.s); /* the last connection: the WAL is checkpointed into the file */
    f.s = NULL;
    FILE *fp = fopen(f.path, "r+b");
    CHECK(fp != NULL);
    long size = 0;
    if (fp) {
        fseek(fp, 0, SEEK_END);
        size = ftell(fp);
        CHECK(size > 3 * 4096);
        /* every page but the first (the schema) becomes garbage */
        fseek(fp, 4096, SEEK_SET);
        for (long i = 4096; i < size; i++)
            fputc((int)((i * 7919) & 0xff), fp);
        fclose(fp);
    }
    sl_error_t err = {0};
    int rc = store_open(f.path, &f.s, &err);
    if (rc == SL_OK)
        rc = store_migrate(f.s, &err);
    if (rc == SL_OK)
        rc = store_integrity_check(f.s, &err);
    CHECK_INT(SL_E_DB, rc);
    CHECK_INT(SL_E_DB, err.code);
    CHECK(err.message[0] != 0);
    fixture_close(&f);
}

TEST(unopenable_path_is_refused) {
    store_t *s = (store_t *)1;
    sl_error_t err = {0};
    CHECK_INT(SL_E_DB, store_open("/nonexistent-dir-streamlab/sub/x.db", &s, &err));
    CHECK(s == NULL);
    CHECK_INT(SL_E_DB, err.code);
    CHECK(strstr(err.message, "/nonexistent-dir-streamlab/sub/x.db") != NULL);
    store_close(NULL); /* a no-op */
}

TEST(integrity_check_is_ok) {
    FIXTURE(f);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, add(&f, "e-1", "{\"variant\":\"async_v1\"}"));
    CHECK_INT(SL_OK, store_integrity_check(f.s, &err));
    fixture_close(&f);
}

static int table_exists(const char *path, const char *name) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int found = -1;
    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", -1, &st, NULL) ==
            SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            found = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return found;
}

TEST(a_failing_migration_is_rolled_back_whole) {
    fixture_t f;
    CHECK(fixture_dir(&f));
    /* a table 001 creates after machines, sweeps and experiments is already there */
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(f.path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "CREATE TABLE results (x INTEGER)", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, store_open(f.path, &f.s, &err));
    if (!f.s) {
        fixture_close(&f);
        return;
    }
    CHECK_INT(SL_E_DB, store_migrate(f.s, &err));
    CHECK_INT(SL_E_DB, err.code);
    CHECK(strstr(err.message, "001") != NULL);
    CHECK(strstr(err.message, "results") != NULL);
    CHECK_INT(0, store_schema_version(f.s));
    /* nothing of 001 is left behind */
    CHECK_INT(0, table_exists(f.path, "machines"));
    CHECK_INT(0, table_exists(f.path, "sweeps"));
    CHECK_INT(0, table_exists(f.path, "experiments"));
    CHECK_INT(1, table_exists(f.path, "results"));
    /* and once the obstacle is gone the same connection migrates */
    sqlite3_open(f.path, &db);
    CHECK(sqlite3_exec(db, "DROP TABLE results", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    CHECK_INT(SL_OK, store_migrate(f.s, &err));
    CHECK_INT(store_latest_version(), store_schema_version(f.s));
    fixture_close(&f);
}

TEST(in_memory_store_works) {
    store_t *s = NULL;
    sl_error_t err = {0};
    CHECK_INT(SL_OK, store_open(":memory:", &s, &err));
    if (!s)
        return;
    CHECK_INT(SL_OK, store_migrate(s, &err));
    CHECK_INT(store_latest_version(), store_schema_version(s));
    machine_info_t m;
    sim_machine(&m, "mem");
    CHECK_INT(SL_OK, store_upsert_machine(s, &m, &err));
    spec_t spec;
    CHECK(spec_parse_text("{\"variant\":\"async_v1\"}", &spec));
    json_t *full = spec_to_json(&spec);
    store_new_experiment_t e = {.id = "e-mem", .machine_id = m.id, .spec = &spec, .spec_json = full};
    CHECK_INT(SL_OK, store_insert_experiment(s, &e, &err));
    CHECK_INT(SL_OK, store_start_experiment(s, "e-mem", &err));
    json_decref(full);
    store_counts_t c;
    CHECK_INT(SL_OK, store_count_by_status(s, &c, &err));
    CHECK_INT(1, c.running);
    store_close(s);
}

/* Another process holds the write lock: writes wait the busy timeout, then fail with
 * SL_E_DB and change nothing; once the lock goes, the same connection works. */
TEST(a_locked_database_fails_cleanly) {
    FIXTURE(f);
    CHECK_INT(SL_OK, add(&f, "e-locked", "{\"variant\":\"async_v1\",\"size\":1024,\"reps\":1,\"warmup\":0}"));
    sqlite3 *other = NULL;
    CHECK(sqlite3_open(f.path, &other) == SQLITE_OK);
    CHECK(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK);
    sl_error_t err = {0};
    char id[64];
    json_t *spec = NULL;
    CHECK_INT(-1, store_claim_next(f.s, f.m.id, 0, id, &spec, &err));
    CHECK(spec == NULL);
    CHECK_INT(SL_E_DB, err.code);
    /* reads still work beside the writer (WAL) */
    CHECK_STATUS(f, "e-locked", "queued");
    CHECK(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(other);
    CHECK_STR("e-locked", claim(&f, 0, id));
    fixture_close(&f);
}

/* ---- machines ---- */

TEST(machines_upsert_read_and_list) {
    FIXTURE(f);
    sl_error_t err = {0};
    json_t *m = store_machine_json(f.s, f.m.id, &err);
    CHECK(m != NULL);
    CHECK_STR(f.m.id, json_string_value(json_object_get(m, "id")));
    CHECK(json_is_string(json_object_get(m, "first_seen")));
    char first_seen[64];
    const char *fs = json_string_value(json_object_get(m, "first_seen"));
    snprintf(first_seen, sizeof first_seen, "%s", fs ? fs : "");
    json_decref(m);
    snprintf(f.m.label, sizeof f.m.label, "relabelled");
    CHECK_INT(SL_OK, store_upsert_machine(f.s, &f.m, &err));
    json_t *list = store_list_machines(f.s, &err);
    CHECK(json_is_array(list));
    CHECK_INT(1, json_array_size(list));
    json_t *one = json_array_get(list, 0);
    CHECK_STR("relabelled", json_string_value(json_object_get(one, "label")));
    CHECK_STR(first_seen, json_string_value(json_object_get(one, "first_seen")));
    json_decref(list);
    memset(&err, 0, sizeof err);
    CHECK(store_machine_json(f.s, "no-such-machine", &err) == NULL);
    CHECK_INT(SL_E_NOTFOUND, err.code);
    fixture_close(&f);
}

/* ---- inserting ---- */

TEST(insert_refuses_a_duplicate_id_and_an_unknown_machine) {
    FIXTURE(f);
    CHECK_INT(SL_OK, add(&f, "e-dup", "{\"variant\":\"async_v1\"}"));
    insert_failure_expected = true;
    CHECK_INT(SL_E_DB, add(&f, "e-dup", "{\"variant\":\"async_v2\"}"));
    CHECK_INT(SL_E_DB, add_on(&f, "e-nomachine", "{\"variant\":\"async_v1\"}", "no-such-machine"));
    insert_failure_expected = false;
    store_counts_t c;
    sl_error_t err = {0};
    CHECK_INT(SL_OK, store_count_by_status(f.s, &c, &err));
    CHECK_INT(1, c.queued);
    fixture_close(&f);
}

TEST(inserted_experiment_reads_back_queued_with_its_full_spec) {
    FIXTURE(f);
    CHECK_INT(SL_OK, add(&f, "e-q", "{\"variant\":\"async_v2\",\"size\":\"2^20\",\"streams\":4,\"label\":\"q\"}"));
    sl_error_t err = {0};
    json_t *e = store_experiment_json(f.s, "e-q", &err);
    CHECK(e != NULL);
    CHECK_STR("e-q", json_string_value(json_object_get(e, "id")));
    CHECK_STR("queued", json_string_value(json_object_get(e, "status")));
    CHECK_STR(f.m.id, json_string_value(json_object_get(e, "machine_id")));
    CHECK(json_is_string(json_object_get(e, "created_at")));
    CHECK(json_is_null(json_object_get(e, "started_at")));
    CHECK(json_is_null(json_object_get(e, "finished_at")));
    CHECK(json_is_null(json_object_get(e, "error")));
    CHECK(json_is_null(json_object_get(e, "result")));
    CHECK(json_is_null(json_object_get(e, "sweep_id")));
    json_t *spec = json_object_get(e, "spec");
    spec_t parsed;
    CHECK(spec_parse_text("{\"variant\":\"async_v2\",\"size\":\"2^20\",\"streams\":4,\"label\":\"q\"}", &parsed));
    json_t *full = spec_to_json(&parsed);
    CHECK(json_equal(full, spec)); /* the full spec after defaults, as spec_to_json writes it */
    json_decref(full);
    CHECK_INT(1 << 20, json_integer_value(json_object_get(spec, "size")));
    CHECK_INT(4, json_integer_value(json_object_get(spec, "streams")));
    json_decref(e);
    memset(&err, 0, sizeof err);
    CHECK(store_experiment_json(f.s, "e-none", &err) == NULL);
    CHECK_INT(SL_E_NOTFOUND, err.code);
    fixture_close(&f);
}

/* ---- the life cycle with a real sim result ---- */

TEST(insert_claim_finish_round_trip) {
    FIXTURE(f);
    const char *text = "{\"variant\":\"async_v1\",\"size\":\"2^20\",\"streams\":4,\"reps\":5,\"warmup\":0}";
    spec_t spec;
    CHECK(spec_parse_text(text, &spec));
    CHECK_INT(SL_OK, add(&f, "e-run", text));
    sl_error_t err = {0};

    char id[64];
    json_t *claimed_spec = NULL;
    CHECK_INT(1, store_claim_next(f.s, f.m.id, 0, id, &claimed_spec, &err));
    CHECK_STR("e-run", id);
    json_t *full = spec_to_json(&spec);
    CHECK(json_equal(full, claimed_spec));
    json_decref(full);
    json_decref(claimed_spec);
    CHECK_STATUS(f, "e-run", "running");

    result_t r;
    memset(&r, 0, sizeof r);
    int rc = backend_run(&spec, &f.m, &r, &err);
    CHECK_INT(SL_OK, rc);
    if (rc) {
        fprintf(stderr, "  backend_run: %s\n", err.message);
        fixture_close(&f);
        return;
    }
    CHECK_INT(5, r.reps);
    CHECK(r.median_rep >= 0 && r.median_rep < r.reps);
    CHECK(r.timelines != NULL);
    CHECK_INT(SL_OK, store_finish_experiment(f.s, "e-run", &r, &err));

    json_t *e = store_experiment_json(f.s, "e-run", &err);
    CHECK(e != NULL);
    CHECK_STR("done", json_string_value(json_object_get(e, "status")));
    CHECK(json_is_string(json_object_get(e, "started_at")));
    CHECK(json_is_string(json_object_get(e, "finished_at")));
    CHECK(json_is_null(json_object_get(e, "error")));
    json_t *res = json_object_get(e, "result");
    CHECK(json_is_object(res));
    CHECK_STR("sim", json_string_value(json_object_get(res, "backend")));
    CHECK_INT(r.reps, json_integer_value(json_object_get(res, "reps")));
    CHECK_INT(r.median_rep, json_integer_value(json_object_get(res, "median_rep")));
    json_t *total = json_object_get(res, "total_ms");
    CHECK_NEAR(r.total_ms.median, json_real_value(json_object_get(total, "median")), 1e-9);
    CHECK_NEAR(r.total_ms.min, json_real_value(json_object_get(total, "min")), 1e-9);
    CHECK_NEAR(r.total_ms.max, json_real_value(json_object_get(total, "max")), 1e-9);
    json_t *reps_ms = json_object_get(res, "reps_ms");
    CHECK_INT(r.reps, json_array_size(reps_ms));
    for (int k = 0; k < r.reps && k < (int)json_array_size(reps_ms); k++)
        CHECK_NEAR(r.rep_ms[k], json_real_value(json_array_get(reps_ms, (size_t)k)), 1e-9);
    CHECK_NEAR(r.h2d_ms, json_real_value(json_object_get(res, "h2d_ms")), 1e-9);
    CHECK_NEAR(r.kernel_ms, json_real_value(json_object_get(res, "kernel_ms")), 1e-9);
    CHECK_NEAR(r.d2h_ms, json_real_value(json_object_get(res, "d2h_ms")), 1e-9);
    CHECK_NEAR(r.overlap, json_real_value(json_object_get(res, "overlap")), 1e-9);
    CHECK(json_real_value(json_object_get(total, "median")) > 0);
    CHECK_INT(r.verified, json_is_true(json_object_get(res, "verified")));
    CHECK_STR(r.verification, json_string_value(json_object_get(res, "verification")));
    CHECK(json_is_object(json_object_get(res, "extra")));
    json_decref(e);

    /* the median rep's timeline */
    json_t *tl = store_timeline_json(f.s, "e-run", -1, &err);
    CHECK(tl != NULL);
    CHECK_STR("e-run", json_string_value(json_object_get(tl, "experiment")));
    CHECK_INT(r.median_rep, json_integer_value(json_object_get(tl, "rep")));
    CHECK_INT(r.median_rep, json_integer_value(json_object_get(tl, "median_rep")));
    CHECK_INT(r.reps, json_integer_value(json_object_get(tl, "reps")));
    json_t *ops = json_object_get(tl, "ops");
    CHECK_INT(r.timelines[r.median_rep].count, json_array_size(ops));
    /* async_v1, 4 chunks: an H2D, a kernel and a D2H each */
    CHECK(json_array_size(ops) >= 12);
    const op_event_t *first = &r.timelines[r.median_rep].ops[0];
    json_t *op0 = json_array_get(ops, 0);
    CHECK_STR(op_names[first->op], json_string_value(json_object_get(op0, "op")));
    CHECK_INT(first->stream, json_integer_value(json_object_get(op0, "stream")));
    CHECK_INT(first->chunk, json_integer_value(json_object_get(op0, "chunk")));
    CHECK_INT(first->device, json_integer_value(json_object_get(op0, "device")));
    CHECK_INT(first->bytes, json_integer_value(json_object_get(op0, "bytes")));
    CHECK_NEAR(first->start_us, json_real_value(json_object_get(op0, "start_us")), 1e-9);
    CHECK_NEAR(first->end_us, json_real_value(json_object_get(op0, "end_us")), 1e-9);
    json_decref(tl);

    /* every rep's timeline, and reps out of range */
    for (int k = 0; k < r.reps; k++) {
        tl = store_timeline_json(f.s, "e-run", k, &err);
        CHECK(tl != NULL);
        CHECK_INT(k, json_integer_value(json_object_get(tl, "rep")));
        CHECK_INT(r.timelines[k].count, json_array_size(json_object_get(tl, "ops")));
        json_decref(tl);
    }
    memset(&err, 0, sizeof err);
    CHECK(store_timeline_json(f.s, "e-run", r.reps, &err) == NULL);
    CHECK_INT(SL_E_INVALID, err.code);
    CHECK_STR("rep", err.field);
    memset(&err, 0, sizeof err);
    CHECK(store_timeline_json(f.s, "e-run", 1000000, &err) == NULL);
    CHECK_INT(SL_E_INVALID, err.code);
    memset(&err, 0, sizeof err);
    CHECK(store_timeline_json(f.s, "e-nope", -1, &err) == NULL);
    CHECK_INT(SL_E_NOTFOUND, err.code);

    /* finishing twice does not store a second result */
    memset(&err, 0, sizeof err);
    CHECK(store_finish_experiment(f.s, "e-run", &r, &err) != SL_OK);
    CHECK_STATUS(f, "e-run", "done");
    /* a done experiment cannot be cancelled, failed or requeued */
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_CONFLICT, store_cancel_experiment(f.s, "e-run", &err));
    CHECK_INT(SL_E_CONFLICT, store_fail_experiment(f.s, "e-run", "late", &err));
    CHECK_INT(SL_E_CONFLICT, store_requeue_experiment(f.s, "e-run", &err));
    CHECK_STATUS(f, "e-run", "done");
    CHECK_INT(SL_OK, store_integrity_check(f.s, &err));
    result_free(&r);
    fixture_close(&f);
}

TEST(finishing_an_experiment_that_is_not_running_leaves_nothing) {
    FIXTURE(f);
    const char *text = "{\"variant\":\"async_v2\",\"size\":\"2^16\",\"reps\":2,\"warmup\":0}";
    spec_t spec;
    CHECK(spec_parse_text(text, &spec));
    CHECK_INT(SL_OK, add(&f, "e-notrunning", text));
    result_t r;
    memset(&r, 0, sizeof r);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, backend_run(&spec, &f.m, &r, &err));
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_CONFLICT, store_finish_experiment(f.s, "e-notrunning", &r, &err));
    CHECK_INT(SL_E_CONFLICT, err.code);
    CHECK_STATUS(f, "e-notrunning", "queued");
    json_t *e = store_experiment_json(f.s, "e-notrunning", &err);
    CHECK(json_is_null(json_object_get(e, "result"))); /* the result rows were rolled back */
    json_decref(e);
    memset(&err, 0, sizeof err);
    CHECK(store_timeline_json(f.s, "e-notrunning", -1, &err) == NULL);
    CHECK_INT(SL_E_CONFLICT, err.code);
    /* an unknown id stores nothing either */
    memset(&err, 0, sizeof err);
    CHECK(store_finish_experiment(f.s, "e-unknown", &r, &err) != SL_OK);
    result_free(&r);
    /* the connection is usable after the rollbacks */
    CHECK_INT(SL_OK, add(&f, "e-after", text));
    CHECK_INT(SL_OK, store_integrity_check(f.s, &err));
    fixture_close(&f);
}

/* Run a small sim experiment on the fixture's machine and store its result: id. */
static bool run_and_store(fixture_t *f, const char *id, const char *text) {
    spec_t spec;
    sl_error_t err = {0};
    char got[64];
    result_t r;
    memset(&r, 0, sizeof r);
    bool ok = spec_parse_text(text, &spec) && add(f, id, text) == SL_OK && strcmp(claim(f, 0, got), id) == 0 &&
              backend_run(&spec, &f->m, &r, &err) == SL_OK && store_finish_experiment(f->s, id, &r, &err) == SL_OK;
    if (!ok)
        fprintf(stderr, "  run_and_store %s: %s\n", id, err.message);
    result_free(&r);
    return ok;
}

/* A store written before migration 003 (op_events without the calls' columns) migrates and
 * keeps every timeline as it was, with no calls; what it stores after that has them. */
TEST(a_store_from_before_the_calls_keeps_its_timelines) {
    FIXTURE(f);
    const char *text = "{\"variant\":\"async_v1\",\"size\":\"2^20\",\"streams\":4,\"reps\":3,\"warmup\":0}";
    CHECK(run_and_store(&f, "e-old", text));
    sl_error_t err = {0};
    json_t *was = store_timeline_json(f.s, "e-old", -1, &err);
    CHECK(was != NULL);
    CHECK_INT(json_array_size(json_object_get(was, "ops")), json_array_size(json_object_get(was, "calls")));
    store_close(f.s);
    f.s = NULL;
    /* back to version 2's table, as an older streamlab left it */
    sqlite3 *db = NULL;
    CHECK_INT(SQLITE_OK, sqlite3_open(f.path, &db));
    CHECK_INT(SQLITE_OK, sqlite3_exec(db, "ALTER TABLE op_events DROP COLUMN call_start_us;"
                                          "ALTER TABLE op_events DROP COLUMN call_end_us; PRAGMA user_version=2",
                                      NULL, NULL, NULL));
    sqlite3_close(db);
    CHECK_INT(SL_OK, store_open(f.path, &f.s, &err));
    if (!f.s) {
        json_decref(was);
        fixture_close(&f);
        return;
    }
    CHECK_INT(2, store_schema_version(f.s));
    CHECK_INT(SL_OK, store_migrate(f.s, &err));
    CHECK_INT(store_latest_version(), store_schema_version(f.s));
    json_t *now = store_timeline_json(f.s, "e-old", -1, &err);
    CHECK(now != NULL);
    CHECK(json_equal(json_object_get(was, "ops"), json_object_get(now, "ops")));
    CHECK(json_is_array(json_object_get(now, "calls")));
    CHECK_INT(0, json_array_size(json_object_get(now, "calls")));
    CHECK(json_equal(json_object_get(was, "span_ms"), json_object_get(now, "span_ms")));
    /* a run stored after the migration has its calls */
    CHECK(run_and_store(&f, "e-new", text));
    json_t *fresh = store_timeline_json(f.s, "e-new", -1, &err);
    CHECK(fresh != NULL);
    CHECK(json_array_size(json_object_get(fresh, "calls")) > 0);
    CHECK_INT(json_array_size(json_object_get(fresh, "ops")), json_array_size(json_object_get(fresh, "calls")));
    json_decref(was);
    json_decref(now);
    json_decref(fresh);
    CHECK_INT(SL_OK, store_integrity_check(f.s, &err));
    fixture_close(&f);
}

TEST(timeline_of_an_unfinished_experiment_is_a_conflict) {
    FIXTURE(f);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, add(&f, "e-queued", "{\"variant\":\"async_v1\"}"));
    CHECK(store_timeline_json(f.s, "e-queued", -1, &err) == NULL);
    CHECK_INT(SL_E_CONFLICT, err.code);
    memset(&err, 0, sizeof err);
    CHECK(store_timeline_json(f.s, "e-queued", 0, &err) == NULL);
    CHECK_INT(SL_E_CONFLICT, err.code);
    char id[64];
    CHECK_STR("e-queued", claim(&f, 0, id));
    memset(&err, 0, sizeof err);
    CHECK(store_timeline_json(f.s, "e-queued", -1, &err) == NULL);
    CHECK_INT(SL_E_CONFLICT, err.code);
    CHECK_INT(SL_OK, store_fail_experiment(f.s, "e-queued", "boom", &err));
    memset(&err, 0, sizeof err);
    CHECK(store_timeline_json(f.s, "e-queued", -1, &err) == NULL);
    CHECK_INT(SL_E_CONFLICT, err.code);
    fixture_close(&f);
}

TEST(cancel_queued_then_again_then_unknown) {
    FIXTURE(f);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, add(&f, "e-c", "{\"variant\":\"async_v1\"}"));
    CHECK_INT(SL_OK, store_cancel_experiment(f.s, "e-c", &err));
    json_t *e = store_experiment_json(f.s, "e-c", &err);
    CHECK_STR("cancelled", json_string_value(json_object_get(e, "status")));
    CHECK(json_is_string(json_object_get(e, "finished_at")));
    CHECK(json_is_null(json_object_get(e, "started_at")));
    json_decref(e);
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_CONFLICT, store_cancel_experiment(f.s, "e-c", &err));
    CHECK_INT(SL_E_CONFLICT, err.code);
    CHECK(strstr(err.message, "cancelled") != NULL);
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_NOTFOUND, store_cancel_experiment(f.s, "e-unknown", &err));
    CHECK_INT(SL_E_NOTFOUND, err.code);
    /* a cancelled experiment is never claimed */
    char id[64];
    CHECK_STR("", claim(&f, 0, id));
    /* a running one cannot be cancelled */
    CHECK_INT(SL_OK, add(&f, "e-r", "{\"variant\":\"async_v1\"}"));
    CHECK_STR("e-r", claim(&f, 0, id));
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_CONFLICT, store_cancel_experiment(f.s, "e-r", &err));
    CHECK(strstr(err.message, "running") != NULL);
    CHECK_STATUS(f, "e-r", "running");
    fixture_close(&f);
}

TEST(start_fail_and_requeue_move_only_from_the_right_status) {
    FIXTURE(f);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, add(&f, "e-s", "{\"variant\":\"async_v1\"}"));
    CHECK_INT(SL_E_CONFLICT, store_fail_experiment(f.s, "e-s", "not yet", &err));
    CHECK_INT(SL_E_CONFLICT, store_requeue_experiment(f.s, "e-s", &err));
    CHECK_INT(SL_OK, store_start_experiment(f.s, "e-s", &err));
    CHECK_STATUS(f, "e-s", "running");
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_CONFLICT, store_start_experiment(f.s, "e-s", &err));
    CHECK_INT(SL_E_CONFLICT, err.code);
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_CONFLICT, store_start_experiment(f.s, "e-unknown", &err));
    /* requeue gives it back: queued, no start time, claimable again */
    CHECK_INT(SL_OK, store_requeue_experiment(f.s, "e-s", &err));
    json_t *e = store_experiment_json(f.s, "e-s", &err);
    CHECK_STR("queued", json_string_value(json_object_get(e, "status")));
    CHECK(json_is_null(json_object_get(e, "started_at")));
    json_decref(e);
    char id[64];
    CHECK_STR("e-s", claim(&f, 0, id));
    CHECK_INT(SL_OK, store_fail_experiment(f.s, "e-s", "device_error: it broke", &err));
    e = store_experiment_json(f.s, "e-s", &err);
    CHECK_STR("failed", json_string_value(json_object_get(e, "status")));
    CHECK_STR("device_error: it broke", json_string_value(json_object_get(e, "error")));
    CHECK(json_is_string(json_object_get(e, "finished_at")));
    CHECK(json_is_null(json_object_get(e, "result")));
    json_decref(e);
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_CONFLICT, store_fail_experiment(f.s, "e-s", "twice", &err));
    CHECK_INT(SL_E_CONFLICT, store_fail_experiment(f.s, "e-unknown", "x", &err));
    fixture_close(&f);
}

TEST(claim_is_fifo_and_only_for_the_given_machine_and_device) {
    FIXTURE(f);
    machine_info_t other = f.m;
    snprintf(other.id, sizeof other.id, "other-machine");
    sl_error_t err = {0};
    CHECK_INT(SL_OK, store_upsert_machine(f.s, &other, &err));
    CHECK_INT(SL_OK, add(&f, "e-a", "{\"variant\":\"async_v1\"}"));
    CHECK_INT(SL_OK, add(&f, "e-b-dev1", "{\"variant\":\"async_v1\",\"devices\":[1]}"));
    CHECK_INT(SL_OK, add_on(&f, "e-c-other", "{\"variant\":\"async_v1\"}", "other-machine"));
    CHECK_INT(SL_OK, add(&f, "e-d", "{\"variant\":\"sequential\"}"));
    CHECK_INT(SL_OK, add(&f, "e-e-multi12", "{\"variant\":\"multi_gpu\",\"devices\":[1,2]}"));
    CHECK_INT(SL_OK, add(&f, "e-f", "{\"variant\":\"async_v2\"}"));
    CHECK_INT(SL_OK, store_cancel_experiment(f.s, "e-f", &err));
    CHECK_INT(SL_OK, add(&f, "e-g", "{\"variant\":\"async_v2\"}"));
    char id[64];
    CHECK_STR("e-a", claim(&f, 0, id));
    CHECK_STR("e-d", claim(&f, 0, id));
    CHECK_STR("e-g", claim(&f, 0, id)); /* e-f was cancelled */
    CHECK_STR("", claim(&f, 0, id));
    CHECK_STR("e-b-dev1", claim(&f, 1, id));
    CHECK_STR("e-e-multi12", claim(&f, 1, id)); /* the first device runs a multi-device spec */
    CHECK_STR("", claim(&f, 1, id));
    CHECK_STR("", claim(&f, 2, id));
    json_t *spec = NULL;
    CHECK_INT(1, store_claim_next(f.s, "other-machine", 0, id, &spec, &err));
    CHECK_STR("e-c-other", id);
    CHECK(json_is_object(spec));
    json_decref(spec);
    spec = (json_t *)1;
    CHECK_INT(0, store_claim_next(f.s, "other-machine", 0, id, &spec, &err));
    CHECK(spec == NULL);
    spec = NULL;
    CHECK_INT(0, store_claim_next(f.s, "no-such-machine", 0, id, &spec, &err));
    fixture_close(&f);
}

TEST(recover_interrupted_fails_running_experiments) {
    FIXTURE(f);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, add(&f, "e-1", "{\"variant\":\"async_v1\"}"));
    CHECK_INT(SL_OK, add(&f, "e-2", "{\"variant\":\"async_v1\"}"));
    CHECK_INT(SL_OK, add(&f, "e-3", "{\"variant\":\"async_v1\"}"));
    char id[64];
    CHECK_STR("e-1", claim(&f, 0, id));
    CHECK_STR("e-2", claim(&f, 0, id));
    CHECK_INT(2, store_recover_interrupted(f.s, &err));
    for (int i = 1; i <= 2; i++) {
        char eid[24];
        snprintf(eid, sizeof eid, "e-%d", i);
        json_t *e = store_experiment_json(f.s, eid, &err);
        CHECK_STR("failed", json_string_value(json_object_get(e, "status")));
        const char *msg = json_string_value(json_object_get(e, "error"));
        CHECK(msg && strstr(msg, "interrupted"));
        CHECK(json_is_string(json_object_get(e, "finished_at")));
        json_decref(e);
    }
    CHECK_STATUS(f, "e-3", "queued");
    CHECK_INT(0, store_recover_interrupted(f.s, &err));
    CHECK_STR("e-3", claim(&f, 0, id));
    fixture_close(&f);
}

TEST(count_by_status_counts_each_status) {
    FIXTURE(f);
    sl_error_t err = {0};
    char id[64];
    const char *ids[] = {"e-1", "e-2", "e-3", "e-4", "e-5", "e-6", "e-7", "e-8"};
    for (size_t i = 0; i < 8; i++)
        CHECK_INT(SL_OK, add(&f, ids[i], "{\"variant\":\"async_v1\",\"size\":1024,\"reps\":1,\"warmup\":0}"));
    /* e-1 done, e-2 failed, e-3 e-4 running, e-5 cancelled, e-6..8 queued */
    spec_t spec;
    CHECK(spec_parse_text("{\"variant\":\"async_v1\",\"size\":1024,\"reps\":1,\"warmup\":0}", &spec));
    result_t r;
    memset(&r, 0, sizeof r);
    CHECK_INT(SL_OK, backend_run(&spec, &f.m, &r, &err));
    CHECK_STR("e-1", claim(&f, 0, id));
    CHECK_INT(SL_OK, store_finish_experiment(f.s, "e-1", &r, &err));
    result_free(&r);
    CHECK_STR("e-2", claim(&f, 0, id));
    CHECK_INT(SL_OK, store_fail_experiment(f.s, "e-2", "x", &err));
    CHECK_STR("e-3", claim(&f, 0, id));
    CHECK_STR("e-4", claim(&f, 0, id));
    CHECK_INT(SL_OK, store_cancel_experiment(f.s, "e-5", &err));
    store_counts_t c;
    memset(&c, 0xff, sizeof c);
    CHECK_INT(SL_OK, store_count_by_status(f.s, &c, &err));
    CHECK_INT(3, c.queued);
    CHECK_INT(2, c.running);
    CHECK_INT(1, c.done);
    CHECK_INT(1, c.failed);
    CHECK_INT(1, c.cancelled);
    fixture_close(&f);
}

/* ---- listing ---- */

static json_t *list(fixture_t *f, const store_filter_t *flt) {
    sl_error_t err = {0};
    json_t *l = store_list_experiments(f->s, flt, &err);
    if (!l)
        fprintf(stderr, "  list: %s\n", err.message);
    return l;
}

static size_t list_count(fixture_t *f, store_filter_t flt) {
    flt.limit = 500;
    json_t *l = list(f, &flt);
    size_t n = json_array_size(json_object_get(l, "items"));
    json_decref(l);
    return n;
}

/* 12 experiments: variants, sizes, streams, labels and one sweep of 3. */
static bool populate(fixture_t *f) {
    static const char *const specs[] = {
        "{\"variant\":\"async_v1\",\"size\":1024,\"streams\":2,\"label\":\"a\"}",
        "{\"variant\":\"async_v2\",\"size\":1024,\"streams\":4,\"label\":\"b\"}",
        "{\"variant\":\"async_v1\",\"size\":2048,\"streams\":4,\"label\":\"a\"}",
        "{\"variant\":\"sequential\",\"size\":2048,\"streams\":1}",
        "{\"variant\":\"async_v1\",\"size\":4096,\"streams\":8,\"label\":\"b\"}",
        "{\"variant\":\"round_robin\",\"size\":1024,\"streams\":2,\"chunks\":8}",
        "{\"variant\":\"async_v1\",\"size\":1024,\"streams\":2,\"label\":\"a\"}",
        "{\"variant\":\"async_v2\",\"size\":4096,\"streams\":8}",
        "{\"variant\":\"async_v1\",\"size\":2048,\"streams\":2,\"label\":\"c\"}",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        char id[16];
        snprintf(id, sizeof id, "e-%02zu", i);
        if (add(f, id, specs[i]))
            return false;
    }
    /* a sweep of 3 over streams */
    spec_t sp[3];
    json_t *full[3];
    store_new_experiment_t ex[3];
    const char *ids[3] = {"e-09", "e-10", "e-11"};
    for (int i = 0; i < 3; i++) {
        char text[128];
        snprintf(text, sizeof text, "{\"variant\":\"async_v1\",\"size\":1024,\"streams\":%d}", 1 << i);
        if (!spec_parse_text(text, &sp[i]))
            return false;
        full[i] = spec_to_json(&sp[i]);
        ex[i] = (store_new_experiment_t){.id = ids[i], .machine_id = f->m.id, .sweep_id = "s-1", .sweep_index = i,
                                         .spec = &sp[i], .spec_json = full[i]};
    }
    json_t *req = json_pack("{s:{s:s}, s:{s:[i,i,i]}}", "base", "variant", "async_v1", "axes", "streams", 1, 2, 4);
    sl_error_t err = {0};
    int rc = store_insert_sweep(f->s, "s-1", req, ex, 3, &err);
    if (rc)
        fprintf(stderr, "  sweep: %s\n", err.message);
    json_decref(req);
    for (int i = 0; i < 3; i++)
        json_decref(full[i]);
    /* e-04 cancelled, e-00 running */
    char id[64];
    return rc == SL_OK && store_cancel_experiment(f->s, "e-04", &err) == SL_OK &&
           strcmp(claim(f, 0, id), "e-00") == 0;
}

TEST(list_filters) {
    FIXTURE(f);
    CHECK(populate(&f));
    store_filter_t all = {0};
    CHECK_INT(12, list_count(&f, all));
    CHECK_INT(10, list_count(&f, (store_filter_t){.status = "queued"}));
    CHECK_INT(1, list_count(&f, (store_filter_t){.status = "running"}));
    CHECK_INT(1, list_count(&f, (store_filter_t){.status = "cancelled"}));
    CHECK_INT(0, list_count(&f, (store_filter_t){.status = "done"}));
    CHECK_INT(8, list_count(&f, (store_filter_t){.variant = "async_v1"}));
    CHECK_INT(2, list_count(&f, (store_filter_t){.variant = "async_v2"}));
    CHECK_INT(0, list_count(&f, (store_filter_t){.variant = "tuned"}));
    CHECK_INT(7, list_count(&f, (store_filter_t){.size = 1024}));
    CHECK_INT(3, list_count(&f, (store_filter_t){.size = 2048}));
    CHECK_INT(0, list_count(&f, (store_filter_t){.size = 1}));
    CHECK_INT(5, list_count(&f, (store_filter_t){.streams = 2}));
    CHECK_INT(2, list_count(&f, (store_filter_t){.streams = 8}));
    CHECK_INT(3, list_count(&f, (store_filter_t){.label = "a"}));
    CHECK_INT(6, list_count(&f, (store_filter_t){.label = ""}));
    CHECK_INT(3, list_count(&f, (store_filter_t){.sweep = "s-1"}));
    CHECK_INT(0, list_count(&f, (store_filter_t){.sweep = "s-none"}));
    CHECK_INT(12, list_count(&f, (store_filter_t){.machine = f.m.id}));
    CHECK_INT(0, list_count(&f, (store_filter_t){.machine = "other"}));
    /* filters combine */
    CHECK_INT(3, list_count(&f, (store_filter_t){.variant = "async_v1", .size = 1024, .streams = 2}));
    CHECK_INT(1, list_count(&f, (store_filter_t){.variant = "async_v1", .label = "a", .status = "running"}));
    CHECK_INT(1, list_count(&f, (store_filter_t){.sweep = "s-1", .streams = 4}));
    /* the items are what the filter says */
    json_t *l = list(&f, &(store_filter_t){.label = "b", .limit = 10});
    json_t *items = json_object_get(l, "items");
    CHECK_INT(2, json_array_size(items));
    CHECK_STR("e-04", json_string_value(json_object_get(json_array_get(items, 0), "id")));
    CHECK_STR("e-01", json_string_value(json_object_get(json_array_get(items, 1), "id")));
    CHECK(json_is_null(json_object_get(l, "next")));
    json_decref(l);
    fixture_close(&f);
}

/* Page through with limit; the ids in order, or NULL on failure. */
static json_t *page_through(fixture_t *f, store_filter_t flt, int limit, int *pages) {
    json_t *ids = json_array();
    char cursor[64] = "";
    *pages = 0;
    for (int guard = 0; guard < 100; guard++) {
        flt.limit = limit;
        flt.before = cursor[0] ? cursor : NULL;
        json_t *l = list(f, &flt);
        if (!l) {
            json_decref(ids);
            return NULL;
        }
        (*pages)++;
        json_t *items = json_object_get(l, "items");
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it) json_array_append(ids, json_object_get(it, "id"));
        json_t *next = json_object_get(l, "next");
        if (json_is_null(next)) {
            json_decref(l);
            return ids;
        }
        if (!json_is_string(next) || json_array_size(items) != (size_t)limit) {
            fprintf(stderr, "  a page with next has %zu items, limit %d\n", json_array_size(items), limit);
            json_decref(l);
            json_decref(ids);
            return NULL;
        }
        /* next is the last item of the page */
        if (strcmp(json_string_value(next),
                   json_string_value(json_object_get(json_array_get(items, (size_t)limit - 1), "id"))) != 0) {
            fprintf(stderr, "  next is not the page's last item\n");
            json_decref(l);
            json_decref(ids);
            return NULL;
        }
        snprintf(cursor, sizeof cursor, "%s", json_string_value(next));
        json_decref(l);
    }
    json_decref(ids);
    return NULL;
}

TEST(list_paging_with_before) {
    FIXTURE(f);
    CHECK(populate(&f));
    static const char *const newest_first[] = {"e-11", "e-10", "e-09", "e-08", "e-07", "e-06",
                                               "e-05", "e-04", "e-03", "e-02", "e-01", "e-00"};
    int limits[] = {1, 5, 6, 11, 12, 13, 500};
    for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++) {
        int pages = 0;
        json_t *ids = page_through(&f, (store_filter_t){0}, limits[li], &pages);
        CHECK(ids != NULL);
        if (!ids)
            continue;
        CHECK_INT(12, json_array_size(ids)); /* every one once: no duplicates, none lost */
        for (size_t i = 0; i < 12 && i < json_array_size(ids); i++)
            CHECK_STR(newest_first[i], json_string_value(json_array_get(ids, i)));
        int want_pages = (12 + limits[li] - 1) / limits[li];
        /* a last page that is exactly full says next: null only if nothing follows it */
        CHECK_INT(want_pages, pages);
        json_decref(ids);
    }
    /* paging a filtered list */
    int pages = 0;
    json_t *ids = page_through(&f, (store_filter_t){.variant = "async_v1"}, 3, &pages);
    CHECK(ids != NULL);
    static const char *const v1[] = {"e-11", "e-10", "e-09", "e-08", "e-06", "e-04", "e-02", "e-00"};
    CHECK_INT(8, json_array_size(ids));
    for (size_t i = 0; i < 8 && i < json_array_size(ids); i++)
        CHECK_STR(v1[i], json_string_value(json_array_get(ids, i)));
    CHECK_INT(3, pages);
    json_decref(ids);
    /* the default limit is 50 */
    json_t *l = list(&f, &(store_filter_t){0});
    CHECK_INT(12, json_array_size(json_object_get(l, "items")));
    CHECK(json_is_null(json_object_get(l, "next")));
    json_decref(l);
    /* the cursor's own experiment is excluded even when the filter would not match it */
    l = list(&f, &(store_filter_t){.before = "e-05", .limit = 50, .variant = "async_v1"});
    json_t *items = json_object_get(l, "items");
    CHECK_INT(3, json_array_size(items));
    CHECK_STR("e-04", json_string_value(json_object_get(json_array_get(items, 0), "id")));
    json_decref(l);
    /* the last experiment as cursor: an empty page, next null */
    l = list(&f, &(store_filter_t){.before = "e-00", .limit = 5});
    CHECK_INT(0, json_array_size(json_object_get(l, "items")));
    CHECK(json_is_null(json_object_get(l, "next")));
    json_decref(l);
    /* an unknown cursor */
    sl_error_t err = {0};
    CHECK(store_list_experiments(f.s, &(store_filter_t){.before = "e-unknown", .limit = 5}, &err) == NULL);
    CHECK_INT(SL_E_INVALID, err.code);
    CHECK_STR("before", err.field);
    fixture_close(&f);
}

/* ---- sweeps ---- */

TEST(sweep_is_stored_with_its_experiments_in_order) {
    FIXTURE(f);
    CHECK(populate(&f));
    sl_error_t err = {0};
    json_t *sw = store_sweep_json(f.s, "s-1", &err);
    CHECK(sw != NULL);
    CHECK_STR("s-1", json_string_value(json_object_get(sw, "id")));
    CHECK_STR("async_v1", json_string_value(json_object_get(json_object_get(sw, "base"), "variant")));
    CHECK_INT(3, json_array_size(json_object_get(json_object_get(sw, "axes"), "streams")));
    CHECK(json_is_false(json_object_get(sw, "predict")));
    json_t *exps = json_object_get(sw, "experiments");
    CHECK_INT(3, json_array_size(exps));
    for (size_t i = 0; i < 3 && i < json_array_size(exps); i++) {
        json_t *e = json_array_get(exps, i);
        CHECK_INT(i, json_integer_value(json_object_get(e, "sweep_index")));
        CHECK_STR("s-1", json_string_value(json_object_get(e, "sweep_id")));
        CHECK_INT(1 << i, json_integer_value(json_object_get(json_object_get(e, "spec"), "streams")));
    }
    CHECK_INT(3, json_integer_value(json_object_get(json_object_get(sw, "counts"), "queued")));
    CHECK_INT(0, json_integer_value(json_object_get(json_object_get(sw, "counts"), "done")));
    json_decref(sw);
    memset(&err, 0, sizeof err);
    CHECK(store_sweep_json(f.s, "s-unknown", &err) == NULL);
    CHECK_INT(SL_E_NOTFOUND, err.code);
    fixture_close(&f);
}

/* A sweep of three whose experiment ids are given; returns store_insert_sweep's status. */
static int insert_sweep(fixture_t *f, const char *sweep_id, const char *const ids[3], sl_error_t *err) {
    spec_t sp[3];
    json_t *full[3] = {0};
    store_new_experiment_t ex[3];
    for (int i = 0; i < 3; i++) {
        char text[128];
        snprintf(text, sizeof text, "{\"variant\":\"async_v2\",\"size\":2048,\"streams\":%d}", i + 1);
        if (!spec_parse_text(text, &sp[i]))
            return -1;
        full[i] = spec_to_json(&sp[i]);
        ex[i] = (store_new_experiment_t){.id = ids[i], .machine_id = f->m.id, .sweep_id = sweep_id, .sweep_index = i,
                                         .spec = &sp[i], .spec_json = full[i]};
    }
    json_t *req = json_pack("{s:{s:s}, s:{s:[i,i,i]}}", "base", "variant", "async_v2", "axes", "streams", 1, 2, 3);
    int rc = store_insert_sweep(f->s, sweep_id, req, ex, 3, err);
    json_decref(req);
    for (int i = 0; i < 3; i++)
        json_decref(full[i]);
    return rc;
}

TEST(sweep_insert_is_one_transaction) {
    FIXTURE(f);
    sl_error_t err = {0};
    store_counts_t c;
    /* the second experiment repeats the first's id: nothing at all is stored */
    const char *const dup_inside[3] = {"e-x1", "e-x1", "e-x3"};
    CHECK_INT(SL_E_DB, insert_sweep(&f, "s-bad", dup_inside, &err));
    CHECK_INT(SL_E_DB, err.code);
    memset(&err, 0, sizeof err);
    CHECK(store_sweep_json(f.s, "s-bad", &err) == NULL);
    CHECK_INT(SL_E_NOTFOUND, err.code);
    CHECK_INT(SL_OK, store_count_by_status(f.s, &c, &err));
    CHECK_INT(0, c.queued + c.running + c.done + c.failed + c.cancelled);
    memset(&err, 0, sizeof err);
    CHECK(store_experiment_json(f.s, "e-x1", &err) == NULL);
    CHECK_INT(SL_E_NOTFOUND, err.code);
    CHECK_INT(0, list_count(&f, (store_filter_t){.sweep = "s-bad"}));

    /* the second experiment repeats an id already stored */
    CHECK_INT(SL_OK, add(&f, "e-old", "{\"variant\":\"async_v1\"}"));
    const char *const dup_old[3] = {"e-y1", "e-old", "e-y3"};
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_DB, insert_sweep(&f, "s-bad2", dup_old, &err));
    memset(&err, 0, sizeof err);
    CHECK(store_sweep_json(f.s, "s-bad2", &err) == NULL);
    CHECK_INT(SL_OK, store_count_by_status(f.s, &c, &err));
    CHECK_INT(1, c.queued);

    /* the connection is usable after the rollback: a good sweep goes in whole */
    const char *const good[3] = {"e-z1", "e-z2", "e-z3"};
    CHECK_INT(SL_OK, insert_sweep(&f, "s-good", good, &err));
    CHECK_INT(3, list_count(&f, (store_filter_t){.sweep = "s-good"}));
    /* a repeated sweep id stores nothing new */
    const char *const again[3] = {"e-w1", "e-w2", "e-w3"};
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_DB, insert_sweep(&f, "s-good", again, &err));
    CHECK_INT(SL_OK, store_count_by_status(f.s, &c, &err));
    CHECK_INT(4, c.queued);
    memset(&err, 0, sizeof err);
    CHECK(store_experiment_json(f.s, "e-w1", &err) == NULL);
    CHECK_INT(SL_OK, store_integrity_check(f.s, &err));
    fixture_close(&f);
}

TEST(two_connections_see_each_others_writes) {
    FIXTURE(f);
    sl_error_t err = {0};
    store_t *second = NULL;
    CHECK_INT(SL_OK, store_open(f.path, &second, &err));
    if (!second) {
        fixture_close(&f);
        return;
    }
    CHECK_INT(SL_OK, store_migrate(second, &err)); /* up to date: a no-op beside a live connection */
    CHECK_INT(SL_OK, add(&f, "e-shared", "{\"variant\":\"async_v1\"}"));
    char id[64];
    json_t *spec = NULL;
    CHECK_INT(1, store_claim_next(second, f.m.id, 0, id, &spec, &err));
    CHECK_STR("e-shared", id);
    json_decref(spec);
    /* the first connection cannot claim it again */
    CHECK_STR("", claim(&f, 0, id));
    CHECK_STATUS(f, "e-shared", "running");
    store_close(second);
    fixture_close(&f);
}

static const check_test_t tests[] = {
    TEST_ENTRY(fresh_db_migrates_to_the_latest_version),
    TEST_ENTRY(migrating_an_up_to_date_db_is_a_no_op),
    TEST_ENTRY(a_store_from_before_the_calls_keeps_its_timelines),
    TEST_ENTRY(db_from_a_newer_version_is_refused),
    TEST_ENTRY(db_one_version_ahead_is_refused),
    TEST_ENTRY(corrupt_file_is_refused_not_crashed),
    TEST_ENTRY(corrupt_pages_are_reported_by_the_integrity_check),
    TEST_ENTRY(unopenable_path_is_refused),
    TEST_ENTRY(a_failing_migration_is_rolled_back_whole),
    TEST_ENTRY(in_memory_store_works),
    TEST_ENTRY(a_locked_database_fails_cleanly),
    TEST_ENTRY(integrity_check_is_ok),
    TEST_ENTRY(machines_upsert_read_and_list),
    TEST_ENTRY(insert_refuses_a_duplicate_id_and_an_unknown_machine),
    TEST_ENTRY(inserted_experiment_reads_back_queued_with_its_full_spec),
    TEST_ENTRY(insert_claim_finish_round_trip),
    TEST_ENTRY(finishing_an_experiment_that_is_not_running_leaves_nothing),
    TEST_ENTRY(timeline_of_an_unfinished_experiment_is_a_conflict),
    TEST_ENTRY(cancel_queued_then_again_then_unknown),
    TEST_ENTRY(start_fail_and_requeue_move_only_from_the_right_status),
    TEST_ENTRY(claim_is_fifo_and_only_for_the_given_machine_and_device),
    TEST_ENTRY(recover_interrupted_fails_running_experiments),
    TEST_ENTRY(count_by_status_counts_each_status),
    TEST_ENTRY(list_filters),
    TEST_ENTRY(list_paging_with_before),
    TEST_ENTRY(sweep_is_stored_with_its_experiments_in_order),
    TEST_ENTRY(sweep_insert_is_one_transaction),
    TEST_ENTRY(two_connections_see_each_others_writes),
};

CHECK_MAIN("unit-store", tests)
