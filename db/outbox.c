/* outbox.c — the push outbox's SQL (see outbox.h). One statement per function, each
 * finalised on its one exit path; no transaction is needed: every change is one row. */
#include "outbox.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store_internal.h"

static int db_error(sl_error_t *err, store_t *s, const char *what) {
    return sl_error_set(err, SL_E_DB, "", "%s: %s", what, sqlite3_errmsg(s->db));
}

/* The store's time format, offset_s from now. */
static void iso_in(double offset_s, char out[32]) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double whole = floor(offset_s);
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)((offset_s - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%.19s.%03dZ", base, (int)(ts.tv_nsec / 1000000) % 1000);
}

/* Prepare sql, bind the texts (NULL binds NULL), step once; changes_out gets the rows changed. */
static int run(store_t *s, const char *sql, const char *what, const char *const *texts, int ntexts, int *changes_out,
               sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    int rc = SL_OK;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = db_error(err, s, what);
        goto done;
    }
    for (int i = 0; i < ntexts; i++) {
        int b = texts[i] ? sqlite3_bind_text(st, i + 1, texts[i], -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i + 1);
        if (b != SQLITE_OK) {
            rc = db_error(err, s, what);
            goto done;
        }
    }
    if (sqlite3_step(st) != SQLITE_DONE) {
        rc = db_error(err, s, what);
        goto done;
    }
    if (changes_out)
        *changes_out = sqlite3_changes(s->db);
done:
    sqlite3_finalize(st);
    return rc;
}

int store_outbox_add(store_t *s, const char *experiment_id, sl_error_t *err) {
    char now[32];
    iso_in(0, now);
    const char *texts[] = {experiment_id, now};
    return run(s,
               "INSERT INTO outbox (experiment_id, attempts, next_attempt_at, enqueued_at)"
               " SELECT id, 0, ?2, ?2 FROM experiments WHERE id=?1 AND status IN ('done','failed')"
               " ON CONFLICT(experiment_id) DO NOTHING",
               "adding to the outbox", texts, 2, NULL, err);
}

int store_outbox_next(store_t *s, bool due_only, char id_out[64], sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    int out = -1;
    char now[32];
    iso_in(0, now);
    if (sqlite3_prepare_v2(s->db,
                           "SELECT experiment_id FROM outbox WHERE next_attempt_at IS NOT NULL"
                           " AND (?1 IS NULL OR next_attempt_at <= ?1) ORDER BY next_attempt_at, rowid LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK ||
        (due_only ? sqlite3_bind_text(st, 1, now, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, 1)) != SQLITE_OK) {
        db_error(err, s, "reading the outbox");
        goto done;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        snprintf(id_out, 64, "%s", (const char *)sqlite3_column_text(st, 0));
        out = 1;
    } else if (rc == SQLITE_DONE) {
        out = 0;
    } else {
        db_error(err, s, "reading the outbox");
    }
done:
    sqlite3_finalize(st);
    return out;
}

int store_outbox_remove(store_t *s, const char *experiment_id, sl_error_t *err) {
    const char *texts[] = {experiment_id};
    return run(s, "DELETE FROM outbox WHERE experiment_id=?1", "removing from the outbox", texts, 1, NULL, err);
}

int store_outbox_defer(store_t *s, const char *experiment_id, double delay_s, const char *error, sl_error_t *err) {
    char at[32];
    iso_in(delay_s, at);
    const char *texts[] = {experiment_id, at, error};
    return run(s,
               "UPDATE outbox SET attempts=attempts+1, next_attempt_at=?2, last_error=?3"
               " WHERE experiment_id=?1",
               "deferring an outbox entry", texts, 3, NULL, err);
}

int store_outbox_give_up(store_t *s, const char *experiment_id, const char *error, sl_error_t *err) {
    const char *texts[] = {experiment_id, error};
    return run(s,
               "UPDATE outbox SET attempts=attempts+1, next_attempt_at=NULL, last_error=?2 WHERE experiment_id=?1",
               "giving up an outbox entry", texts, 2, NULL, err);
}

int store_outbox_get(store_t *s, const char *experiment_id, outbox_entry_t *out, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    int rc = SL_OK;
    memset(out, 0, sizeof *out);
    if (sqlite3_prepare_v2(s->db,
                           "SELECT attempts, next_attempt_at IS NULL, last_error FROM outbox WHERE experiment_id=?",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, experiment_id, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
        rc = db_error(err, s, "reading the outbox");
        goto done;
    }
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const char *last = (const char *)sqlite3_column_text(st, 2);
        out->present = true;
        out->attempts = sqlite3_column_int(st, 0);
        out->given_up = sqlite3_column_int(st, 1) != 0;
        snprintf(out->last_error, sizeof out->last_error, "%s", last ? last : "");
    } else if (step != SQLITE_DONE) {
        rc = db_error(err, s, "reading the outbox");
    }
done:
    sqlite3_finalize(st);
    return rc;
}

int store_outbox_count(store_t *s, long long *pending, long long *given_up, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    int rc = SL_OK;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT count(*) FILTER (WHERE next_attempt_at IS NOT NULL),"
                           " count(*) FILTER (WHERE next_attempt_at IS NULL) FROM outbox",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        rc = db_error(err, s, "counting the outbox");
        goto done;
    }
    *pending = sqlite3_column_int64(st, 0);
    *given_up = sqlite3_column_int64(st, 1);
done:
    sqlite3_finalize(st);
    return rc;
}
