/* handlers_misc.c — /api/health, /api/machines (with what sim_of can simulate) and /metrics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cache.h"
#include "http.h"
#include "metrics.h"
#include "sim_of.h"

void handle_health(request_t *req) {
    sl_error_t err = {0};
    store_counts_t c = {0};
    store_t *store = app_store(req->app, &err);
    if (!store || store_count_by_status(store, &c, &err)) {
        reply_error(req, &err);
        return;
    }
    reply_json(req, 200,
               json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:s, s:b}", "status", "ok", "version", STREAMLAB_VERSION,
                         "backend", backend_names[req->app->machine.backend], "devices", req->app->machine.device_count,
                         "queue_depth", (json_int_t)c.queued, "running", (json_int_t)c.running, "machine_id",
                         req->app->machine.id, "cuda_compiled_in", cuda_compiled_in()));
}

void handle_machines_list(request_t *req) {
    sl_error_t err = {0};
    store_t *store = app_store(req->app, &err);
    json_t *items = store ? store_list_machines(store, &err) : NULL;
    if (!items) {
        reply_error(req, &err);
        return;
    }
    size_t i;
    json_t *m;
    json_array_foreach(items, i, m)
        sim_of_annotate(req->app, m);
    reply_json(req, 200, json_pack("{s:o, s:s}", "items", items, "this", req->app->machine.id));
}

void handle_machine_get(request_t *req) {
    sl_error_t err = {0};
    store_t *store = app_store(req->app, &err);
    json_t *m = store ? store_machine_json(store, req->params[0], &err) : NULL;
    if (!m) {
        reply_error(req, &err);
        return;
    }
    sim_of_annotate(req->app, m);
    reply_json(req, 200, m);
}

void handle_metrics(request_t *req) {
    sl_error_t err = {0};
    store_counts_t c = {0};
    store_t *store = app_store(req->app, &err);
    if (!store || store_count_by_status(store, &c, &err)) {
        reply_error(req, &err);
        return;
    }
    metrics_text_t b = {0};
    metrics_printf(&b,
                   "# HELP streamlab_queue_depth Experiments waiting to run.\n"
                   "# TYPE streamlab_queue_depth gauge\n"
                   "streamlab_queue_depth %lld\n"
                   "# HELP streamlab_experiments Experiments in the store, by status.\n"
                   "# TYPE streamlab_experiments gauge\n"
                   "streamlab_experiments{status=\"queued\"} %lld\n"
                   "streamlab_experiments{status=\"running\"} %lld\n"
                   "streamlab_experiments{status=\"done\"} %lld\n"
                   "streamlab_experiments{status=\"failed\"} %lld\n"
                   "streamlab_experiments{status=\"cancelled\"} %lld\n",
                   c.queued, c.queued, c.running, c.done, c.failed, c.cancelled);
    metrics_render_counters(&b);
    const machine_info_t *m = &req->app->machine;
    metrics_printf(&b, "# HELP streamlab_calibration_gbps Calibrated copy bandwidth per device and direction.\n"
                       "# TYPE streamlab_calibration_gbps gauge\n");
    for (int i = 0; i < m->device_count; i++) {
        const calibration_t *cb = &m->devices[i].calib;
        if (!cb->valid)
            continue;
        metrics_printf(&b,
                       "streamlab_calibration_gbps{device=\"%d\",direction=\"h2d\"} %.3f\n"
                       "streamlab_calibration_gbps{device=\"%d\",direction=\"d2h\"} %.3f\n"
                       "streamlab_calibration_gbps{device=\"%d\",direction=\"bidirectional\"} %.3f\n",
                       i, cb->h2d_gbps, i, cb->d2h_gbps, i, cb->bidir_gbps);
    }
    long long objs[CUDA_OBJ__COUNT];
    backend_cuda_objects(objs);
    metrics_printf(&b, "# HELP streamlab_cuda_objects CUDA objects this process holds now (streams, events, "
                       "graphs, graph instances, pinned and device allocations), as streamlab made them.\n"
                       "# TYPE streamlab_cuda_objects gauge\n");
    for (int k = 0; k < CUDA_OBJ__COUNT; k++)
        metrics_printf(&b, "streamlab_cuda_objects{kind=\"%s\"} %lld\n", cuda_obj_names[k], objs[k]);
    /* what the C allocator holds, over all its arenas: in use, and freed but kept (glibc;
     * absent elsewhere). A soak tells by them a leak (in use grows) from fragmentation (kept
     * grows) from memory outside malloc (neither: the CUDA driver's own mappings). */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    metrics_printf(&b,
                   "# HELP streamlab_heap_bytes Bytes the C allocator holds: in use (small blocks and mmapped ones) "
                   "and free (freed but kept by it).\n"
                   "# TYPE streamlab_heap_bytes gauge\n"
                   "streamlab_heap_bytes{state=\"in_use\"} %zu\n"
                   "streamlab_heap_bytes{state=\"free\"} %zu\n",
                   mi.uordblks + mi.hblkhd, mi.fordblks);
#endif
    size_t cache_bytes, cache_entries, cache_limit;
    cache_stats(&cache_bytes, &cache_entries, &cache_limit);
    metrics_printf(&b,
                   "# HELP streamlab_cache_bytes Bytes of finished experiments' JSON the process keeps to answer reads "
                   "(part of its resident memory; bounded by streamlab_cache_limit_bytes).\n"
                   "# TYPE streamlab_cache_bytes gauge\n"
                   "streamlab_cache_bytes %zu\n"
                   "# HELP streamlab_cache_entries Finished experiments' JSON texts the process keeps.\n"
                   "# TYPE streamlab_cache_entries gauge\n"
                   "streamlab_cache_entries %zu\n"
                   "# HELP streamlab_cache_limit_bytes The bound on streamlab_cache_bytes.\n"
                   "# TYPE streamlab_cache_limit_bytes gauge\n"
                   "streamlab_cache_limit_bytes %zu\n",
                   cache_bytes, cache_entries, cache_limit);
    if (b.failed) {
        free(b.p);
        reply_errorf(req, SL_E_NOMEM, NULL, "out of memory");
        return;
    }
    req->status = 200;
    req->text = b.p;
    req->text_len = b.len;
    req->text_type = "text/plain; version=0.0.4; charset=utf-8";
}
