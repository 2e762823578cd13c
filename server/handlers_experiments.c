/* handlers_experiments.c — /api/experiments: create (validate, check against the
 * machine or the one its sim_of simulates, store as queued, wake a worker), list with
 * filters and paging, get, cancel, the per-op timeline and its Chrome Trace Event export. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "http.h"
#include "queue.h"
#include "sim_of.h"
#include "spec.h"

static const char JSON_TYPE[] = "application/json; charset=utf-8";

static bool is_final(json_t *exp) {
    const char *status = json_string_value(json_object_get(exp, "status"));
    return status && (!strcmp(status, "done") || !strcmp(status, "failed") || !strcmp(status, "cancelled"));
}

/* An experiment's JSON text, from the cache when it holds the experiment in the status
 * given (the key carries the status, so a change of status is a new key and nothing
 * goes stale; status NULL: any final one), else from the store (then kept). */
static char *experiment_text(store_t *store, const char *id, const char *status, size_t *len, sl_error_t *err) {
    static const char *const final[] = {"done", "failed", "cancelled"};
    char key[128];
    for (int i = 0; i < (status ? 1 : 3); i++) {
        snprintf(key, sizeof key, "e:%s:%s", id, status ? status : final[i]);
        char *text = cache_get(key, len);
        if (text)
            return text;
    }
    json_t *exp = store_experiment_json(store, id, err);
    if (!exp)
        return NULL;
    char *text = json_dumps(exp, JSON_COMPACT);
    const char *now = json_string_value(json_object_get(exp, "status"));
    if (!text)
        sl_error_set(err, SL_E_NOMEM, "", "out of memory");
    else {
        *len = strlen(text);
        if (now && (status || is_final(exp))) { /* running ones only where the list names the status */
            snprintf(key, sizeof key, "e:%s:%s", id, now);
            cache_put(key, text, *len);
        }
    }
    json_decref(exp);
    return text;
}

static void reply_text_json(request_t *req, char *text, size_t len) {
    req->status = 200;
    req->text = text;
    req->text_len = len;
    req->text_type = JSON_TYPE;
}

void handle_experiment_create(request_t *req) {
    sl_error_t err = {0};
    json_t *body = request_json(req);
    if (!body)
        return;
    spec_t spec;
    machine_info_t sim = {0};
    store_t *store = NULL;
    json_t *full = NULL;
    if (spec_from_json(body, &spec, &err) || !(store = app_store(req->app, &err)) ||
        sim_of_check(req->app, store, &spec, &sim, &err)) {
        reply_error(req, &err);
        goto done;
    }
    full = spec_to_json(&spec);
    char id[40];
    app_new_id("e-", id);
    store_new_experiment_t e = {.id = id, .machine_id = req->app->machine.id, .spec = &spec, .spec_json = full};
    if (!full || store_enqueue(store, NULL, NULL, &e, 1, req->app->cfg.queue_max, &err)) {
        if (!full)
            sl_error_set(&err, SL_E_NOMEM, "", "out of memory");
        if (err.code == SL_E_BUSY)
            req->retry_after_s = 5;
        reply_error(req, &err);
        goto done;
    }
    queue_notify(req->app->queue);
    json_t *exp = store_experiment_json(store, id, &err);
    if (!exp) {
        reply_error(req, &err);
        goto done;
    }
    snprintf(req->location, sizeof req->location, "/api/experiments/%s", id);
    reply_json(req, 202, exp);
done:
    json_decref(full);
    json_decref(body);
}

static bool parse_count_arg(request_t *req, const char *name, long long lo, long long hi, long long *out) {
    const char *v = request_arg(req, name);
    if (!v || !*v)
        return true;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (*end || x < lo || x > hi) {
        reply_errorf(req, SL_E_INVALID, name, "%s must be an integer from %lld to %lld", name, lo, hi);
        return false;
    }
    *out = x;
    return true;
}

static const char *nonempty(const char *s) {
    return s && *s ? s : NULL;
}

bool request_list_filter(request_t *req, long long default_limit, long long max_limit, store_filter_t *f,
                         long long *limit) {
    long long size = 0, streams = 0;
    memset(f, 0, sizeof *f);
    *limit = default_limit;
    if (!parse_count_arg(req, "limit", 1, max_limit, limit) || !parse_count_arg(req, "size", 1, 1ll << 40, &size) ||
        !parse_count_arg(req, "streams", 1, SPEC_MAX_STREAMS, &streams))
        return false;
    f->limit = (int)(*limit < 500 ? *limit : 500);
    f->size = size;
    f->streams = streams;
    f->status = nonempty(request_arg(req, "status"));
    f->variant = nonempty(request_arg(req, "variant"));
    f->machine = nonempty(request_arg(req, "machine"));
    f->sweep = nonempty(request_arg(req, "sweep"));
    f->label = request_arg(req, "label");
    f->before = nonempty(request_arg(req, "before"));
    static const char *const statuses[] = {"queued", "running", "done", "failed", "cancelled"};
    if (f->status && sl_enum_parse(statuses, 5, f->status) < 0) {
        reply_errorf(req, SL_E_INVALID, "status", "status must be one of queued, running, done, failed, cancelled");
        return false;
    }
    if (f->variant && sl_enum_parse(variant_names, VARIANT__COUNT, f->variant) < 0) {
        reply_errorf(req, SL_E_INVALID, "variant", "unknown variant \"%.64s\"", f->variant);
        return false;
    }
    return true;
}

void handle_experiments_list(request_t *req) {
    sl_error_t err = {0};
    store_filter_t f;
    long long limit;
    if (!request_list_filter(req, 50, 500, &f, &limit))
        return;
    store_t *store = app_store(req->app, &err);
    store_list_entry_t *ids = NULL;
    store_id_t next;
    size_t n = 0;
    if (!store || store_list_ids(store, &f, &ids, &n, next, &err)) {
        reply_error(req, &err);
        return;
    }
    /* {"items":[...],"next":...} assembled from each experiment's (cached) text */
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    bool ok = out != NULL;
    if (ok)
        len = (size_t)snprintf(out, cap, "{\"items\":[");
    for (size_t i = 0; ok && i < n; i++) {
        size_t elen = 0;
        char *text = experiment_text(store, ids[i].id, ids[i].status, &elen, &err);
        if (!text) {
            ok = false;
            break;
        }
        if (len + elen + 128 > cap) {
            while (len + elen + 128 > cap)
                cap *= 2;
            char *grown = realloc(out, cap);
            if (!grown) {
                free(text);
                ok = false;
                sl_error_set(&err, SL_E_NOMEM, "", "out of memory");
                break;
            }
            out = grown;
        }
        if (i)
            out[len++] = ',';
        memcpy(out + len, text, elen);
        len += elen;
        free(text);
    }
    free(ids);
    if (!ok) {
        free(out);
        if (!err.code)
            sl_error_set(&err, SL_E_NOMEM, "", "out of memory");
        reply_error(req, &err);
        return;
    }
    if (next[0])
        len += (size_t)snprintf(out + len, cap - len, "],\"next\":\"%s\"}", next);
    else
        len += (size_t)snprintf(out + len, cap - len, "],\"next\":null}");
    reply_text_json(req, out, len);
}

void handle_experiment_get(request_t *req) {
    sl_error_t err = {0};
    size_t len = 0;
    store_t *store = app_store(req->app, &err);
    char *text = store ? experiment_text(store, req->params[0], NULL, &len, &err) : NULL;
    if (!text)
        reply_error(req, &err);
    else
        reply_text_json(req, text, len);
}

void handle_experiment_cancel(request_t *req) {
    sl_error_t err = {0};
    store_t *store = app_store(req->app, &err);
    if (!store || store_cancel_experiment(store, req->params[0], &err)) {
        reply_error(req, &err);
        return;
    }
    json_t *out = store_experiment_json(store, req->params[0], &err);
    if (!out)
        reply_error(req, &err);
    else
        reply_json(req, 200, out);
}

static json_t *timeline_for(request_t *req) {
    sl_error_t err = {0};
    long long rep = -1;
    if (!parse_count_arg(req, "rep", 0, SPEC_MAX_REPS, &rep))
        return NULL;
    store_t *store = app_store(req->app, &err);
    json_t *tl = store ? store_timeline_json(store, req->params[0], (int)rep, &err) : NULL;
    if (!tl)
        reply_error(req, &err);
    return tl;
}

void handle_experiment_timeline(request_t *req) {
    const char *rep_arg = request_arg(req, "rep");
    char key[128];
    snprintf(key, sizeof key, "t:%s:%.16s", req->params[0], rep_arg && *rep_arg ? rep_arg : "median");
    size_t len = 0;
    char *text = cache_get(key, &len);
    if (text) {
        reply_text_json(req, text, len);
        return;
    }
    json_t *tl = timeline_for(req); /* only done experiments have one: it never changes */
    if (!tl)
        return;
    text = json_dumps(tl, JSON_COMPACT);
    json_decref(tl);
    if (!text) {
        reply_errorf(req, SL_E_NOMEM, NULL, "out of memory");
        return;
    }
    len = strlen(text);
    cache_put(key, text, len);
    reply_text_json(req, text, len);
}

/* Chrome Trace Event format: a process per device, a thread per stream ("stream N";
 * host work on "host"), complete events ("ph":"X") with ts and dur in µs. With ?calls=1,
 * the issuing thread's calls too, where the run recorded them: a process "host" of their
 * own, its thread "issuing thread: calls", events named "call h2d" and so on (cat "call"). */
void handle_experiment_trace(request_t *req) {
    const char *calls_arg = request_arg(req, "calls");
    if (calls_arg && strcmp(calls_arg, "0") != 0 && strcmp(calls_arg, "1") != 0) {
        reply_errorf(req, SL_E_INVALID, "calls", "calls must be 0 or 1");
        return;
    }
    json_t *tl = timeline_for(req);
    if (!tl)
        return;
    json_t *events = json_array();
    json_t *ops = json_object_get(tl, "ops");
    size_t i;
    json_t *op;
    bool seen_pid[SPEC_MAX_DEVICES] = {0};
    json_t *seen_tid = json_object(); /* "pid/tid" -> true */
    json_array_foreach(ops, i, op) {
        int dev = (int)json_integer_value(json_object_get(op, "device"));
        int stream = (int)json_integer_value(json_object_get(op, "stream"));
        int tid = stream < 0 ? 100000 : stream;
        if (dev >= 0 && dev < SPEC_MAX_DEVICES && !seen_pid[dev]) {
            seen_pid[dev] = true;
            char name[64];
            snprintf(name, sizeof name, "device %d", dev);
            json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "process_name", "ph",
                                                    "M", "pid", dev, "tid", 0, "args", "name", name));
        }
        char key[32];
        snprintf(key, sizeof key, "%d/%d", dev, tid);
        if (!json_object_get(seen_tid, key)) {
            json_object_set_new(seen_tid, key, json_true());
            char name[32];
            if (stream < 0)
                snprintf(name, sizeof name, "host");
            else
                snprintf(name, sizeof name, "stream %d", stream);
            json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph",
                                                    "M", "pid", dev, "tid", tid, "args", "name", name));
        }
        double start = json_number_value(json_object_get(op, "start_us"));
        double end = json_number_value(json_object_get(op, "end_us"));
        const char *kind = json_string_value(json_object_get(op, "op"));
        json_t *args = json_pack("{s:O, s:O}", "chunk", json_object_get(op, "chunk"), "bytes", json_object_get(op, "bytes"));
        json_array_append_new(events, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i, s:o}", "name", kind ? kind : "op",
                                                "cat", kind ? kind : "op", "ph", "X", "ts", start, "dur",
                                                end > start ? end - start : 0.0, "pid", dev, "tid", tid, "args", args));
    }
    json_decref(seen_tid);
    json_t *calls = calls_arg && strcmp(calls_arg, "1") == 0 ? json_object_get(tl, "calls") : NULL;
    const int calls_pid = SPEC_MAX_DEVICES, calls_tid = 100001; /* after every device's */
    if (json_array_size(calls) > 0) {
        json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "process_name", "ph", "M",
                                                "pid", calls_pid, "tid", 0, "args", "name", "host"));
        json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph", "M",
                                                "pid", calls_pid, "tid", calls_tid, "args", "name",
                                                "issuing thread: calls"));
    }
    json_array_foreach(calls, i, op) {
        double start = json_number_value(json_object_get(op, "start_us"));
        double end = json_number_value(json_object_get(op, "end_us"));
        const char *kind = json_string_value(json_object_get(op, "op"));
        char name[32];
        snprintf(name, sizeof name, "call %s", kind ? kind : "op");
        json_t *args = json_pack("{s:O, s:O, s:O}", "device", json_object_get(op, "device"), "stream",
                                 json_object_get(op, "stream"), "chunk", json_object_get(op, "chunk"));
        json_array_append_new(events, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i, s:o}", "name", name, "cat",
                                                "call", "ph", "X", "ts", start, "dur", end > start ? end - start : 0.0,
                                                "pid", calls_pid, "tid", calls_tid, "args", args));
    }
    json_t *out = json_pack("{s:o, s:s, s:{s:O, s:O}}", "traceEvents", events, "displayTimeUnit", "ms", "metadata",
                            "experiment", json_object_get(tl, "experiment"), "rep", json_object_get(tl, "rep"));
    json_decref(tl);
    reply_json(req, 200, out);
}
