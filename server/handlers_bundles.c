/* handlers_bundles.c — GET /api/export (a bundle of experiments, or of a sweep; ?ops= for a
 * compact one), POST /api/import (a bundle from another store; see db/bundle.h for the format
 * and its rules), and GET/POST /api/examples (the example bundles of the --examples folder:
 * listed, or imported). The handlers parse the request and map the store's answer to HTTP;
 * the checking and the one-transaction import are the store's, the files bundle_files.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db/bundle.h"
#include "bundle_files.h"
#include "http.h"
#include "sim_of.h"
#include "spec.h"

#define EXPORT_MAX_IDS 10000

/* Every experiment id asked for: repeated ?experiment= and comma-separated lists.
 * Returns the count (ids point into *buf, which the caller frees), or -1 after replying. */
static long export_ids(request_t *req, const char ***ids_out, char **buf_out) {
    const char **values = malloc(EXPORT_MAX_IDS * sizeof *values);
    const char **ids = malloc(EXPORT_MAX_IDS * sizeof *ids);
    size_t nvalues = values ? request_args(req, "experiment", values, EXPORT_MAX_IDS) : 0;
    size_t total = 0, n = 0;
    char *buf = NULL;
    for (size_t i = 0; i < nvalues; i++)
        total += strlen(values[i]) + 1;
    if (!values || !ids || !(buf = malloc(total + 1))) {
        reply_errorf(req, SL_E_NOMEM, NULL, "out of memory reading the experiment ids");
        goto error;
    }
    char *p = buf;
    for (size_t i = 0; i < nvalues; i++) {
        size_t len = strlen(values[i]);
        memcpy(p, values[i], len + 1);
        char *save = NULL;
        for (char *t = strtok_r(p, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (n == EXPORT_MAX_IDS) {
                reply_errorf(req, SL_E_INVALID, "experiment", "at most %d experiments in one export; use ?sweep=",
                             EXPORT_MAX_IDS);
                goto error;
            }
            ids[n++] = t;
        }
        p += len + 1;
    }
    free(values);
    *ids_out = ids;
    *buf_out = buf;
    return (long)n;
error:
    free(values);
    free(ids);
    free(buf);
    return -1;
}

void handle_bundle_export(request_t *req) {
    sl_error_t err = {0};
    const char **ids = NULL;
    char *buf = NULL;
    const char *sweep = request_arg(req, "sweep");
    const char *ops_arg = request_arg(req, "ops");
    int ops = ops_arg ? sl_enum_parse(bundle_ops_names, BUNDLE_OPS__COUNT, ops_arg) : BUNDLE_OPS_ALL;
    if (ops < 0) {
        reply_errorf(req, SL_E_INVALID, "ops", "ops is all (every rep's ops), median (the median rep's) or none, not \"%.40s\"",
                     ops_arg);
        return;
    }
    long n = export_ids(req, &ids, &buf);
    if (n < 0)
        return;
    store_t *store = NULL;
    json_t *bundle = NULL;
    if ((n > 0) == (sweep != NULL)) {
        reply_errorf(req, SL_E_INVALID, n > 0 ? "sweep" : "experiment",
                     "name what to export: ?experiment=ID (repeated, or comma-separated) or ?sweep=ID, not both");
        goto done;
    }
    if (sweep && !*sweep) {
        reply_errorf(req, SL_E_INVALID, "sweep", "sweep needs an id");
        goto done;
    }
    if (!(store = app_store(req->app, &err)) ||
        !(bundle = store_export_bundle_ops(store, ids, (size_t)n, sweep, (bundle_ops_t)ops, &err))) {
        reply_error(req, &err);
        goto done;
    }
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(bundle, "machines"), i, m) /* as GET /api/machines/{id} shows them */
        sim_of_annotate(req->app, m);
    reply_json(req, 200, bundle);
done:
    free(ids);
    free(buf);
}

/* 200 with the counts, or the error. */
static void reply_counts(request_t *req, int rc, const bundle_counts_t *counts, const sl_error_t *err) {
    json_t *out = rc ? NULL : bundle_counts_json(counts);
    if (rc)
        reply_error(req, err);
    else if (out)
        reply_json(req, 200, out);
    else
        reply_errorf(req, SL_E_NOMEM, NULL, "out of memory");
}

void handle_bundle_import(request_t *req) {
    sl_error_t err = {0};
    bundle_counts_t counts = {0};
    json_t *body = request_json(req);
    if (!body)
        return;
    store_t *store = app_store(req->app, &err);
    /* the server's spec parser checks each imported spec: the stored spec must be one it accepts */
    int rc = store ? store_import_bundle(store, body, req->app->machine.id, spec_check_json, &counts, &err)
                   : (int)err.code;
    reply_counts(req, rc, &counts, &err);
    json_decref(body);
}

void handle_examples_list(request_t *req) {
    sl_error_t err = {0};
    json_t *out = bundle_files_describe(req->app->cfg.examples_dir, req->app->cfg.import_max_bytes, &err);
    if (out)
        reply_json(req, 200, out);
    else
        reply_error(req, &err);
}

/* No body, or {}: every example bundle into the store, as POST /api/import would. */
void handle_examples_import(request_t *req) {
    sl_error_t err = {0};
    bundle_counts_t counts = {0};
    if (req->body_len > 0) {
        json_t *body = request_json(req);
        if (!body)
            return;
        bool empty = json_is_object(body) && json_object_size(body) == 0;
        const char *key = json_is_object(body) ? json_object_iter_key(json_object_iter(body)) : NULL;
        if (!empty)
            reply_errorf(req, SL_E_INVALID, key ? key : NULL, "POST /api/examples takes no body, or {}%s%.40s",
                         key ? ": no field " : "", key ? key : "");
        json_decref(body);
        if (!empty)
            return;
    }
    store_t *store = app_store(req->app, &err);
    int rc = store ? bundle_files_import(store, req->app->cfg.examples_dir, req->app->machine.id,
                                         req->app->cfg.import_max_bytes, &counts, &err)
                   : (int)err.code;
    if (rc == SL_E_NOTFOUND) { /* no examples folder: nothing to import */
        counts = (bundle_counts_t){0};
        rc = SL_OK;
    }
    reply_counts(req, rc, &counts, &err);
}
