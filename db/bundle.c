/* bundle.c — export and import of result bundles (see bundle.h).
 *
 * Export reads in one transaction and reuses the store's own experiment and machine JSON,
 * so a bundle holds exactly what GET /api/experiments/{id} and /api/machines/{id} show.
 * Import is in three steps, in this order: check the whole document (types, ranges, ids,
 * references inside it) without touching the store; then BEGIN IMMEDIATE; then, per
 * experiment, compare with what the store holds (identical: unchanged; different: 409,
 * ROLLBACK) or insert. An experiment's identity is its id; its content is every stored
 * column, its repetitions and its op events, numbers compared as numbers.
 * It must not write anything before the check is complete, nor commit a partial import. */
#include "bundle.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_internal.h"

#define BUNDLE_ID_MAX 63 /* ids fit the store's 64-byte id buffers */

/* ---- small helpers (store.c's are private to it) ---- */

static int db_error(sl_error_t *err, store_t *s, const char *what) {
    return sl_error_set(err, SL_E_DB, "", "%s: %s", what, sqlite3_errmsg(s->db));
}

static int exec(store_t *s, const char *sql, sl_error_t *err) {
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sl_error_set(err, SL_E_DB, "", "%s: %s", sql, msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return SL_E_DB;
    }
    return SL_OK;
}

static int prepare(store_t *s, const char *sql, sqlite3_stmt **st, sl_error_t *err) {
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return db_error(err, s, "prepare");
    }
    return SL_OK;
}


/* Bind helpers: each returns the SQLite code; callers fold them with `|`-free checks. */
static int bind_text(sqlite3_stmt *st, int i, const char *v) {
    return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int bind_json_text(sqlite3_stmt *st, int i, json_t *v) {
    return json_is_string(v) ? bind_text(st, i, json_string_value(v)) : sqlite3_bind_null(st, i);
}

static int bind_json_real(sqlite3_stmt *st, int i, json_t *v) {
    return json_is_number(v) ? sqlite3_bind_double(st, i, json_number_value(v)) : sqlite3_bind_null(st, i);
}

static int bind_json_int(sqlite3_stmt *st, int i, json_t *v) {
    return json_is_integer(v) ? sqlite3_bind_int64(st, i, (sqlite3_int64)json_integer_value(v))
                              : sqlite3_bind_null(st, i);
}

/* An op's key within its rep, for matching a call to its op: a plan has one op of a kind
 * per device, stream and chunk. */
static void op_key(char *out, size_t n, json_int_t device, json_int_t stream, json_int_t chunk, const char *op) {
    snprintf(out, n, "%lld/%lld/%lld/%s", (long long)device, (long long)stream, (long long)chunk, op ? op : "");
}

static void op_key_of(char *out, size_t n, json_t *o) {
    op_key(out, n, json_integer_value(json_object_get(o, "device")), json_integer_value(json_object_get(o, "stream")),
           json_integer_value(json_object_get(o, "chunk")), json_string_value(json_object_get(o, "op")));
}

/* ---- export ---- */

const char *const bundle_ops_names[] = {"all", "median", "none"};

/* The repetitions' ops of one experiment: [{"rep": 0, "ops": [...]}, ... reps-1], or with
 * only_rep >= 0 that rep's alone: [{"rep": only_rep, "ops": [...]}]. */
static json_t *timelines_of(store_t *s, const char *id, int reps, int only_rep, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    json_t *out = json_array();
    if (!out) {
        sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting %s", id);
        return NULL;
    }
    for (int k = only_rep < 0 ? 0 : only_rep; k < (only_rep < 0 ? reps : only_rep + 1); k++) {
        json_t *rep = json_pack("{s:i, s:[]}", "rep", k, "ops");
        if (!rep || json_array_append_new(out, rep)) {
            sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting %s", id);
            goto error;
        }
    }
    if (prepare(s,
                "SELECT rep, device, stream, chunk, op, start_us, end_us, bytes, call_start_us, call_end_us FROM op_events"
                " WHERE experiment_id=?1 AND (?2 < 0 OR rep=?2) ORDER BY rep, rowid",
                &st, err))
        goto error;
    if (bind_text(st, 1, id) != SQLITE_OK || sqlite3_bind_int(st, 2, only_rep) != SQLITE_OK) {
        db_error(err, s, "exporting the timeline");
        goto error;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int k = sqlite3_column_int(st, 0);
        if (k < 0 || k >= reps) {
            sl_error_set(err, SL_E_DB, "", "experiment %s has op events of rep %d beyond its %d reps", id, k, reps);
            goto error;
        }
        if (only_rep >= 0)
            k = 0; /* the one entry */
        json_t *c = NULL;
        bool has_call = false;
        json_t *o = store_event_json(st, 1, &c, &has_call);
        json_t *entry = json_array_get(out, (size_t)k);
        if (!o || json_array_append_new(json_object_get(entry, "ops"), o)) {
            json_decref(c);
            sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting %s", id);
            goto error;
        }
        /* the op's host call, beside the ops as GET .../timeline gives it: "calls" */
        if (has_call) {
            if (!json_object_get(entry, "calls"))
                json_object_set_new(entry, "calls", json_array());
            if (!c || json_array_append_new(json_object_get(entry, "calls"), c)) {
                sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting %s", id);
                goto error;
            }
        }
    }
    if (rc != SQLITE_DONE) {
        db_error(err, s, "exporting the timeline");
        goto error;
    }
    sqlite3_finalize(st);
    return out;
error:
    sqlite3_finalize(st);
    json_decref(out);
    return NULL;
}

/* {"id", "created_at", "request"} of one sweep, or NULL (SL_E_NOTFOUND when absent). */
static json_t *sweep_entry(store_t *s, const char *sweep_id, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    json_t *out = NULL;
    if (prepare(s, "SELECT created_at, request FROM sweeps WHERE id=?", &st, err))
        return NULL;
    int rc = bind_text(st, 1, sweep_id) == SQLITE_OK ? sqlite3_step(st) : SQLITE_ERROR;
    if (rc == SQLITE_ROW) {
        const char *created = (const char *)sqlite3_column_text(st, 0);
        const char *text = (const char *)sqlite3_column_text(st, 1);
        json_t *request = text ? json_loads(text, 0, NULL) : NULL;
        out = json_pack("{s:s, s:s, s:o}", "id", sweep_id, "created_at", created ? created : "", "request",
                        request ? request : json_object());
        if (!out)
            sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting sweep %s", sweep_id);
    } else if (rc == SQLITE_DONE) {
        sl_error_set(err, SL_E_NOTFOUND, "sweep", "no sweep %s", sweep_id);
    } else {
        db_error(err, s, "reading the sweep");
    }
    sqlite3_finalize(st);
    return out;
}

/* Append the ids of a sweep's experiments, in sweep order. */
static int sweep_experiment_ids(store_t *s, const char *sweep_id, json_t *ids, sl_error_t *err) {
    sqlite3_stmt *st = NULL;
    if (prepare(s, "SELECT id FROM experiments WHERE sweep_id=? ORDER BY sweep_index, seq", &st, err))
        return SL_E_DB;
    int rc = bind_text(st, 1, sweep_id) == SQLITE_OK ? SQLITE_ROW : SQLITE_ERROR;
    int out = SL_OK;
    while (rc == SQLITE_ROW && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (json_array_append_new(ids, json_string((const char *)sqlite3_column_text(st, 0)))) {
            out = sl_error_set(err, SL_E_NOMEM, "", "out of memory listing sweep %s", sweep_id);
            break;
        }
    }
    if (out == SL_OK && rc != SQLITE_DONE)
        out = db_error(err, s, "listing the sweep's experiments");
    sqlite3_finalize(st);
    return out;
}

/* Add one experiment (and, once each, its machine and sweep) to the bundle's parts. */
static int export_one(store_t *s, const char *id, bundle_ops_t ops, json_t *parts, json_t *seen, sl_error_t *err) {
    json_t *exps = json_object_get(parts, "experiments"), *machines = json_object_get(parts, "machines");
    json_t *sweeps = json_object_get(parts, "sweeps"), *timelines = json_object_get(parts, "timelines");
    char key[96];
    snprintf(key, sizeof key, "e/%s", id);
    if (json_object_get(seen, key))
        return SL_OK;
    json_t *exp = store_experiment_json(s, id, err);
    if (!exp) {
        if (err && err->code == SL_E_NOTFOUND)
            snprintf(err->field, sizeof err->field, "experiment");
        return err ? (int)err->code : SL_E_NOTFOUND;
    }
    int rc = SL_OK;
    const char *machine_id = json_string_value(json_object_get(exp, "machine_id"));
    const char *sweep_id = json_string_value(json_object_get(exp, "sweep_id"));
    json_t *result = json_object_get(exp, "result");
    if (json_object_set_new(seen, key, json_true()) || json_array_append(exps, exp))
        rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting %s", id);
    snprintf(key, sizeof key, "m/%s", machine_id ? machine_id : "");
    if (rc == SL_OK && machine_id && !json_object_get(seen, key)) {
        json_t *m = store_machine_json(s, machine_id, err);
        if (!m)
            rc = err ? (int)err->code : SL_E_DB;
        else if (json_object_set_new(seen, key, json_true()) || json_array_append_new(machines, m))
            rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting %s", id);
    }
    snprintf(key, sizeof key, "s/%s", sweep_id ? sweep_id : "");
    if (rc == SL_OK && sweep_id && !json_object_get(seen, key)) {
        json_t *sw = sweep_entry(s, sweep_id, err);
        if (!sw)
            rc = err ? (int)err->code : SL_E_DB;
        else if (json_object_set_new(seen, key, json_true()) || json_array_append_new(sweeps, sw))
            rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting %s", id);
    }
    if (rc == SL_OK && json_is_object(result) && ops != BUNDLE_OPS_NONE) {
        int only_rep = ops == BUNDLE_OPS_MEDIAN ? (int)json_integer_value(json_object_get(result, "median_rep")) : -1;
        json_t *tl = timelines_of(s, id, (int)json_integer_value(json_object_get(result, "reps")), only_rep, err);
        if (!tl)
            rc = err ? (int)err->code : SL_E_DB;
        else if (json_object_set_new(timelines, id, tl))
            rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting %s", id);
    }
    json_decref(exp);
    return rc;
}

json_t *store_export_bundle(store_t *s, const char *const *ids, size_t n, const char *sweep_id, sl_error_t *err) {
    return store_export_bundle_ops(s, ids, n, sweep_id, BUNDLE_OPS_ALL, err);
}

json_t *store_export_bundle_ops(store_t *s, const char *const *ids, size_t n, const char *sweep_id, bundle_ops_t ops,
                                sl_error_t *err) {
    json_t *parts = json_pack("{s:[], s:[], s:[], s:{}}", "machines", "sweeps", "experiments", "timelines");
    json_t *seen = json_object(), *list = json_array(), *out = NULL;
    bool in_txn = false;
    int rc = SL_OK;
    if (!parts || !seen || !list) {
        sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting");
        goto done;
    }
    if (exec(s, "BEGIN", err))
        goto done;
    in_txn = true;
    if (sweep_id) {
        json_t *sw = sweep_entry(s, sweep_id, err);
        if (!sw)
            goto done;
        char key[96];
        snprintf(key, sizeof key, "s/%s", sweep_id);
        if (json_array_append_new(json_object_get(parts, "sweeps"), sw) || json_object_set_new(seen, key, json_true()) ||
            sweep_experiment_ids(s, sweep_id, list, err))
            goto done;
    } else {
        for (size_t i = 0; i < n; i++) {
            json_t *id = json_string(ids[i]);
            if (!id) { /* not UTF-8: no stored id is like that */
                sl_error_set(err, SL_E_NOTFOUND, "experiment", "no experiment with that id");
                rc = SL_E_NOTFOUND;
                goto done;
            }
            if (json_array_append_new(list, id)) {
                sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting");
                goto done;
            }
        }
    }
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        if ((rc = export_one(s, json_string_value(v), ops, parts, seen, err)))
            goto done;
    }
    out = json_pack("{s:s, s:i, s:O, s:O, s:O, s:O}", "format", BUNDLE_FORMAT, "version", BUNDLE_VERSION, "machines",
                    json_object_get(parts, "machines"), "sweeps", json_object_get(parts, "sweeps"), "experiments",
                    json_object_get(parts, "experiments"), "timelines", json_object_get(parts, "timelines"));
    /* "ops" says what the timelines lack; a full bundle leaves it out, as bundles did before it */
    if (out && ops != BUNDLE_OPS_ALL && json_object_set_new(out, "ops", json_string(bundle_ops_names[ops]))) {
        json_decref(out);
        out = NULL;
    }
    if (!out)
        sl_error_set(err, SL_E_NOMEM, "", "out of memory exporting");
done:
    if (in_txn && exec(s, out ? "COMMIT" : "ROLLBACK", out ? err : NULL) && out) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        json_decref(out);
        out = NULL;
    }
    json_decref(parts);
    json_decref(seen);
    json_decref(list);
    return out;
}

/* ---- describing a bundle ---- */

/* A machine's GPUs in a few words: "NAME", "N × NAME" where several share a name, "A + B"
 * where they differ; NULL where it names none. The caller frees it. */
static char *gpus_name(json_t *gpus) {
    size_t n = 0, i, len = 1;
    const char *first = NULL;
    bool same = true;
    json_t *g;
    json_array_foreach(gpus, i, g) {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (!name || !name[0])
            continue;
        same = same && (!first || strcmp(name, first) == 0);
        first = first ? first : name;
        len += strlen(name) + 3;
        n++;
    }
    if (n == 0)
        return NULL;
    size_t cap = len + 24;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    if (n > 1 && same) {
        snprintf(out, cap, "%zu \u00d7 %s", n, first);
        return out;
    }
    out[0] = '\0'; /* one name, or every name joined */
    json_array_foreach(gpus, i, g) {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (!name || !name[0])
            continue;
        if (out[0])
            strcat(out, " + ");
        strcat(out, name);
    }
    return out;
}

/* "label (GPUs)", or whichever of them the machine has, else its host name. */
static json_t *machine_name(json_t *m) {
    const char *label = json_string_value(json_object_get(m, "label"));
    char *gpu = gpus_name(json_object_get(m, "gpus"));
    const char *host = json_string_value(json_object_get(m, "hostname"));
    label = label && label[0] ? label : NULL;
    json_t *out = label && gpu ? json_sprintf("%s (%s)", label, gpu)
                               : json_string(label ? label : gpu ? gpu : host ? host : "?");
    free(gpu);
    return out;
}

json_t *bundle_describe(json_t *bundle, sl_error_t *err) {
    json_t *machines = json_object_get(bundle, "machines"), *exps = json_object_get(bundle, "experiments");
    json_t *ops = json_object_get(bundle, "ops");
    if (!json_is_object(bundle) || !json_is_string(json_object_get(bundle, "format")) ||
        strcmp(json_string_value(json_object_get(bundle, "format")), BUNDLE_FORMAT) != 0 || !json_is_array(machines) ||
        !json_is_array(exps)) {
        sl_error_set(err, SL_E_INVALID, "format", "not a streamlab bundle (\"format\": \"" BUNDLE_FORMAT "\")");
        return NULL;
    }
    json_t *names = json_array();
    const char *last = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(machines, i, x) {
        if (names && json_array_append_new(names, machine_name(x))) {
            json_decref(names);
            names = NULL;
        }
    }
    json_array_foreach(exps, i, x) { /* ISO 8601 UTC times compare as strings */
        const char *t = json_string_value(json_object_get(x, "finished_at"));
        if (!t)
            t = json_string_value(json_object_get(x, "created_at"));
        if (t && strlen(t) >= 10 && (!last || strcmp(t, last) > 0))
            last = t;
    }
    json_t *out = names ? json_pack("{s:o, s:I, s:o, s:s}", "machines", names, "experiments",
                                    (json_int_t)json_array_size(exps), "measured",
                                    last ? json_stringn(last, 10) : json_null(), "ops",
                                    json_is_string(ops) ? json_string_value(ops) : bundle_ops_names[BUNDLE_OPS_ALL])
                        : NULL;
    if (!out)
        sl_error_set(err, SL_E_NOMEM, "", "out of memory describing a bundle");
    return out;
}

/* ---- import: checking the document ---- */

typedef enum { J_STRING, J_INT, J_NUMBER, J_BOOL, J_OBJECT, J_ARRAY } jkind_t;
enum { OPTIONAL = 0, REQUIRED = 1 };

static const char *const kind_names[] = {"a string", "an integer", "a number", "true or false", "an object",
                                         "an array"};

static bool kind_is(json_t *v, jkind_t k) {
    switch (k) {
    case J_STRING: return json_is_string(v);
    case J_INT: return json_is_integer(v);
    case J_NUMBER: return json_is_number(v);
    case J_BOOL: return json_is_boolean(v);
    case J_OBJECT: return json_is_object(v);
    case J_ARRAY: return json_is_array(v);
    }
    return false;
}

/* SL_E_INVALID with field "where.key" (or "where" when key is NULL). */
static int invalid(sl_error_t *err, const char *where, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int invalid(sl_error_t *err, const char *where, const char *key, const char *fmt, ...) {
    char field[128], msg[400];
    if (key)
        snprintf(field, sizeof field, "%s%s%s", where, where[0] ? "." : "", key);
    else
        snprintf(field, sizeof field, "%s", where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sl_error_set(err, SL_E_INVALID, field, "%s %s", field[0] ? field : "the bundle", msg);
}

/* obj[key] of kind k; a missing key or null is NULL in *out (an error when required). */
static int field_get(json_t *obj, const char *where, const char *key, jkind_t k, int required, json_t **out,
                     sl_error_t *err) {
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return required ? invalid(err, where, key, "is missing (it must be %s)", kind_names[k]) : SL_OK;
    if (!kind_is(v, k))
        return invalid(err, where, key, "must be %s%s", kind_names[k], required ? "" : " or null");
    *out = v;
    return SL_OK;
}

/* An integer field within [lo, hi]. */
static int int_get(json_t *obj, const char *where, const char *key, int required, long long lo, long long hi,
                   json_t **out, sl_error_t *err) {
    int rc = field_get(obj, where, key, J_INT, required, out, err);
    if (rc == SL_OK && *out && (json_integer_value(*out) < lo || json_integer_value(*out) > hi))
        return invalid(err, where, key, "must be from %lld to %lld (got %lld)", lo, hi,
                       (long long)json_integer_value(*out));
    return rc;
}

/* Ids are what streamlab makes ("e-…", "s-…", "m-…"): short, and safe in a URL path. */
static int id_get(json_t *obj, const char *where, const char *key, int required, json_t **out, sl_error_t *err) {
    int rc = field_get(obj, where, key, J_STRING, required, out, err);
    if (rc || !*out)
        return rc;
    const char *id = json_string_value(*out);
    size_t len = strlen(id);
    if (len == 0 || len > BUNDLE_ID_MAX || strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") != len)
        return invalid(err, where, key, "must be an id of 1 to %d letters, digits and - _ . :", BUNDLE_ID_MAX);
    return SL_OK;
}

/* Times are the store's ISO 8601 UTC strings ("2025-01-31T12:00:00.000Z"). */
static int time_get(json_t *obj, const char *where, const char *key, int required, json_t **out, sl_error_t *err) {
    int rc = field_get(obj, where, key, J_STRING, required, out, err);
    if (rc || !*out)
        return rc;
    const char *t = json_string_value(*out);
    size_t len = strlen(t);
    bool ok = len >= 19 && len <= 40 && t[4] == '-' && t[7] == '-' && t[10] == 'T' && t[13] == ':' && t[16] == ':';
    for (int i = 0; ok && i < 19; i++)
        ok = (i == 4 || i == 7 || i == 10 || i == 13 || i == 16) || (t[i] >= '0' && t[i] <= '9');
    return ok ? SL_OK : invalid(err, where, key, "must be an ISO 8601 time like 2025-01-31T12:00:00.000Z");
}

static int string_in(json_t *obj, const char *where, const char *key, int required, const char *const *names,
                     int n, json_t **out, sl_error_t *err) {
    int rc = field_get(obj, where, key, J_STRING, required, out, err);
    if (rc == SL_OK && *out && sl_enum_parse(names, n, json_string_value(*out)) < 0)
        return invalid(err, where, key, "has an unknown value \"%.40s\"", json_string_value(*out));
    return rc;
}

static int check_machine(json_t *m, const char *where, sl_error_t *err) {
    json_t *v = NULL;
    static const char *const texts[] = {"label", "cpu", "kernel", "cuda_runtime", "cuda_driver", "driver_version"};
    if (!json_is_object(m))
        return invalid(err, where, NULL, "must be an object");
    int rc = id_get(m, where, "id", REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = field_get(m, where, "hostname", J_STRING, REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = field_get(m, where, "backend", J_STRING, REQUIRED, &v, err);
    for (size_t i = 0; rc == SL_OK && i < sizeof texts / sizeof texts[0]; i++)
        rc = field_get(m, where, texts[i], J_STRING, OPTIONAL, &v, err);
    if (rc == SL_OK)
        rc = field_get(m, where, "gpus", J_ARRAY, OPTIONAL, &v, err);
    size_t i;
    json_t *g;
    char at[96];
    json_array_foreach(v, i, g) {
        snprintf(at, sizeof at, "%s.gpus[%zu]", where, i);
        if (rc == SL_OK && !json_is_object(g))
            rc = invalid(err, at, NULL, "must be an object");
    }
    if (rc == SL_OK)
        rc = int_get(m, where, "device_count", OPTIONAL, 0, SPEC_MAX_DEVICES, &v, err);
    if (rc == SL_OK)
        rc = time_get(m, where, "first_seen", OPTIONAL, &v, err);
    if (rc == SL_OK)
        rc = time_get(m, where, "last_seen", OPTIONAL, &v, err);
    return rc;
}

static int check_sweep(json_t *sw, const char *where, sl_error_t *err) {
    json_t *v;
    if (!json_is_object(sw))
        return invalid(err, where, NULL, "must be an object");
    int rc = id_get(sw, where, "id", REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = time_get(sw, where, "created_at", REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = field_get(sw, where, "request", J_OBJECT, REQUIRED, &v, err);
    return rc;
}

/* The spec fields the store keeps in columns; the full check is check_spec's. */
static int check_spec_columns(json_t *spec, const char *where, sl_error_t *err) {
    json_t *v;
    int rc = string_in(spec, where, "variant", REQUIRED, variant_names, VARIANT__COUNT, &v, err);
    if (rc == SL_OK)
        rc = int_get(spec, where, "size", REQUIRED, 1, LLONG_MAX, &v, err);
    if (rc == SL_OK)
        rc = int_get(spec, where, "streams", REQUIRED, 1, SPEC_MAX_STREAMS, &v, err);
    if (rc == SL_OK)
        rc = field_get(spec, where, "label", J_STRING, OPTIONAL, &v, err);
    if (rc == SL_OK)
        rc = field_get(spec, where, "devices", J_ARRAY, OPTIONAL, &v, err);
    if (rc == SL_OK && v && (json_array_size(v) < 1 || !json_is_integer(json_array_get(v, 0))))
        rc = invalid(err, where, "devices", "must be a non-empty array of device indexes");
    return rc;
}

static int check_result(json_t *r, const char *where, sl_error_t *err) {
    static const char *const numbers[] = {"h2d_ms", "kernel_ms", "d2h_ms", "host_ms", "h2d_gbps", "d2h_gbps",
                                          "overlap"};
    static const char *const optional_numbers[] = {"floor_ms", "efficiency", "predicted_ms", "prediction_error"};
    static const char *const stats[] = {"median", "min", "max", "mean", "stddev"};
    json_t *v = NULL, *reps = NULL, *total = NULL;
    char at[128];
    int rc = string_in(r, where, "backend", REQUIRED, backend_names, BACKEND__COUNT, &v, err);
    if (rc == SL_OK)
        rc = int_get(r, where, "reps", REQUIRED, 1, SPEC_MAX_REPS > REPS_AUTO_MAX ? SPEC_MAX_REPS : REPS_AUTO_MAX,
                     &reps, err);
    if (rc == SL_OK)
        rc = int_get(r, where, "median_rep", REQUIRED, 0, json_integer_value(reps) - 1, &v, err);
    if (rc == SL_OK)
        rc = field_get(r, where, "total_ms", J_OBJECT, REQUIRED, &total, err);
    snprintf(at, sizeof at, "%.100s.total_ms", where);
    for (size_t i = 0; rc == SL_OK && i < sizeof stats / sizeof stats[0]; i++)
        rc = field_get(total, at, stats[i], J_NUMBER, REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = field_get(r, where, "reps_ms", J_ARRAY, REQUIRED, &v, err);
    if (rc == SL_OK && json_array_size(v) != (size_t)json_integer_value(reps))
        rc = invalid(err, where, "reps_ms", "must hold one number per rep (%lld), not %zu",
                     (long long)json_integer_value(reps), json_array_size(v));
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
        if (rc == SL_OK && !json_is_number(x)) {
            snprintf(at, sizeof at, "%.90s.reps_ms[%zu]", where, i);
            rc = invalid(err, at, NULL, "must be a number");
        }
    }
    for (i = 0; rc == SL_OK && i < sizeof numbers / sizeof numbers[0]; i++)
        rc = field_get(r, where, numbers[i], J_NUMBER, REQUIRED, &v, err);
    for (i = 0; rc == SL_OK && i < sizeof optional_numbers / sizeof optional_numbers[0]; i++)
        rc = field_get(r, where, optional_numbers[i], J_NUMBER, OPTIONAL, &v, err);
    if (rc == SL_OK)
        rc = field_get(r, where, "verified", J_BOOL, REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = field_get(r, where, "verification", J_STRING, REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = field_get(r, where, "extra", J_OBJECT, OPTIONAL, &v, err);
    return rc;
}

static int check_experiment(json_t *e, const char *where, store_spec_check_fn check_spec, sl_error_t *err) {
    static const char *const statuses[] = {"done", "failed", "cancelled", "queued", "running"};
    json_t *v = NULL, *status = NULL, *spec = NULL, *result = NULL, *sweep = NULL;
    char at[128];
    if (!json_is_object(e))
        return invalid(err, where, NULL, "must be an object");
    int rc = id_get(e, where, "id", REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = string_in(e, where, "status", REQUIRED, statuses, 5, &status, err);
    if (rc == SL_OK && sl_enum_parse(statuses, 3, json_string_value(status)) < 0)
        rc = invalid(err, where, "status", "is %s: only done, failed and cancelled experiments are imported",
                     json_string_value(status));
    if (rc == SL_OK)
        rc = id_get(e, where, "machine_id", REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = id_get(e, where, "sweep_id", OPTIONAL, &sweep, err);
    if (rc == SL_OK)
        rc = int_get(e, where, "sweep_index", sweep ? REQUIRED : OPTIONAL, 0, INT_MAX, &v, err);
    if (rc == SL_OK && !sweep && v)
        rc = invalid(err, where, "sweep_index", "must be null when sweep_id is");
    if (rc == SL_OK)
        rc = time_get(e, where, "created_at", REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = time_get(e, where, "started_at", OPTIONAL, &v, err);
    if (rc == SL_OK)
        rc = time_get(e, where, "finished_at", OPTIONAL, &v, err);
    if (rc == SL_OK)
        rc = field_get(e, where, "error", J_STRING, OPTIONAL, &v, err);
    if (rc == SL_OK)
        rc = field_get(e, where, "spec", J_OBJECT, REQUIRED, &spec, err);
    snprintf(at, sizeof at, "%s.spec", where);
    if (rc == SL_OK)
        rc = check_spec_columns(spec, at, err);
    if (rc == SL_OK && check_spec && (rc = check_spec(spec, err)) && err) {
        char field[sizeof err->field];
        snprintf(field, sizeof field, "%.32s", err->field);
        snprintf(err->field, sizeof err->field, "%.30s%s%.32s", at, field[0] ? "." : "", field);
    }
    if (rc == SL_OK)
        rc = field_get(e, where, "result", J_OBJECT, OPTIONAL, &result, err);
    bool done = rc == SL_OK && strcmp(json_string_value(status), "done") == 0;
    if (rc == SL_OK && done && !result)
        rc = invalid(err, where, "result", "is missing: a done experiment has a result");
    if (rc == SL_OK && !done && result)
        rc = invalid(err, where, "result", "must be null: a %s experiment has no result", json_string_value(status));
    snprintf(at, sizeof at, "%s.result", where);
    if (rc == SL_OK && result)
        rc = check_result(result, at, err);
    return rc;
}

/* What an op and its call both hold: the op's device, stream, chunk and kind, and two times. */
static int check_event(json_t *e, const char *where, sl_error_t *err) {
    json_t *v;
    if (!json_is_object(e))
        return invalid(err, where, NULL, "must be an object");
    int rc = int_get(e, where, "device", REQUIRED, 0, SPEC_MAX_DEVICES - 1, &v, err);
    if (rc == SL_OK)
        rc = int_get(e, where, "stream", REQUIRED, -1, INT_MAX, &v, err);
    if (rc == SL_OK)
        rc = int_get(e, where, "chunk", REQUIRED, 0, INT_MAX, &v, err);
    if (rc == SL_OK)
        rc = string_in(e, where, "op", REQUIRED, op_names, OP__COUNT, &v, err);
    if (rc == SL_OK)
        rc = field_get(e, where, "start_us", J_NUMBER, REQUIRED, &v, err);
    if (rc == SL_OK)
        rc = field_get(e, where, "end_us", J_NUMBER, REQUIRED, &v, err);
    return rc;
}

static int check_op(json_t *op, const char *where, sl_error_t *err) {
    json_t *v;
    int rc = check_event(op, where, err);
    if (rc == SL_OK)
        rc = int_get(op, where, "bytes", OPTIONAL, 0, LLONG_MAX, &v, err);
    return rc;
}

/* A rep's "calls" (optional): the issuing thread's call of ops of that rep, each naming
 * its op (device, stream, chunk, op) once, with start_us <= end_us. */
static int check_calls(json_t *calls, json_t *ops, const char *where, sl_error_t *err) {
    json_t *keys = json_object(), *c, *op;
    char at[200], key[96];
    size_t i;
    int rc = keys ? SL_OK : sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the bundle");
    json_array_foreach(ops, i, op) {
        op_key_of(key, sizeof key, op);
        if (rc == SL_OK)
            json_object_set_new(keys, key, json_false());
    }
    if (rc == SL_OK && !json_is_array(calls))
        rc = invalid(err, where, "calls", "must be an array of the ops' host calls");
    json_array_foreach(calls, i, c) {
        if (rc)
            break;
        snprintf(at, sizeof at, "%.150s.calls[%zu]", where, i);
        if ((rc = check_event(c, at, err)))
            break;
        if (json_number_value(json_object_get(c, "end_us")) < json_number_value(json_object_get(c, "start_us"))) {
            rc = invalid(err, at, "end_us", "is before start_us");
            break;
        }
        op_key_of(key, sizeof key, c);
        json_t *seen = json_object_get(keys, key);
        if (!seen || json_is_true(seen)) {
            rc = invalid(err, at, NULL, "%s", seen ? "repeats a call of its op" : "names no op of its rep");
            break;
        }
        json_object_set_new(keys, key, json_true());
    }
    json_decref(keys);
    return rc;
}

/* timelines[id]: [{"rep": K, "ops": [...], "calls": [...]}], each rep of a done experiment of
 * the bundle once (with "ops": "median", the median rep's alone); "calls" optional. */
static int check_timeline(const char *id, json_t *reps_list, json_t *by_id, bundle_ops_t mode, sl_error_t *err) {
    char where[128], at[160];
    snprintf(where, sizeof where, "timelines.%.64s", id);
    json_t *e = json_object_get(by_id, id);
    json_t *result = json_object_get(e, "result");
    if (!e)
        return invalid(err, where, NULL, "belongs to no experiment of the bundle");
    if (!json_is_object(result))
        return invalid(err, where, NULL, "belongs to an experiment without a result");
    if (!json_is_array(reps_list))
        return invalid(err, where, NULL, "must be an array of {\"rep\", \"ops\"}");
    long long reps = json_integer_value(json_object_get(result, "reps"));
    char *seen = calloc((size_t)reps, 1);
    if (!seen)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the bundle");
    int rc = SL_OK;
    size_t i, j;
    json_t *r, *rep, *ops, *op;
    json_array_foreach(reps_list, i, r) {
        snprintf(at, sizeof at, "%s[%zu]", where, i);
        if (!json_is_object(r)) {
            rc = invalid(err, at, NULL, "must be an object {\"rep\", \"ops\"}");
            break;
        }
        if ((rc = int_get(r, at, "rep", REQUIRED, 0, reps - 1, &rep, err)) ||
            (rc = field_get(r, at, "ops", J_ARRAY, REQUIRED, &ops, err)))
            break;
        if (seen[json_integer_value(rep)]++) {
            rc = invalid(err, at, "rep", "repeats rep %lld", (long long)json_integer_value(rep));
            break;
        }
        long long median = json_integer_value(json_object_get(result, "median_rep"));
        if (mode == BUNDLE_OPS_MEDIAN && json_integer_value(rep) != median) {
            rc = invalid(err, at, "rep", "is %lld: a bundle with \"ops\": \"median\" holds only the median rep (%lld)",
                         (long long)json_integer_value(rep), median);
            break;
        }
        json_array_foreach(ops, j, op) {
            snprintf(at, sizeof at, "%.100s[%zu].ops[%zu]", where, i, j);
            if ((rc = check_op(op, at, err)))
                break;
        }
        snprintf(at, sizeof at, "%.100s[%zu]", where, i);
        if (rc == SL_OK && json_object_get(r, "calls"))
            rc = check_calls(json_object_get(r, "calls"), ops, at, err);
        if (rc)
            break;
    }
    free(seen);
    return rc;
}

/* The bundle's "ops": which repetitions' ops its timelines hold (absent: all). */
static int check_ops(json_t *b, bundle_ops_t *mode, sl_error_t *err) {
    json_t *v = NULL;
    int rc = string_in(b, "", "ops", OPTIONAL, bundle_ops_names, BUNDLE_OPS__COUNT, &v, err);
    *mode = v ? (bundle_ops_t)sl_enum_parse(bundle_ops_names, BUNDLE_OPS__COUNT, json_string_value(v)) : BUNDLE_OPS_ALL;
    return rc;
}

/* The whole document, before anything is written. by_id: experiment id -> experiment. */
static int check_bundle(json_t *b, json_t *by_id, store_spec_check_fn check_spec, bundle_ops_t *mode,
                        sl_error_t *err) {
    json_t *v = NULL, *machines = NULL, *sweeps = NULL, *exps = NULL, *timelines = NULL;
    char at[64];
    if (!json_is_object(b))
        return invalid(err, "", NULL, "must be a JSON object {\"format\": \"" BUNDLE_FORMAT "\", ...}");
    int rc = field_get(b, "", "format", J_STRING, REQUIRED, &v, err);
    if (rc == SL_OK && strcmp(json_string_value(v), BUNDLE_FORMAT) != 0)
        rc = invalid(err, "", "format", "must be \"" BUNDLE_FORMAT "\"");
    if (rc == SL_OK)
        rc = field_get(b, "", "version", J_INT, REQUIRED, &v, err);
    if (rc == SL_OK && json_integer_value(v) != BUNDLE_VERSION)
        rc = invalid(err, "", "version", "is %lld: this streamlab reads bundles of version %d",
                     (long long)json_integer_value(v), BUNDLE_VERSION);
    if (rc == SL_OK)
        rc = field_get(b, "", "machines", J_ARRAY, REQUIRED, &machines, err);
    if (rc == SL_OK)
        rc = field_get(b, "", "sweeps", J_ARRAY, OPTIONAL, &sweeps, err);
    if (rc == SL_OK)
        rc = field_get(b, "", "experiments", J_ARRAY, REQUIRED, &exps, err);
    if (rc == SL_OK)
        rc = check_ops(b, mode, err);
    if (rc == SL_OK)
        rc = field_get(b, "", "timelines", J_OBJECT, OPTIONAL, &timelines, err);
    if (rc == SL_OK && *mode == BUNDLE_OPS_NONE && json_object_size(timelines) > 0)
        rc = invalid(err, "", "timelines", "must be empty: the bundle's \"ops\" is \"none\"");
    json_t *ids = json_object();
    if (!ids)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the bundle");
    size_t i;
    json_t *x;
    json_array_foreach(machines, i, x) {
        snprintf(at, sizeof at, "machines[%zu]", i);
        if (rc == SL_OK && (rc = check_machine(x, at, err)) == SL_OK) {
            char key[80];
            snprintf(key, sizeof key, "m/%s", json_string_value(json_object_get(x, "id")));
            if (json_object_get(ids, key))
                rc = invalid(err, at, "id", "repeats machine %s", key + 2);
            else if (json_object_set_new(ids, key, json_true()))
                rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the bundle");
        }
    }
    json_array_foreach(sweeps, i, x) {
        snprintf(at, sizeof at, "sweeps[%zu]", i);
        if (rc == SL_OK && (rc = check_sweep(x, at, err)) == SL_OK) {
            char key[80];
            snprintf(key, sizeof key, "s/%s", json_string_value(json_object_get(x, "id")));
            if (json_object_get(ids, key))
                rc = invalid(err, at, "id", "repeats sweep %s", key + 2);
            else if (json_object_set_new(ids, key, json_true()))
                rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the bundle");
        }
    }
    json_array_foreach(exps, i, x) {
        snprintf(at, sizeof at, "experiments[%zu]", i);
        if (rc == SL_OK && (rc = check_experiment(x, at, check_spec, err)) == SL_OK) {
            const char *id = json_string_value(json_object_get(x, "id"));
            if (json_object_get(by_id, id))
                rc = invalid(err, at, "id", "repeats experiment %s", id);
            else if (json_object_set(by_id, id, x))
                rc = sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the bundle");
        }
    }
    const char *key;
    json_object_foreach(timelines, key, x) {
        if (rc == SL_OK)
            rc = check_timeline(key, x, by_id, *mode, err);
    }
    json_decref(ids);
    return rc;
}

int bundle_check(json_t *bundle, store_spec_check_fn check_spec, sl_error_t *err) {
    bundle_ops_t mode;
    json_t *by_id = json_object();
    int rc = by_id ? check_bundle(bundle, by_id, check_spec, &mode, err)
                   : sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the bundle");
    json_decref(by_id);
    return rc;
}

/* ---- import: comparing with what the store holds ---- */

static json_t *or_null(json_t *v) {
    return v ? json_incref(v) : json_null();
}

static json_t *as_real(json_t *v) {
    return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

static json_t *canon_result(json_t *r) {
    static const char *const same[] = {"backend", "reps", "median_rep", "verified", "verification"};
    static const char *const reals[] = {"h2d_ms", "kernel_ms", "d2h_ms", "host_ms", "h2d_gbps", "d2h_gbps",
                                        "overlap", "floor_ms", "efficiency", "predicted_ms", "prediction_error"};
    static const char *const stats[] = {"median", "min", "max", "mean", "stddev"};
    if (!json_is_object(r))
        return json_null();
    json_t *c = json_object(), *total = json_object(), *reps = json_array();
    size_t i;
    json_t *x;
    for (i = 0; i < sizeof same / sizeof same[0]; i++)
        json_object_set_new(c, same[i], or_null(json_object_get(r, same[i])));
    for (i = 0; i < sizeof reals / sizeof reals[0]; i++)
        json_object_set_new(c, reals[i], as_real(json_object_get(r, reals[i])));
    for (i = 0; i < sizeof stats / sizeof stats[0]; i++)
        json_object_set_new(total, stats[i], as_real(json_object_get(json_object_get(r, "total_ms"), stats[i])));
    json_array_foreach(json_object_get(r, "reps_ms"), i, x) {
        json_array_append_new(reps, as_real(x));
    }
    json_t *extra = json_object_get(r, "extra");
    json_object_set_new(c, "total_ms", total);
    json_object_set_new(c, "reps_ms", reps);
    json_object_set_new(c, "extra", json_is_object(extra) ? json_incref(extra) : json_object());
    return c;
}

static int compare_keys(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reps with ops only, in rep order, numbers as reals: the same events however listed. */
static json_t *canon_timelines(json_t *reps_list) {
    json_t *by_rep = json_object(), *out = json_array();
    size_t i, j;
    json_t *r, *op;
    json_array_foreach(reps_list, i, r) {
        json_t *ops = json_object_get(r, "ops");
        if (json_array_size(ops) == 0)
            continue;
        json_t *list = json_array();
        json_array_foreach(ops, j, op) {
            json_t *bytes = json_object_get(op, "bytes");
            json_array_append_new(list, json_pack("{s:O, s:O, s:O, s:O, s:o, s:o, s:o}", "device",
                                                  json_object_get(op, "device"), "stream", json_object_get(op, "stream"),
                                                  "chunk", json_object_get(op, "chunk"), "op", json_object_get(op, "op"),
                                                  "start_us", as_real(json_object_get(op, "start_us")), "end_us",
                                                  as_real(json_object_get(op, "end_us")), "bytes",
                                                  bytes ? json_incref(bytes) : json_integer(0)));
        }
        json_t *calls = json_array();
        json_array_foreach(json_object_get(r, "calls"), j, op) {
            json_array_append_new(calls, json_pack("{s:O, s:O, s:O, s:O, s:o, s:o}", "device",
                                                   json_object_get(op, "device"), "stream", json_object_get(op, "stream"),
                                                   "chunk", json_object_get(op, "chunk"), "op", json_object_get(op, "op"),
                                                   "start_us", as_real(json_object_get(op, "start_us")), "end_us",
                                                   as_real(json_object_get(op, "end_us"))));
        }
        char key[24];
        snprintf(key, sizeof key, "%08lld", (long long)json_integer_value(json_object_get(r, "rep")));
        json_object_set_new(by_rep, key, json_pack("{s:o, s:o}", "ops", list, "calls", calls));
    }
    /* keys are zero-padded rep numbers: in sorted order they are in rep order */
    size_t n = json_object_size(by_rep);
    const char **keys = calloc(n + 1, sizeof *keys);
    if (!keys || !out) {
        free(keys);
        json_decref(by_rep);
        json_decref(out);
        return NULL;
    }
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(by_rep, key, v) {
        keys[k++] = key;
    }
    qsort(keys, n, sizeof *keys, compare_keys);
    for (i = 0; i < n; i++)
        json_array_append_new(out, json_pack("{s:I, s:O, s:O}", "rep", (json_int_t)atoll(keys[i]), "ops",
                                             json_object_get(json_object_get(by_rep, keys[i]), "ops"), "calls",
                                             json_object_get(json_object_get(by_rep, keys[i]), "calls")));
    free(keys);
    json_decref(by_rep);
    return out;
}

/* What the store keeps of one experiment with its timelines, in one comparable shape. */
static json_t *canon_experiment(json_t *e, json_t *reps_list) {
    static const char *const same[] = {"machine_id", "sweep_id", "sweep_index", "status", "spec", "error",
                                       "created_at", "started_at", "finished_at"};
    json_t *c = json_object();
    if (!c)
        return NULL;
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        json_object_set_new(c, same[i], or_null(json_object_get(e, same[i])));
    json_object_set_new(c, "result", canon_result(json_object_get(e, "result")));
    json_t *tl = canon_timelines(reps_list);
    if (!tl || json_object_set_new(c, "timelines", tl)) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* 1: the store holds this experiment, identical; 0: not there; -1: error (a 409 when it differs).
 * The store's ops are compared as far as the bundle holds them (mode): a compact bundle of an
 * experiment stored in full is the same experiment. */
static int compare_existing(store_t *s, json_t *e, json_t *reps_list, bundle_ops_t mode, sl_error_t *err) {
    const char *id = json_string_value(json_object_get(e, "id"));
    sl_error_t e2 = {0};
    json_t *have = store_experiment_json(s, id, &e2);
    if (!have) {
        if (e2.code == SL_E_NOTFOUND)
            return 0;
        if (err)
            *err = e2;
        return -1;
    }
    json_t *result = json_object_get(have, "result");
    int only_rep = mode == BUNDLE_OPS_MEDIAN ? (int)json_integer_value(json_object_get(result, "median_rep")) : -1;
    json_t *have_tl = json_is_object(result) && mode != BUNDLE_OPS_NONE
                          ? timelines_of(s, id, (int)json_integer_value(json_object_get(result, "reps")), only_rep, err)
                          : json_array();
    json_t *a = have_tl ? canon_experiment(have, have_tl) : NULL;
    json_t *b = a ? canon_experiment(e, reps_list) : NULL;
    int out = -1;
    if (!have_tl)
        out = -1;
    else if (!a || !b)
        sl_error_set(err, SL_E_NOMEM, "", "out of memory comparing %s", id);
    else if (json_equal(a, b))
        out = 1;
    else
        sl_error_set(err, SL_E_CONFLICT, "experiments",
                     "experiment %s is already in this store with different content (spec, times or result):"
                     " nothing was imported",
                     id);
    json_decref(a);
    json_decref(b);
    json_decref(have_tl);
    json_decref(have);
    return out;
}

/* ---- import: writing ---- */

typedef struct import_stmts {
    sqlite3_stmt *machine, *sweep_get, *sweep_put, *exp, *result, *rep, *ev, *exists;
} import_stmts_t;

static int step_done(store_t *s, sqlite3_stmt *st, const char *what, sl_error_t *err) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? SL_OK : db_error(err, s, what);
}

/* A machine: new, or newer than the one stored (by last_seen); this machine is never overwritten. */
static int import_machine(store_t *s, import_stmts_t *q, json_t *m, const char *this_machine_id, const char *now,
                          long long *changed, sl_error_t *err) {
    const char *id = json_string_value(json_object_get(m, "id"));
    if (this_machine_id && strcmp(id, this_machine_id) == 0)
        return SL_OK;
    json_t *info = json_copy(m);
    char *info_text = NULL;
    if (info) {
        json_object_del(info, "first_seen");
        json_object_del(info, "last_seen");
        info_text = json_dumps(info, JSON_COMPACT);
    }
    json_decref(info);
    if (!info_text)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory importing machine %s", id);
    json_t *first = json_object_get(m, "first_seen"), *last = json_object_get(m, "last_seen");
    const char *last_seen = json_is_string(last) ? json_string_value(last) : now;
    const char *first_seen = json_is_string(first) ? json_string_value(first) : last_seen;
    static const char *const cols[] = {"hostname", "label", "backend", "cpu", "kernel", "cuda_runtime", "cuda_driver",
                                       "driver_version"};
    sqlite3_stmt *st = q->machine;
    bool ok = bind_text(st, 1, id) == SQLITE_OK;
    for (int i = 0; ok && i < 8; i++) {
        json_t *v = json_object_get(m, cols[i]);
        ok = bind_text(st, 2 + i, json_is_string(v) ? json_string_value(v) : "") == SQLITE_OK;
    }
    ok = ok && bind_text(st, 10, info_text) == SQLITE_OK && bind_text(st, 11, first_seen) == SQLITE_OK &&
         bind_text(st, 12, last_seen) == SQLITE_OK;
    int rc = ok ? step_done(s, st, "importing a machine", err) : db_error(err, s, "importing a machine");
    if (rc == SL_OK)
        *changed += sqlite3_changes(s->db);
    free(info_text);
    return rc;
}

/* A sweep: inserted, or already here and identical; a different one with the same id is a 409. */
static int import_sweep(store_t *s, import_stmts_t *q, json_t *sw, long long *inserted, sl_error_t *err) {
    const char *id = json_string_value(json_object_get(sw, "id"));
    const char *created = json_string_value(json_object_get(sw, "created_at"));
    json_t *request = json_object_get(sw, "request");
    sqlite3_stmt *st = q->sweep_get;
    int rc = bind_text(st, 1, id) == SQLITE_OK ? sqlite3_step(st) : SQLITE_ERROR;
    int out = SL_OK;
    if (rc == SQLITE_ROW) {
        const char *have_created = (const char *)sqlite3_column_text(st, 0);
        const char *have_text = (const char *)sqlite3_column_text(st, 1);
        json_t *have = have_text ? json_loads(have_text, 0, NULL) : NULL;
        if (!have_created || strcmp(have_created, created) != 0 || !json_equal(have, request))
            out = sl_error_set(err, SL_E_CONFLICT, "sweeps",
                               "sweep %s is already in this store with different content: nothing was imported", id);
        json_decref(have);
    } else if (rc != SQLITE_DONE) {
        out = db_error(err, s, "reading a sweep");
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (out != SL_OK || rc == SQLITE_ROW)
        return out;
    char *text = json_dumps(request, JSON_COMPACT);
    if (!text)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory importing sweep %s", id);
    st = q->sweep_put;
    if (bind_text(st, 1, id) != SQLITE_OK || bind_text(st, 2, created) != SQLITE_OK || bind_text(st, 3, text) != SQLITE_OK)
        out = db_error(err, s, "importing a sweep");
    else if ((out = step_done(s, st, "importing a sweep", err)) == SL_OK)
        (*inserted)++;
    free(text);
    return out;
}

/* A machine or sweep that the experiment names must be in the bundle or the store. */
static int check_reference(store_t *s, import_stmts_t *q, const char *table, const char *id, const char *where,
                           sl_error_t *err) {
    sqlite3_stmt *st = q->exists;
    int rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK && bind_text(st, 2, id) == SQLITE_OK
                 ? sqlite3_step(st)
                 : SQLITE_ERROR;
    int n = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (n < 0)
        return db_error(err, s, "checking a reference");
    return n > 0 ? SL_OK
                 : invalid(err, where, NULL, "names %s %s, which is neither in the bundle nor in this store",
                           strcmp(table, "machines") == 0 ? "machine" : "sweep", id);
}

static int insert_result(store_t *s, import_stmts_t *q, const char *id, json_t *r, sl_error_t *err) {
    json_t *total = json_object_get(r, "total_ms");
    json_t *extra_obj = json_is_object(json_object_get(r, "extra")) ? json_incref(json_object_get(r, "extra")) : json_object();
    char *extra = extra_obj ? json_dumps(extra_obj, JSON_COMPACT) : NULL;
    json_decref(extra_obj); /* a result without "extra" made a temporary that leaked */
    if (!extra)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory importing %s", id);
    static const char *const stats[] = {"median", "min", "max", "mean", "stddev"};
    static const char *const numbers[] = {"h2d_ms", "kernel_ms", "d2h_ms", "host_ms", "h2d_gbps", "d2h_gbps",
                                          "overlap", "floor_ms", "efficiency", "predicted_ms", "prediction_error"};
    sqlite3_stmt *st = q->result;
    int i = 1;
    bool ok = bind_text(st, i++, id) == SQLITE_OK && bind_json_text(st, i++, json_object_get(r, "backend")) == SQLITE_OK &&
              bind_json_int(st, i++, json_object_get(r, "reps")) == SQLITE_OK &&
              bind_json_int(st, i++, json_object_get(r, "median_rep")) == SQLITE_OK;
    for (size_t k = 0; ok && k < 5; k++)
        ok = bind_json_real(st, i++, json_object_get(total, stats[k])) == SQLITE_OK;
    for (size_t k = 0; ok && k < 11; k++)
        ok = bind_json_real(st, i++, json_object_get(r, numbers[k])) == SQLITE_OK;
    ok = ok && sqlite3_bind_int(st, i++, json_is_true(json_object_get(r, "verified"))) == SQLITE_OK &&
         bind_json_text(st, i++, json_object_get(r, "verification")) == SQLITE_OK &&
         bind_text(st, i++, extra) == SQLITE_OK;
    int rc = ok ? step_done(s, st, "importing a result", err) : db_error(err, s, "importing a result");
    free(extra);
    size_t k;
    json_t *x;
    json_array_foreach(json_object_get(r, "reps_ms"), k, x) {
        if (rc)
            break;
        st = q->rep;
        if (bind_text(st, 1, id) != SQLITE_OK || sqlite3_bind_int64(st, 2, (sqlite3_int64)k) != SQLITE_OK ||
            bind_json_real(st, 3, x) != SQLITE_OK)
            rc = db_error(err, s, "importing a repetition");
        else
            rc = step_done(s, st, "importing a repetition", err);
    }
    return rc;
}

static int insert_events(store_t *s, import_stmts_t *q, const char *id, json_t *reps_list, sl_error_t *err) {
    size_t i, j;
    json_t *r, *op;
    int rc = SL_OK;
    json_array_foreach(reps_list, i, r) {
        json_t *rep = json_object_get(r, "rep");
        json_t *calls = json_object(), *c; /* op key -> its call (check_calls: one at most) */
        size_t k;
        char key[96];
        if (!calls)
            return sl_error_set(err, SL_E_NOMEM, "", "out of memory importing %s", id);
        json_array_foreach(json_object_get(r, "calls"), k, c) {
            op_key_of(key, sizeof key, c);
            json_object_set(calls, key, c);
        }
        json_array_foreach(json_object_get(r, "ops"), j, op) {
            sqlite3_stmt *st = q->ev;
            json_t *bytes = json_object_get(op, "bytes");
            op_key_of(key, sizeof key, op);
            json_t *call = json_object_get(calls, key);
            bool ok = bind_text(st, 1, id) == SQLITE_OK && bind_json_int(st, 2, rep) == SQLITE_OK &&
                      bind_json_int(st, 3, json_object_get(op, "device")) == SQLITE_OK &&
                      bind_json_int(st, 4, json_object_get(op, "stream")) == SQLITE_OK &&
                      bind_json_int(st, 5, json_object_get(op, "chunk")) == SQLITE_OK &&
                      bind_json_text(st, 6, json_object_get(op, "op")) == SQLITE_OK &&
                      bind_json_real(st, 7, json_object_get(op, "start_us")) == SQLITE_OK &&
                      bind_json_real(st, 8, json_object_get(op, "end_us")) == SQLITE_OK &&
                      sqlite3_bind_int64(st, 9, bytes ? (sqlite3_int64)json_integer_value(bytes) : 0) == SQLITE_OK &&
                      bind_json_real(st, 10, json_object_get(call, "start_us")) == SQLITE_OK &&
                      bind_json_real(st, 11, json_object_get(call, "end_us")) == SQLITE_OK;
            rc = ok ? step_done(s, st, "importing an op event", err) : db_error(err, s, "importing an op event");
            if (rc)
                break;
        }
        json_decref(calls);
        if (rc)
            return rc;
    }
    return rc;
}

static int insert_experiment(store_t *s, import_stmts_t *q, json_t *e, json_t *reps_list, sl_error_t *err) {
    const char *id = json_string_value(json_object_get(e, "id"));
    json_t *spec = json_object_get(e, "spec");
    json_t *devices = json_object_get(spec, "devices");
    json_t *label = json_object_get(spec, "label");
    char *spec_text = json_dumps(spec, JSON_COMPACT);
    if (!spec_text)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory importing %s", id);
    sqlite3_stmt *st = q->exp;
    bool ok = bind_text(st, 1, id) == SQLITE_OK && bind_json_text(st, 2, json_object_get(e, "machine_id")) == SQLITE_OK &&
              bind_json_text(st, 3, json_object_get(e, "sweep_id")) == SQLITE_OK &&
              bind_json_int(st, 4, json_object_get(e, "sweep_index")) == SQLITE_OK &&
              sqlite3_bind_int64(st, 5, devices ? (sqlite3_int64)json_integer_value(json_array_get(devices, 0)) : 0) ==
                  SQLITE_OK &&
              bind_json_text(st, 6, json_object_get(e, "status")) == SQLITE_OK &&
              bind_json_text(st, 7, json_object_get(spec, "variant")) == SQLITE_OK &&
              bind_json_int(st, 8, json_object_get(spec, "size")) == SQLITE_OK &&
              bind_json_int(st, 9, json_object_get(spec, "streams")) == SQLITE_OK &&
              bind_text(st, 10, json_is_string(label) ? json_string_value(label) : "") == SQLITE_OK &&
              bind_text(st, 11, spec_text) == SQLITE_OK &&
              bind_json_text(st, 12, json_object_get(e, "error")) == SQLITE_OK &&
              bind_json_text(st, 13, json_object_get(e, "created_at")) == SQLITE_OK &&
              bind_json_text(st, 14, json_object_get(e, "started_at")) == SQLITE_OK &&
              bind_json_text(st, 15, json_object_get(e, "finished_at")) == SQLITE_OK;
    int rc = ok ? step_done(s, st, "importing an experiment", err) : db_error(err, s, "importing an experiment");
    free(spec_text);
    json_t *result = json_object_get(e, "result");
    if (rc == SL_OK && json_is_object(result))
        rc = insert_result(s, q, id, result, err);
    if (rc == SL_OK && reps_list)
        rc = insert_events(s, q, id, reps_list, err);
    return rc;
}

static int prepare_all(store_t *s, import_stmts_t *q, sl_error_t *err) {
    static const char *const sql[] = {
        "INSERT INTO machines (id, hostname, label, backend, cpu, kernel, cuda_runtime, cuda_driver, driver_version,"
        " info, first_seen, last_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(id) DO UPDATE SET hostname=excluded.hostname, label=excluded.label, backend=excluded.backend,"
        " cpu=excluded.cpu, kernel=excluded.kernel, cuda_runtime=excluded.cuda_runtime,"
        " cuda_driver=excluded.cuda_driver, driver_version=excluded.driver_version, info=excluded.info,"
        " last_seen=excluded.last_seen WHERE excluded.last_seen > machines.last_seen",
        "SELECT created_at, request FROM sweeps WHERE id=?",
        "INSERT INTO sweeps (id, created_at, request) VALUES (?,?,?)",
        "INSERT INTO experiments (id, machine_id, sweep_id, sweep_index, device, status, variant, size, streams,"
        " label, spec, error, created_at, started_at, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO results (experiment_id, backend, reps, median_rep, total_median_ms, total_min_ms,"
        " total_max_ms, total_mean_ms, total_stddev_ms, h2d_ms, kernel_ms, d2h_ms, host_ms, h2d_gbps,"
        " d2h_gbps, overlap, floor_ms, efficiency, predicted_ms, prediction_error, verified, verification,"
        " extra) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        "INSERT INTO result_reps (experiment_id, rep, total_ms) VALUES (?,?,?)",
        "INSERT INTO op_events (experiment_id, rep, device, stream, chunk, op, start_us, end_us, bytes, call_start_us,"
        " call_end_us) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        "SELECT CASE ?1 WHEN 'machines' THEN (SELECT count(*) FROM machines WHERE id=?2)"
        " ELSE (SELECT count(*) FROM sweeps WHERE id=?2) END",
    };
    sqlite3_stmt **out[] = {&q->machine, &q->sweep_get, &q->sweep_put, &q->exp, &q->result, &q->rep, &q->ev, &q->exists};
    for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++)
        if (prepare(s, sql[i], out[i], err))
            return SL_E_DB;
    return SL_OK;
}

static void finalize_all(import_stmts_t *q) {
    sqlite3_stmt *all[] = {q->machine, q->sweep_get, q->sweep_put, q->exp, q->result, q->rep, q->ev, q->exists};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        sqlite3_finalize(all[i]);
}

int store_import_bundle(store_t *s, json_t *bundle, const char *this_machine_id, store_spec_check_fn check_spec,
                        bundle_counts_t *out, sl_error_t *err) {
    import_stmts_t q = {0};
    bundle_counts_t c = {0};
    json_t *by_id = json_object();
    bool in_txn = false;
    bundle_ops_t mode = BUNDLE_OPS_ALL;
    char now[32];
    store_now_iso(now);
    int rc = by_id ? check_bundle(bundle, by_id, check_spec, &mode, err)
                   : sl_error_set(err, SL_E_NOMEM, "", "out of memory checking the bundle");
    if (rc)
        goto done;
    if ((rc = exec(s, "BEGIN IMMEDIATE", err)))
        goto done;
    in_txn = true;
    if ((rc = prepare_all(s, &q, err)))
        goto done;
    json_t *machines = json_object_get(bundle, "machines"), *sweeps = json_object_get(bundle, "sweeps");
    json_t *timelines = json_object_get(bundle, "timelines");
    size_t i;
    json_t *x;
    json_array_foreach(machines, i, x) {
        if ((rc = import_machine(s, &q, x, this_machine_id, now, &c.machines, err)))
            goto done;
    }
    json_array_foreach(sweeps, i, x) {
        if ((rc = import_sweep(s, &q, x, &c.sweeps, err)))
            goto done;
    }
    json_array_foreach(json_object_get(bundle, "experiments"), i, x) {
        char at[64];
        snprintf(at, sizeof at, "experiments[%zu]", i);
        const char *id = json_string_value(json_object_get(x, "id"));
        json_t *reps_list = json_object_get(timelines, id);
        int have = compare_existing(s, x, reps_list, mode, err);
        if (have < 0) {
            rc = err ? (int)err->code : SL_E_CONFLICT;
            goto done;
        }
        if (have == 1) {
            c.unchanged++;
            continue;
        }
        const char *machine_id = json_string_value(json_object_get(x, "machine_id"));
        const char *sweep_id = json_string_value(json_object_get(x, "sweep_id"));
        char where[80];
        snprintf(where, sizeof where, "%s.machine_id", at);
        if ((rc = check_reference(s, &q, "machines", machine_id, where, err)))
            goto done;
        snprintf(where, sizeof where, "%s.sweep_id", at);
        if (sweep_id && (rc = check_reference(s, &q, "sweeps", sweep_id, where, err)))
            goto done;
        if ((rc = insert_experiment(s, &q, x, reps_list, err)))
            goto done;
        c.imported++;
    }
    finalize_all(&q);
    memset(&q, 0, sizeof q);
    rc = exec(s, "COMMIT", err);
done:
    finalize_all(&q);
    if (rc && in_txn)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    json_decref(by_id);
    if (rc == SL_OK && out)
        *out = c;
    return rc;
}
