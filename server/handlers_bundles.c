/* handlers_bundles.c — GET /api/export (a bundle of experiments, or of a sweep) and
 * POST /api/import (a bundle from another store; see db/bundle.h for the format and its
 * rules). The handlers parse the request and map the store's answer to HTTP; the
 * checking and the one-transaction import are the store's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db/bundle.h"
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
        !(bundle = store_export_bundle(store, ids, (size_t)n, sweep, &err))) {
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

/* The server's spec parser for each imported spec: the stored spec must be one it accepts. */
static int check_spec(json_t *spec, sl_error_t *err) {
    spec_t parsed;
    return spec_from_json(spec, &parsed, err);
}

void handle_bundle_import(request_t *req) {
    sl_error_t err = {0};
    bundle_counts_t counts = {0};
    json_t *body = request_json(req);
    if (!body)
        return;
    store_t *store = app_store(req->app, &err);
    if (!store || store_import_bundle(store, body, req->app->machine.id, check_spec, &counts, &err)) {
        reply_error(req, &err);
    } else {
        json_t *out = json_pack("{s:I, s:I, s:I, s:I}", "imported", (json_int_t)counts.imported, "unchanged",
                                (json_int_t)counts.unchanged, "machines", (json_int_t)counts.machines, "sweeps",
                                (json_int_t)counts.sweeps);
        if (out)
            reply_json(req, 200, out);
        else
            reply_errorf(req, SL_E_NOMEM, NULL, "out of memory");
    }
    json_decref(body);
}
