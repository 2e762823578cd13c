/* handlers_sweeps.c — /api/sweeps: the cross product of the axes over a base spec,
 * every point validated before anything is stored, then stored with the sweep in one
 * transaction and queued in order (first axis outermost, as the axes object lists them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "queue.h"
#include "sim_of.h"
#include "spec.h"

#define SWEEP_MAX_AXES 16

void handle_sweep_create(request_t *req) {
    sl_error_t err = {0};
    json_t *body = request_json(req);
    if (!body)
        return;
    store_new_experiment_t *exps = NULL;
    spec_t *specs = NULL;
    json_t **full = NULL;
    char (*ids)[40] = NULL;
    machine_info_t *sim = NULL;
    store_t *store = NULL;
    size_t total = 1, n_done = 0;
    json_t *base, *axes;
    const char *names[SWEEP_MAX_AXES];
    json_t *values[SWEEP_MAX_AXES];
    int naxes = 0;
    if (!json_is_object(body)) {
        reply_errorf(req, SL_E_INVALID, NULL, "a sweep is {\"base\": spec, \"axes\": {field: [values]}}");
        goto done;
    }
    const char *key;
    json_t *val;
    json_object_foreach(body, key, val) {
        if (strcmp(key, "base") && strcmp(key, "axes") && strcmp(key, "predict") && strcmp(key, "label")) {
            reply_errorf(req, SL_E_INVALID, key, "unknown field \"%.64s\" in the sweep", key);
            goto done;
        }
    }
    base = json_object_get(body, "base");
    axes = json_object_get(body, "axes");
    if (base && !json_is_object(base)) {
        reply_errorf(req, SL_E_INVALID, "base", "base must be a spec object");
        goto done;
    }
    if (!json_is_object(axes) || json_object_size(axes) == 0) {
        reply_errorf(req, SL_E_INVALID, "axes", "axes must be an object of field: [values], with at least one axis");
        goto done;
    }
    json_t *predict = json_object_get(body, "predict");
    if (predict && !json_is_boolean(predict)) {
        reply_errorf(req, SL_E_INVALID, "predict", "predict must be true or false");
        goto done;
    }
    json_object_foreach(axes, key, val) {
        char field[80];
        snprintf(field, sizeof field, "axes.%.64s", key);
        if (!spec_is_field(key)) {
            reply_errorf(req, SL_E_INVALID, field, "\"%.64s\" is not a field of the spec", key);
            goto done;
        }
        if (!json_is_array(val) || json_array_size(val) == 0) {
            reply_errorf(req, SL_E_INVALID, field, "each axis must be a non-empty array of values");
            goto done;
        }
        if (naxes == SWEEP_MAX_AXES) {
            reply_errorf(req, SL_E_INVALID, "axes", "at most %d axes", SWEEP_MAX_AXES);
            goto done;
        }
        total *= json_array_size(val);
        if (total > (size_t)req->app->cfg.sweep_max) {
            reply_errorf(req, SL_E_INVALID, "axes", "the sweep has more than %d experiments (the limit)",
                         req->app->cfg.sweep_max);
            goto done;
        }
        names[naxes] = key;
        values[naxes++] = val;
    }
    exps = calloc(total, sizeof *exps);
    specs = calloc(total, sizeof *specs);
    full = calloc(total, sizeof *full);
    ids = calloc(total, sizeof *ids);
    sim = calloc(1, sizeof *sim); /* the machine the points simulate (sim_of), kept while they name it */
    if (!exps || !specs || !full || !ids || !sim) {
        reply_errorf(req, SL_E_NOMEM, NULL, "out of memory for %zu experiments", total);
        goto done;
    }
    if (!(store = app_store(req->app, &err))) {
        reply_error(req, &err);
        goto done;
    }
    /* point k: mixed radix over the axes, the last axis varying fastest */
    for (size_t k = 0; k < total; k++) {
        json_t *point = base ? json_deep_copy(base) : json_object();
        size_t rest = k;
        for (int a = naxes - 1; a >= 0; a--) {
            size_t na = json_array_size(values[a]);
            json_object_set(point, names[a], json_array_get(values[a], rest % na));
            rest /= na;
        }
        if (json_is_true(predict) && !json_object_get(point, "predict"))
            json_object_set_new(point, "predict", json_true());
        int rc = spec_from_json(point, &specs[k], &err);
        if (rc == SL_OK)
            rc = sim_of_check(req->app, store, &specs[k], sim, &err);
        json_decref(point);
        if (rc) {
            char msg[sizeof err.message];
            snprintf(msg, sizeof msg, "%s", err.message);
            snprintf(err.message, sizeof err.message, "point %zu of the sweep: %.400s", k, msg);
            reply_error(req, &err);
            goto done;
        }
        full[k] = spec_to_json(&specs[k]);
        n_done = k + 1;
    }
    char sweep_id[40];
    app_new_id("s-", sweep_id);
    for (size_t k = 0; k < total; k++) {
        app_new_id("e-", ids[k]);
        exps[k] = (store_new_experiment_t){.id = ids[k], .machine_id = req->app->machine.id, .sweep_id = sweep_id,
                                           .sweep_index = (int)k, .spec = &specs[k], .spec_json = full[k]};
    }
    if (store_enqueue(store, sweep_id, body, exps, total, req->app->cfg.queue_max, &err)) {
        if (err.code == SL_E_BUSY)
            req->retry_after_s = 5;
        reply_error(req, &err);
        goto done;
    }
    queue_notify(req->app->queue);
    json_t *list = json_array();
    for (size_t k = 0; k < total; k++)
        json_array_append_new(list, json_string(ids[k]));
    snprintf(req->location, sizeof req->location, "/api/sweeps/%s", sweep_id);
    reply_json(req, 202, json_pack("{s:s, s:o}", "id", sweep_id, "experiments", list));
done:
    for (size_t k = 0; full && k < n_done; k++)
        json_decref(full[k]);
    free(full);
    free(exps);
    free(specs);
    free(ids);
    free(sim);
    json_decref(body);
}

void handle_sweep_get(request_t *req) {
    sl_error_t err = {0};
    store_t *store = app_store(req->app, &err);
    json_t *out = store ? store_sweep_json(store, req->params[0], &err) : NULL;
    if (!out)
        reply_error(req, &err);
    else
        reply_json(req, 200, out);
}
