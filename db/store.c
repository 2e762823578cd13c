/* store.c — streamlab's SQLite store: the only file with SQL (see store.h).
 * Every return code is checked; each function has one exit path that finalises its
 * statements; multi-row writes are one transaction (BEGIN IMMEDIATE ... COMMIT). */
#include "store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "migrations.h"
#include "store_internal.h"

static int db_error(sl_error_t *err, store_t *s, const char *what) {
    return sl_error_set(err, SL_E_DB, "", "%s: %s", what, s && s->db ? sqlite3_errmsg(s->db) : "no database");
}

json_t *store_event_json(sqlite3_stmt *st, int col, json_t **call, bool *has_call) {
    const char *op = (const char *)sqlite3_column_text(st, col + 3);
    int device = sqlite3_column_int(st, col), stream = sqlite3_column_int(st, col + 1),
        chunk = sqlite3_column_int(st, col + 2);
    bool has = sqlite3_column_type(st, col + 7) != SQLITE_NULL && sqlite3_column_type(st, col + 8) != SQLITE_NULL;
    if (has_call)
        *has_call = has;
    *call = has ? json_pack("{s:i, s:i, s:i, s:s, s:f, s:f}", "device", device, "stream", stream, "chunk", chunk, "op",
                            op ? op : "", "start_us", sqlite3_column_double(st, col + 7), "end_us",
                            sqlite3_column_double(st, col + 8))
                : NULL;
    return json_pack("{s:i, s:i, s:i, s:s, s:f, s:f, s:I}", "device", device, "stream", stream, "chunk", chunk, "op",
                     op ? op : "", "start_us", sqlite3_column_double(st, col + 4), "end_us",
                     sqlite3_column_double(st, col + 5), "bytes", (json_int_t)sqlite3_column_int64(st, col + 6));
}

void store_now_iso(char out[32]) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%.19s.%03dZ", base, (int)(ts.tv_nsec / 1000000));
}

static int exec(store_t *s, const char *sql, sl_error_t *err) {
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sl_error_set(err, SL_E_DB, "", "%s", msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return SL_E_DB;
    }
    return SL_OK;
}

/* A statement for sql: the connection's kept one (reset, bindings cleared) or a new
 * one, kept while there is room. Give it back with stmt_done, never sqlite3_finalize. */
static int prepare(store_t *s, const char *sql, sqlite3_stmt **st, sl_error_t *err) {
    for (int i = 0; i < s->nstmts; i++)
        if (strcmp(s->stmts[i].sql, sql) == 0) {
            *st = s->stmts[i].st;
            sqlite3_reset(*st);
            sqlite3_clear_bindings(*st);
            return SL_OK;
        }
    if (sqlite3_prepare_v3(s->db, sql, -1, s->nstmts < STORE_STMT_CACHE ? SQLITE_PREPARE_PERSISTENT : 0, st, NULL) !=
        SQLITE_OK) {
        *st = NULL;
        return db_error(err, s, "prepare");
    }
    if (s->nstmts < STORE_STMT_CACHE) {
        char *copy = strdup(sql);
        if (copy) {
            s->stmts[s->nstmts].sql = copy;
            s->stmts[s->nstmts++].st = *st;
        }
    }
    return SL_OK;
}

/* Done with a statement from prepare: a kept one is reset for its next use. */
static void stmt_done(store_t *s, sqlite3_stmt *st) {
    if (!st)
        return;
    for (int i = 0; i < s->nstmts; i++)
        if (s->stmts[i].st == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            return;
        }
    sqlite3_finalize(st);
}

/* bind helpers: SQLITE_TRANSIENT so callers' buffers may go away */
static int bind_text(sqlite3_stmt *st, int i, const char *v) {
    return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int bind_opt_real(sqlite3_stmt *st, int i, double v) {
    return (v > 0 && isfinite(v)) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

int store_open(const char *path, store_t **out, sl_error_t *err) {
    *out = NULL;
    store_t *s = calloc(1, sizeof *s);
    if (!s)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory opening the store");
    int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sl_error_set(err, SL_E_DB, "", "cannot open %s: %s", path, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        goto error;
    }
    if (sqlite3_busy_timeout(s->db, 5000) != SQLITE_OK) {
        db_error(err, s, "busy_timeout");
        goto error;
    }
    /* WAL: readers never block the writer; synchronous=NORMAL is durable across
     * process crashes (kill -9), which is what a lab service must survive. */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK) {
        db_error(err, s, "prepare");
        goto error;
    }
    rc = sqlite3_step(st);
    const char *mode = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    bool in_memory = strcmp(path, ":memory:") == 0; /* `streamlab run` without --db */
    bool wal = mode && (strcmp(mode, "wal") == 0 || (in_memory && strcmp(mode, "memory") == 0));
    stmt_done(s, st);
    if (!wal) {
        sl_error_set(err, SL_E_DB, "", "cannot put %s in WAL mode", path);
        goto error;
    }
    if (exec(s, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", err))
        goto error;
    *out = s;
    return SL_OK;
error:
    sqlite3_close(s->db);
    free(s);
    return err ? (int)err->code : SL_E_DB;
}

void store_close(store_t *s) {
    if (!s)
        return;
    for (int i = 0; i < s->nstmts; i++) {
        sqlite3_finalize(s->stmts[i].st);
        free(s->stmts[i].sql);
    }
    sqlite3_close(s->db);
    free(s);
}

int store_schema_version(store_t *s) {
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    stmt_done(s, st);
    return v;
}

int store_latest_version(void) {
    int v = 0;
    for (int i = 0; i < migration_count; i++)
        if (migrations[i].version > v)
            v = migrations[i].version;
    return v;
}

int store_migrate(store_t *s, sl_error_t *err) {
    int current = store_schema_version(s);
    if (current < 0)
        return db_error(err, s, "reading the schema version");
    int latest = store_latest_version();
    if (current > latest)
        return sl_error_set(err, SL_E_DB, "",
                            "the database's schema version %d is newer than this streamlab knows (%d): "
                            "it was written by a newer streamlab; upgrade streamlab or use another --db",
                            current, latest);
    for (int i = 0; i < migration_count; i++) {
        const migration_t *m = &migrations[i];
        if (m->version <= current)
            continue;
        if (exec(s, "BEGIN IMMEDIATE", err))
            return SL_E_DB;
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", m->version);
        if (exec(s, m->sql, err) || exec(s, pragma, err)) {
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s", err ? err->message : "");
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            return sl_error_set(err, SL_E_DB, "", "migration %s failed: %s", m->name, msg);
        }
        if (exec(s, "COMMIT", err))
            return SL_E_DB;
        current = m->version;
    }
    return SL_OK;
}

int store_integrity_check(store_t *s, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    if (prepare(s, "PRAGMA integrity_check", &st, err))
        return SL_E_DB;
    int rc = sqlite3_step(st);
    const char *res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int out = res && strcmp(res, "ok") == 0 ? SL_OK : sl_error_set(err, SL_E_DB, "", "integrity_check: %s", res ? res : "no answer");
    stmt_done(s, st);
    return out;
}

/* ---- machines ---- */

int store_upsert_machine(store_t *s, const machine_info_t *m, sl_error_t *err) {
    json_t *info = machine_to_json(m);
    char *info_text = info ? json_dumps(info, JSON_COMPACT) : NULL;
    json_decref(info);
    if (!info_text)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory describing the machine");
    char now[32];
    store_now_iso(now);
    sqlite3_stmt *st = NULL;
    int rc = prepare(s,
                     "INSERT INTO machines (id, hostname, label, backend, cpu, kernel, cuda_runtime, cuda_driver,"
                     " driver_version, info, first_seen, last_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
                     " ON CONFLICT(id) DO UPDATE SET hostname=excluded.hostname, label=excluded.label,"
                     " backend=excluded.backend, cpu=excluded.cpu, kernel=excluded.kernel,"
                     " cuda_runtime=excluded.cuda_runtime, cuda_driver=excluded.cuda_driver,"
                     " driver_version=excluded.driver_version, info=excluded.info, last_seen=excluded.last_seen",
                     &st, err);
    if (rc == SL_OK) {
        bind_text(st, 1, m->id);
        bind_text(st, 2, m->hostname);
        bind_text(st, 3, m->label);
        bind_text(st, 4, backend_names[m->backend]);
        bind_text(st, 5, m->cpu);
        bind_text(st, 6, m->kernel);
        bind_text(st, 7, m->cuda_runtime);
        bind_text(st, 8, m->cuda_driver);
        bind_text(st, 9, m->driver_version);
        bind_text(st, 10, info_text);
        bind_text(st, 11, now);
        bind_text(st, 12, now);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_error(err, s, "saving the machine");
    }
    stmt_done(s, st);
    free(info_text);
    return rc;
}

static json_t *machine_row(sqlite3_stmt *st) {
    const char *info = (const char *)sqlite3_column_text(st, 0);
    json_t *m = info ? json_loads(info, 0, NULL) : NULL;
    if (!m)
        m = json_object();
    if (m) {
        json_object_set_new(m, "first_seen", json_string((const char *)sqlite3_column_text(st, 1)));
        json_object_set_new(m, "last_seen", json_string((const char *)sqlite3_column_text(st, 2)));
    }
    return m;
}

json_t *store_machine_json(store_t *s, const char *machine_id, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    json_t *out = NULL;
    if (prepare(s, "SELECT info, first_seen, last_seen FROM machines WHERE id=?", &st, err))
        return NULL;
    bind_text(st, 1, machine_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        out = machine_row(st);
    else if (rc == SQLITE_DONE)
        sl_error_set(err, SL_E_NOTFOUND, "", "no machine %s", machine_id);
    else
        db_error(err, s, "reading the machine");
    stmt_done(s, st);
    return out;
}

/* Newest first; of machines seen in the same millisecond (this one and the embedded profiles'
 * at start-up), the one stored last. */
json_t *store_list_machines(store_t *s, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    if (prepare(s, "SELECT info, first_seen, last_seen FROM machines ORDER BY last_seen DESC, rowid DESC", &st, err))
        return NULL;
    json_t *items = json_array();
    int rc;
    while (items && (rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(items, machine_row(st));
    if (items && rc != SQLITE_DONE) {
        db_error(err, s, "listing machines");
        json_decref(items);
        items = NULL;
    }
    stmt_done(s, st);
    return items;
}

/* ---- experiments ---- */

static int insert_experiment(store_t *s, sqlite3_stmt *st, const store_new_experiment_t *e, const char *now,
                             sl_error_t *err) {
    char *spec_text = json_dumps(e->spec_json, JSON_COMPACT);
    if (!spec_text)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory storing the spec");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    bind_text(st, 1, e->id);
    bind_text(st, 2, e->machine_id);
    bind_text(st, 3, e->sweep_id);
    if (e->sweep_id)
        sqlite3_bind_int(st, 4, e->sweep_index);
    else
        sqlite3_bind_null(st, 4);
    /* the worker that claims it: its first device's; a simulation of another machine (sim_of)
     * uses none of this one's devices, and its devices need not exist here: worker 0's */
    sqlite3_bind_int(st, 5, e->spec->sim_of[0] ? 0 : e->spec->devices[0]);
    bind_text(st, 6, variant_names[e->spec->variant]);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)e->spec->size);
    sqlite3_bind_int(st, 8, e->spec->streams);
    bind_text(st, 9, e->spec->label);
    bind_text(st, 10, spec_text);
    bind_text(st, 11, now);
    int rc = sqlite3_step(st) == SQLITE_DONE ? SL_OK : db_error(err, s, "saving the experiment");
    free(spec_text);
    return rc;
}

#define INSERT_EXPERIMENT_SQL                                                                          \
    "INSERT INTO experiments (id, machine_id, sweep_id, sweep_index, device, status, variant, size, streams," \
    " label, spec, created_at) VALUES (?,?,?,?,?,'queued',?,?,?,?,?,?)"

int store_insert_experiment(store_t *s, const store_new_experiment_t *e, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    char now[32];
    store_now_iso(now);
    int rc = prepare(s, INSERT_EXPERIMENT_SQL, &st, err);
    if (rc == SL_OK)
        rc = insert_experiment(s, st, e, now, err);
    stmt_done(s, st);
    return rc;
}

int store_insert_sweep(store_t *s, const char *sweep_id, json_t *request, const store_new_experiment_t *exps,
                       size_t n, sl_error_t *err) {
    return store_enqueue(s, sweep_id, request, exps, n, 0, err);
}

int store_enqueue(store_t *s, const char *sweep_id, json_t *request, const store_new_experiment_t *exps, size_t n,
                  long long queue_max, sl_error_t *err) {
    char now[32];
    store_now_iso(now);
    char *req_text = sweep_id ? json_dumps(request, JSON_COMPACT) : NULL;
    if (sweep_id && !req_text)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory storing the sweep");
    sqlite3_stmt *sw = NULL, *ex = NULL, *cnt = NULL;
    int rc = exec(s, "BEGIN IMMEDIATE", err);
    if (rc) {
        free(req_text);
        return rc;
    }
    /* the queue's length is checked inside the writing transaction: no two requests
     * can both see room for the last place */
    if (queue_max > 0 && (rc = prepare(s, "SELECT count(*) FROM experiments WHERE status='queued'", &cnt, err)) == SL_OK) {
        long long queued = sqlite3_step(cnt) == SQLITE_ROW ? sqlite3_column_int64(cnt, 0) : -1;
        if (queued < 0)
            rc = db_error(err, s, "counting the queue");
        else if (queued + (long long)n > queue_max)
            rc = sl_error_set(err, SL_E_BUSY, "", "the queue holds %lld experiments; %zu more would pass the limit of %lld",
                              queued, n, queue_max);
        stmt_done(s, cnt);
    }
    if (rc == SL_OK && sweep_id)
        rc = prepare(s, "INSERT INTO sweeps (id, created_at, request) VALUES (?,?,?)", &sw, err);
    if (rc == SL_OK && sweep_id) {
        bind_text(sw, 1, sweep_id);
        bind_text(sw, 2, now);
        bind_text(sw, 3, req_text);
        if (sqlite3_step(sw) != SQLITE_DONE)
            rc = db_error(err, s, "saving the sweep");
    }
    if (rc == SL_OK)
        rc = prepare(s, INSERT_EXPERIMENT_SQL, &ex, err);
    for (size_t i = 0; rc == SL_OK && i < n; i++)
        rc = insert_experiment(s, ex, &exps[i], now, err);
    stmt_done(s, sw);
    stmt_done(s, ex);
    if (rc == SL_OK)
        rc = exec(s, "COMMIT", err);
    if (rc)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    free(req_text);
    return rc;
}

int store_claim_next(store_t *s, const char *machine_id, int device, char id_out[64], json_t **spec_out,
                     sl_error_t *err) {
    char now[32];
    store_now_iso(now);
    sqlite3_stmt *st = NULL;
    *spec_out = NULL;
    if (prepare(s,
                "UPDATE experiments SET status='running', started_at=?1 WHERE seq = (SELECT seq FROM experiments"
                " WHERE status='queued' AND machine_id=?2 AND device=?3 ORDER BY seq LIMIT 1) RETURNING id, spec",
                &st, err))
        return -1;
    bind_text(st, 1, now);
    bind_text(st, 2, machine_id);
    sqlite3_bind_int(st, 3, device);
    int out = 0;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        snprintf(id_out, 64, "%s", (const char *)sqlite3_column_text(st, 0));
        const char *spec = (const char *)sqlite3_column_text(st, 1);
        *spec_out = spec ? json_loads(spec, 0, NULL) : NULL;
        out = 1;
        rc = sqlite3_step(st); /* run to completion so the UPDATE commits */
    }
    if (rc != SQLITE_DONE) {
        db_error(err, s, "claiming the next experiment");
        json_decref(*spec_out);
        *spec_out = NULL;
        out = -1;
    }
    stmt_done(s, st);
    return out;
}

static int set_status(store_t *s, const char *id, const char *from, const char *to, const char *error_text,
                      sl_error_t *err) {
    char now[32];
    store_now_iso(now);
    sqlite3_stmt *st = NULL;
    const char *sql = strcmp(to, "queued") == 0
                          ? "UPDATE experiments SET status=?1, started_at=NULL, error=?3 WHERE id=?4 AND status=?5"
                          : "UPDATE experiments SET status=?1, finished_at=?2, error=?3 WHERE id=?4 AND status=?5";
    if (prepare(s, sql, &st, err))
        return SL_E_DB;
    bind_text(st, 1, to);
    if (strcmp(to, "queued") != 0)
        bind_text(st, 2, now);
    bind_text(st, 3, error_text);
    bind_text(st, 4, id);
    bind_text(st, 5, from);
    int rc = SL_OK;
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = db_error(err, s, "updating the experiment");
    else if (sqlite3_changes(s->db) == 0)
        rc = SL_E_CONFLICT;
    stmt_done(s, st);
    return rc;
}

static int experiment_status(store_t *s, const char *id, char out[16], sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    if (prepare(s, "SELECT status FROM experiments WHERE id=?", &st, err))
        return SL_E_DB;
    bind_text(st, 1, id);
    int rc = sqlite3_step(st);
    int ret = SL_OK;
    if (rc == SQLITE_ROW)
        snprintf(out, 16, "%s", (const char *)sqlite3_column_text(st, 0));
    else if (rc == SQLITE_DONE)
        ret = sl_error_set(err, SL_E_NOTFOUND, "", "no experiment %s", id);
    else
        ret = db_error(err, s, "reading the experiment");
    stmt_done(s, st);
    return ret;
}

int store_start_experiment(store_t *s, const char *id, sl_error_t *err) {
    char now[32];
    store_now_iso(now);
    sqlite3_stmt *st = NULL;
    if (prepare(s, "UPDATE experiments SET status='running', started_at=? WHERE id=? AND status='queued'", &st, err))
        return SL_E_DB;
    bind_text(st, 1, now);
    bind_text(st, 2, id);
    int rc = sqlite3_step(st) == SQLITE_DONE ? SL_OK : db_error(err, s, "starting the experiment");
    if (rc == SL_OK && sqlite3_changes(s->db) == 0)
        rc = sl_error_set(err, SL_E_CONFLICT, "", "experiment %s is not queued", id);
    stmt_done(s, st);
    return rc;
}

int store_fail_experiment(store_t *s, const char *id, const char *message, sl_error_t *err) {
    int rc = set_status(s, id, "running", "failed", message, err);
    if (rc == SL_E_CONFLICT)
        return sl_error_set(err, SL_E_CONFLICT, "", "experiment %s is not running", id);
    return rc;
}

int store_requeue_experiment(store_t *s, const char *id, sl_error_t *err) {
    int rc = set_status(s, id, "running", "queued", NULL, err);
    if (rc == SL_E_CONFLICT)
        return sl_error_set(err, SL_E_CONFLICT, "", "experiment %s is not running", id);
    return rc;
}

int store_cancel_experiment(store_t *s, const char *id, sl_error_t *err) {
    int rc = set_status(s, id, "queued", "cancelled", NULL, err);
    if (rc != SL_E_CONFLICT)
        return rc;
    char status[16];
    rc = experiment_status(s, id, status, err);
    if (rc)
        return rc;
    return sl_error_set(err, SL_E_CONFLICT, "", "experiment %s is %s, not queued: only queued experiments can be cancelled",
                        id, status);
}

int store_recover_interrupted(store_t *s, sl_error_t *err) {
    char now[32];
    store_now_iso(now);
    sqlite3_stmt *st = NULL;
    if (prepare(s,
                "UPDATE experiments SET status='failed', finished_at=?, error='interrupted: the server stopped"
                " while this experiment was running' WHERE status='running'",
                &st, err))
        return -1;
    bind_text(st, 1, now);
    int n = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(s->db) : -1;
    if (n < 0)
        db_error(err, s, "recovering interrupted experiments");
    stmt_done(s, st);
    return n;
}

int store_finish_experiment(store_t *s, const char *id, const result_t *r, sl_error_t *err) {
    char *extra = r->extra ? json_dumps(r->extra, JSON_COMPACT) : NULL;
    sqlite3_stmt *res = NULL, *rep = NULL, *ev = NULL;
    int rc = exec(s, "BEGIN IMMEDIATE", err);
    if (rc) {
        free(extra);
        return rc;
    }
    rc = prepare(s,
                 "INSERT INTO results (experiment_id, backend, reps, median_rep, total_median_ms, total_min_ms,"
                 " total_max_ms, total_mean_ms, total_stddev_ms, h2d_ms, kernel_ms, d2h_ms, host_ms, h2d_gbps,"
                 " d2h_gbps, overlap, floor_ms, efficiency, predicted_ms, prediction_error, verified, verification,"
                 " extra) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 &res, err);
    if (rc == SL_OK) {
        int i = 1;
        bind_text(res, i++, id);
        bind_text(res, i++, backend_names[r->backend]);
        sqlite3_bind_int(res, i++, r->reps);
        sqlite3_bind_int(res, i++, r->median_rep);
        sqlite3_bind_double(res, i++, r->total_ms.median);
        sqlite3_bind_double(res, i++, r->total_ms.min);
        sqlite3_bind_double(res, i++, r->total_ms.max);
        sqlite3_bind_double(res, i++, r->total_ms.mean);
        sqlite3_bind_double(res, i++, r->total_ms.stddev);
        sqlite3_bind_double(res, i++, r->h2d_ms);
        sqlite3_bind_double(res, i++, r->kernel_ms);
        sqlite3_bind_double(res, i++, r->d2h_ms);
        sqlite3_bind_double(res, i++, r->host_ms);
        sqlite3_bind_double(res, i++, r->h2d_gbps);
        sqlite3_bind_double(res, i++, r->d2h_gbps);
        sqlite3_bind_double(res, i++, r->overlap);
        bind_opt_real(res, i++, r->floor_ms);
        bind_opt_real(res, i++, r->efficiency);
        bind_opt_real(res, i++, r->predicted_ms);
        if (r->prediction_error >= 0 && isfinite(r->prediction_error))
            sqlite3_bind_double(res, i++, r->prediction_error);
        else
            sqlite3_bind_null(res, i++);
        sqlite3_bind_int(res, i++, r->verified ? 1 : 0);
        bind_text(res, i++, r->verification);
        bind_text(res, i++, extra);
        if (sqlite3_step(res) != SQLITE_DONE)
            rc = db_error(err, s, "saving the result");
    }
    if (rc == SL_OK)
        rc = prepare(s, "INSERT INTO result_reps (experiment_id, rep, total_ms) VALUES (?,?,?)", &rep, err);
    if (rc == SL_OK)
        rc = prepare(s,
                     "INSERT INTO op_events (experiment_id, rep, device, stream, chunk, op, start_us, end_us, bytes,"
                     " call_start_us, call_end_us) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                     &ev, err);
    for (int k = 0; rc == SL_OK && k < r->reps; k++) {
        sqlite3_reset(rep);
        bind_text(rep, 1, id);
        sqlite3_bind_int(rep, 2, k);
        sqlite3_bind_double(rep, 3, r->rep_ms[k]);
        if (sqlite3_step(rep) != SQLITE_DONE) {
            rc = db_error(err, s, "saving a repetition");
            break;
        }
        const timeline_t *tl = r->timelines ? &r->timelines[k] : NULL;
        for (size_t j = 0; tl && rc == SL_OK && j < tl->count; j++) {
            const op_event_t *e = &tl->ops[j];
            sqlite3_reset(ev);
            bind_text(ev, 1, id);
            sqlite3_bind_int(ev, 2, k);
            sqlite3_bind_int(ev, 3, e->device);
            sqlite3_bind_int(ev, 4, e->stream);
            sqlite3_bind_int(ev, 5, e->chunk);
            bind_text(ev, 6, op_names[e->op]);
            sqlite3_bind_double(ev, 7, e->start_us);
            sqlite3_bind_double(ev, 8, e->end_us);
            sqlite3_bind_int64(ev, 9, (sqlite3_int64)e->bytes);
            bool call = e->call && isfinite(e->call_start_us) && isfinite(e->call_end_us);
            if (call) {
                sqlite3_bind_double(ev, 10, e->call_start_us);
                sqlite3_bind_double(ev, 11, e->call_end_us);
            } else {
                sqlite3_bind_null(ev, 10);
                sqlite3_bind_null(ev, 11);
            }
            if (sqlite3_step(ev) != SQLITE_DONE)
                rc = db_error(err, s, "saving an op event");
        }
    }
    stmt_done(s, res);
    stmt_done(s, rep);
    stmt_done(s, ev);
    if (rc == SL_OK) {
        rc = set_status(s, id, "running", "done", NULL, err);
        if (rc == SL_E_CONFLICT)
            sl_error_set(err, SL_E_CONFLICT, "", "experiment %s is no longer running", id);
    }
    if (rc == SL_OK)
        rc = exec(s, "COMMIT", err);
    if (rc)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    free(extra);
    return rc;
}

/* ---- reading experiments ---- */

#define EXPERIMENT_COLUMNS                                                                                   \
    "e.id, e.machine_id, e.sweep_id, e.sweep_index, e.status, e.spec, e.error, e.created_at, e.started_at,"   \
    " e.finished_at, r.backend, r.reps, r.median_rep, r.total_median_ms, r.total_min_ms, r.total_max_ms,"     \
    " r.total_mean_ms, r.total_stddev_ms, r.h2d_ms, r.kernel_ms, r.d2h_ms, r.host_ms, r.h2d_gbps, r.d2h_gbps," \
    " r.overlap, r.floor_ms, r.efficiency, r.predicted_ms, r.prediction_error, r.verified, r.verification,"   \
    " r.extra, e.seq"
#define EXPERIMENT_FROM " FROM experiments e LEFT JOIN results r ON r.experiment_id = e.id"

static json_t *col_text_or_null(sqlite3_stmt *st, int i) {
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? json_string(t) : json_null();
}

static json_t *col_real_or_null(sqlite3_stmt *st, int i) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_real(sqlite3_column_double(st, i));
}

static json_t *reps_json(store_t *s, const char *id) {
    sqlite3_stmt *st = NULL;
    json_t *arr = json_array();
    if (!arr || prepare(s, "SELECT total_ms FROM result_reps WHERE experiment_id=? ORDER BY rep", &st, NULL) != SQLITE_OK)
        return arr;
    bind_text(st, 1, id);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(arr, json_real(sqlite3_column_double(st, 0)));
    stmt_done(s, st);
    return arr;
}

static json_t *experiment_row(store_t *s, sqlite3_stmt *st) {
    const char *id = (const char *)sqlite3_column_text(st, 0);
    const char *spec_text = (const char *)sqlite3_column_text(st, 5);
    json_t *spec = spec_text ? json_loads(spec_text, 0, NULL) : NULL;
    json_t *e = json_object();
    if (!e)
        return NULL;
    json_object_set_new(e, "id", json_string(id));
    json_object_set_new(e, "status", col_text_or_null(st, 4));
    json_object_set_new(e, "spec", spec ? spec : json_null());
    json_object_set_new(e, "machine_id", col_text_or_null(st, 1));
    json_object_set_new(e, "sweep_id", col_text_or_null(st, 2));
    json_object_set_new(e, "sweep_index", sqlite3_column_type(st, 3) == SQLITE_NULL
                                              ? json_null() : json_integer(sqlite3_column_int(st, 3)));
    json_object_set_new(e, "created_at", col_text_or_null(st, 7));
    json_object_set_new(e, "started_at", col_text_or_null(st, 8));
    json_object_set_new(e, "finished_at", col_text_or_null(st, 9));
    json_object_set_new(e, "error", col_text_or_null(st, 6));
    if (sqlite3_column_type(st, 10) == SQLITE_NULL) {
        json_object_set_new(e, "result", json_null());
        return e;
    }
    json_t *r = json_object();
    json_object_set_new(r, "backend", col_text_or_null(st, 10));
    json_object_set_new(r, "reps", json_integer(sqlite3_column_int(st, 11)));
    json_object_set_new(r, "median_rep", json_integer(sqlite3_column_int(st, 12)));
    json_object_set_new(r, "total_ms",
                        json_pack("{s:f, s:f, s:f, s:f, s:f}", "median", sqlite3_column_double(st, 13), "min",
                                  sqlite3_column_double(st, 14), "max", sqlite3_column_double(st, 15), "mean",
                                  sqlite3_column_double(st, 16), "stddev", sqlite3_column_double(st, 17)));
    json_object_set_new(r, "reps_ms", reps_json(s, id));
    static const char *const names[] = {"h2d_ms", "kernel_ms", "d2h_ms", "host_ms", "h2d_gbps", "d2h_gbps", "overlap"};
    for (int i = 0; i < 7; i++)
        json_object_set_new(r, names[i], json_real(sqlite3_column_double(st, 18 + i)));
    json_object_set_new(r, "floor_ms", col_real_or_null(st, 25));
    json_object_set_new(r, "efficiency", col_real_or_null(st, 26));
    json_object_set_new(r, "predicted_ms", col_real_or_null(st, 27));
    json_object_set_new(r, "prediction_error", col_real_or_null(st, 28));
    json_object_set_new(r, "verified", json_boolean(sqlite3_column_int(st, 29)));
    json_object_set_new(r, "verification", col_text_or_null(st, 30));
    const char *extra = (const char *)sqlite3_column_text(st, 31);
    json_t *x = extra ? json_loads(extra, 0, NULL) : NULL;
    json_object_set_new(r, "extra", x ? x : json_object());
    json_object_set_new(e, "result", r);
    return e;
}

/* span_ms / median_ms, null where either is missing or 0: how far a timeline is from the run. */
static json_t *stretch_json(double span_ms, double median_ms) {
    return span_ms > 0 && median_ms > 0 ? json_real(span_ms / median_ms) : json_null();
}

/* The span of rep's stored ops (first start to last end) in *span_ms; -1 where the store holds
 * none of them (an experiment imported from a compact bundle). */
static int rep_span_ms(store_t *s, const char *id, int rep, double *span_ms, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    *span_ms = -1;
    if (prepare(s, "SELECT MIN(start_us), MAX(end_us) FROM op_events WHERE experiment_id=? AND rep=?", &st, err))
        return SL_E_DB;
    bind_text(st, 1, id);
    sqlite3_bind_int(st, 2, rep);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        *span_ms = (sqlite3_column_double(st, 1) - sqlite3_column_double(st, 0)) / 1000.0;
    stmt_done(s, st);
    return rc == SQLITE_ROW ? SL_OK : db_error(err, s, "reading the timeline's span");
}

/* The result's timeline_span_ms and timeline_stretch: the median rep's stored ops against the
 * median total. Only here, not in experiment_row: a list would pay a scan of ops per item. */
static int add_timeline_span(store_t *s, const char *id, json_t *result, sl_error_t *err) {
    if (!json_is_object(result))
        return SL_OK;
    double span_ms = -1;
    int median = (int)json_integer_value(json_object_get(result, "median_rep"));
    if (rep_span_ms(s, id, median, &span_ms, err))
        return SL_E_DB;
    double median_ms = json_number_value(json_object_get(json_object_get(result, "total_ms"), "median"));
    if (json_object_set_new(result, "timeline_span_ms", span_ms >= 0 ? json_real(span_ms) : json_null()) ||
        json_object_set_new(result, "timeline_stretch", stretch_json(span_ms, median_ms)))
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory");
    return SL_OK;
}

/* The result's rep_modes: its reps in two groups where they fall so (stats_rep_modes), else
 * null. Computed when read, like the span, from the reps the store holds. */
static int add_rep_modes(json_t *result, sl_error_t *err) {
    if (!json_is_object(result))
        return SL_OK;
    json_t *reps = json_object_get(result, "reps_ms"), *x;
    size_t n = json_array_size(reps), i;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory");
    json_array_foreach(reps, i, x)
        v[i] = json_number_value(x);
    rep_modes_t m;
    stats_rep_modes(v, (int)n, &m);
    free(v);
    json_t *j = m.two ? json_pack("{s:f, s:i, s:f, s:i, s:i, s:i}", "fast_ms", m.fast_ms, "fast_reps", m.fast_reps,
                                  "slow_ms", m.slow_ms, "slow_reps", m.slow_reps, "outliers", m.outliers,
                                  "slow_runs", m.slow_runs)
                      : json_null();
    if (!j || json_object_set_new(result, "rep_modes", j))
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory");
    return SL_OK;
}

json_t *store_experiment_json(store_t *s, const char *id, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    json_t *out = NULL;
    if (prepare(s, "SELECT " EXPERIMENT_COLUMNS EXPERIMENT_FROM " WHERE e.id=?", &st, err))
        return NULL;
    bind_text(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        out = experiment_row(s, st);
    else if (rc == SQLITE_DONE)
        sl_error_set(err, SL_E_NOTFOUND, "", "no experiment %s", id);
    else
        db_error(err, s, "reading the experiment");
    stmt_done(s, st);
    if (out && (add_timeline_span(s, id, json_object_get(out, "result"), err) ||
                add_rep_modes(json_object_get(out, "result"), err))) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static long long seq_of(store_t *s, const char *id) {
    sqlite3_stmt *st = NULL;
    long long seq = -1;
    if (prepare(s, "SELECT seq FROM experiments WHERE id=?", &st, NULL) == SQLITE_OK) {
        bind_text(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW)
            seq = sqlite3_column_int64(st, 0);
    }
    stmt_done(s, st);
    return seq;
}

/* The list query over `columns` with every filter bound (NULL parameters match
 * everything), newest first, limit + 1 rows so that the caller knows of a next page. */
static int list_prepare(store_t *s, const store_filter_t *f, const char *columns, sqlite3_stmt **st, int *limit,
                        sl_error_t *err) {
    char sql[2048];
    long long before = -1;
    *st = NULL;
    if (f->before && *f->before) {
        before = seq_of(s, f->before);
        if (before < 0)
            return sl_error_set(err, SL_E_INVALID, "before", "the cursor %s names no experiment", f->before);
    }
    snprintf(sql, sizeof sql,
             "SELECT %s" EXPERIMENT_FROM
             " WHERE (?1 IS NULL OR e.status=?1) AND (?2 IS NULL OR e.variant=?2) AND (?3 IS NULL OR e.machine_id=?3)"
             " AND (?4 IS NULL OR e.sweep_id=?4) AND (?5 IS NULL OR e.label=?5) AND (?6 IS NULL OR e.size=?6)"
             " AND (?7 IS NULL OR e.streams=?7) AND (?8 IS NULL OR e.seq < ?8) ORDER BY e.seq DESC LIMIT ?9",
             columns);
    if (prepare(s, sql, st, err))
        return SL_E_DB;
    bind_text(*st, 1, f->status);
    bind_text(*st, 2, f->variant);
    bind_text(*st, 3, f->machine);
    bind_text(*st, 4, f->sweep);
    bind_text(*st, 5, f->label);
    if (f->size > 0) sqlite3_bind_int64(*st, 6, f->size);
    if (f->streams > 0) sqlite3_bind_int64(*st, 7, f->streams);
    if (before >= 0) sqlite3_bind_int64(*st, 8, before);
    *limit = f->limit > 0 ? f->limit : 50;
    sqlite3_bind_int(*st, 9, *limit + 1);
    return SL_OK;
}

int store_list_ids(store_t *s, const store_filter_t *f, store_list_entry_t **ids, size_t *n, store_id_t next,
                   sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    int limit;
    *ids = NULL;
    *n = 0;
    next[0] = 0;
    if (list_prepare(s, f, "e.id, e.status", &st, &limit, err))
        return err ? (int)err->code : SL_E_DB;
    store_list_entry_t *out = calloc((size_t)limit + 1, sizeof *out);
    if (!out) {
        stmt_done(s, st);
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory listing experiments");
    }
    int rc;
    size_t k = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (k == (size_t)limit) {
            snprintf(next, sizeof(store_id_t), "%s", out[k - 1].id);
            rc = SQLITE_DONE;
            break;
        }
        snprintf(out[k].id, sizeof out[k].id, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(out[k++].status, sizeof out[k].status, "%s", (const char *)sqlite3_column_text(st, 1));
    }
    stmt_done(s, st);
    if (rc != SQLITE_DONE) {
        free(out);
        return db_error(err, s, "listing experiments");
    }
    *ids = out;
    *n = k;
    return SL_OK;
}

json_t *store_list_experiments(store_t *s, const store_filter_t *f, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    int limit;
    if (list_prepare(s, f, EXPERIMENT_COLUMNS, &st, &limit, err))
        return NULL;
    json_t *items = json_array();
    json_t *next = json_null();
    int rc, n = 0;
    while (items && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == limit) {
            json_decref(next);
            json_t *last = json_array_get(items, (size_t)n - 1);
            next = json_incref(json_object_get(last, "id"));
            break;
        }
        json_array_append_new(items, experiment_row(s, st));
        n++;
    }
    if (items && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        db_error(err, s, "listing experiments");
        json_decref(items);
        json_decref(next);
        stmt_done(s, st);
        return NULL;
    }
    stmt_done(s, st);
    return json_pack("{s:o, s:o}", "items", items ? items : json_array(), "next", next);
}

json_t *store_timeline_json(store_t *s, const char *id, int rep, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    char status[16];
    if (experiment_status(s, id, status, err))
        return NULL;
    if (prepare(s,
                "SELECT r.reps, r.median_rep, r.total_median_ms, e.spec FROM results r"
                " JOIN experiments e ON e.id = r.experiment_id WHERE r.experiment_id=?",
                &st, err))
        return NULL;
    bind_text(st, 1, id);
    int rc = sqlite3_step(st);
    int reps = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    int median = rc == SQLITE_ROW ? sqlite3_column_int(st, 1) : -1;
    double median_ms = rc == SQLITE_ROW ? sqlite3_column_double(st, 2) : 0;
    const char *spec_text = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 3) : NULL;
    json_t *spec = spec_text ? json_loads(spec_text, 0, NULL) : NULL;
    stmt_done(s, st);
    json_t *timing = json_string_value(json_object_get(spec, "timing")) ? json_incref(json_object_get(spec, "timing"))
                                                                        : json_null();
    json_decref(spec);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        json_decref(timing);
        db_error(err, s, "reading the result");
        return NULL;
    }
    if (reps < 0) {
        json_decref(timing);
        sl_error_set(err, SL_E_CONFLICT, "", "experiment %s is %s: it has no timeline", id, status);
        return NULL;
    }
    if (rep < 0)
        rep = median;
    if (rep >= reps) {
        json_decref(timing);
        sl_error_set(err, SL_E_INVALID, "rep", "rep must be between 0 and %d", reps - 1);
        return NULL;
    }
    json_t *rep_ms = json_null();
    if (prepare(s, "SELECT total_ms FROM result_reps WHERE experiment_id=? AND rep=?", &st, err)) {
        json_decref(timing);
        return NULL;
    }
    bind_text(st, 1, id);
    sqlite3_bind_int(st, 2, rep);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        rep_ms = json_real(sqlite3_column_double(st, 0));
    stmt_done(s, st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        json_decref(timing);
        db_error(err, s, "reading the rep's total");
        return NULL;
    }
    if (prepare(s,
                "SELECT device, stream, chunk, op, start_us, end_us, bytes, call_start_us, call_end_us FROM op_events"
                " WHERE experiment_id=? AND rep=? ORDER BY rowid",
                &st, err)) {
        json_decref(timing);
        json_decref(rep_ms);
        return NULL;
    }
    bind_text(st, 1, id);
    sqlite3_bind_int(st, 2, rep);
    json_t *ops = json_array(), *calls = json_array();
    double first_us = 0, last_us = 0;
    while (ops && calls && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        double start_us = sqlite3_column_double(st, 4), end_us = sqlite3_column_double(st, 5);
        if (json_array_size(ops) == 0 || start_us < first_us)
            first_us = start_us;
        if (json_array_size(ops) == 0 || end_us > last_us)
            last_us = end_us;
        json_t *c = NULL;
        json_t *o = store_event_json(st, 0, &c, NULL);
        if (o)
            json_array_append_new(ops, o);
        if (c)
            json_array_append_new(calls, c);
    }
    stmt_done(s, st);
    if (!ops || !calls || rc != SQLITE_DONE) {
        json_decref(ops);
        json_decref(calls);
        json_decref(timing);
        json_decref(rep_ms);
        db_error(err, s, "reading the timeline");
        return NULL;
    }
    double span_ms = json_array_size(ops) ? (last_us - first_us) / 1000.0 : 0;
    /* lead_us: the first op's start after the rep's start, where the GPU waits for the
     * host's first call; inside the total, outside the span. calls: the issuing thread's
     * call of each op, in issue order, where the run recorded them */
    return json_pack("{s:s, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "experiment", id, "rep", rep,
                     "median_rep", median, "reps", reps, "span_ms",
                     json_array_size(ops) ? json_real(span_ms) : json_null(), "lead_us",
                     json_array_size(ops) ? json_real(first_us) : json_null(),
                     "rep_ms", rep_ms, "median_ms", median_ms > 0 ? json_real(median_ms) : json_null(), "stretch",
                     stretch_json(span_ms, median_ms), "timing", timing, "ops", ops, "calls", calls);
}

json_t *store_sweep_json(store_t *s, const char *sweep_id, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    if (prepare(s, "SELECT created_at, request FROM sweeps WHERE id=?", &st, err))
        return NULL;
    bind_text(st, 1, sweep_id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        if (rc == SQLITE_DONE)
            sl_error_set(err, SL_E_NOTFOUND, "", "no sweep %s", sweep_id);
        else
            db_error(err, s, "reading the sweep");
        stmt_done(s, st);
        return NULL;
    }
    const char *req_text = (const char *)sqlite3_column_text(st, 1);
    json_t *req = req_text ? json_loads(req_text, 0, NULL) : NULL;
    json_t *out = json_pack("{s:s, s:s}", "id", sweep_id, "created_at", (const char *)sqlite3_column_text(st, 0));
    stmt_done(s, st);
    if (!out) {
        json_decref(req);
        return NULL;
    }
    json_object_set(out, "base", req ? json_object_get(req, "base") : json_null());
    json_object_set(out, "axes", req ? json_object_get(req, "axes") : json_null());
    json_object_set(out, "predict", req && json_object_get(req, "predict") ? json_object_get(req, "predict") : json_false());
    json_decref(req);
    if (prepare(s, "SELECT " EXPERIMENT_COLUMNS EXPERIMENT_FROM " WHERE e.sweep_id=? ORDER BY e.sweep_index", &st, err)) {
        json_decref(out);
        return NULL;
    }
    bind_text(st, 1, sweep_id);
    json_t *exps = json_array();
    json_t *counts = json_pack("{s:i, s:i, s:i, s:i, s:i}", "queued", 0, "running", 0, "done", 0, "failed", 0,
                               "cancelled", 0);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *e = experiment_row(s, st);
        if (!e)
            continue;
        if (add_rep_modes(json_object_get(e, "result"), err)) {
            json_decref(e);
            stmt_done(s, st);
            json_decref(out);
            json_decref(exps);
            json_decref(counts);
            return NULL;
        }
        const char *status = json_string_value(json_object_get(e, "status"));
        if (status)
            json_object_set_new(counts, status, json_integer(json_integer_value(json_object_get(counts, status)) + 1));
        json_array_append_new(exps, e);
    }
    stmt_done(s, st);
    if (rc != SQLITE_DONE) {
        db_error(err, s, "reading the sweep's experiments");
        json_decref(out);
        json_decref(exps);
        json_decref(counts);
        return NULL;
    }
    json_object_set_new(out, "experiments", exps);
    json_object_set_new(out, "counts", counts);
    return out;
}

int store_count_by_status(store_t *s, store_counts_t *out, sl_error_t *err) {
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st = NULL;
    if (prepare(s, "SELECT status, count(*) FROM experiments GROUP BY status", &st, err))
        return SL_E_DB;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *status = (const char *)sqlite3_column_text(st, 0);
        long long n = sqlite3_column_int64(st, 1);
        if (!status) continue;
        if (!strcmp(status, "queued")) out->queued = n;
        else if (!strcmp(status, "running")) out->running = n;
        else if (!strcmp(status, "done")) out->done = n;
        else if (!strcmp(status, "failed")) out->failed = n;
        else if (!strcmp(status, "cancelled")) out->cancelled = n;
    }
    stmt_done(s, st);
    return rc == SQLITE_DONE ? SL_OK : db_error(err, s, "counting experiments");
}
