/* http.h — the HTTP layer over libmicrohttpd: routing table, request bodies within a
 * limit, JSON replies, API.md's errors (one table from sl_code_t to status), access
 * control, and the dashboard's static files. Handlers see a request_t, never MHD. */
#ifndef STREAMLAB_HTTP_H
#define STREAMLAB_HTTP_H

#include <jansson.h>

#include "app.h"

#define ROUTE_MAX_PARAMS 4

typedef struct request {
    app_t *app;
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
    const char *params[ROUTE_MAX_PARAMS]; /* the path's {id} segments */
    const char *body;
    size_t body_len;
    /* what the handler answers */
    int status;
    json_t *reply;           /* JSON body (owned), or NULL */
    char *text;              /* a non-JSON body (owned, malloc), with text_type */
    size_t text_len;
    const char *text_type;
    char location[256];      /* Location header, or "" */
    int retry_after_s;       /* Retry-After header when > 0 */
} request_t;

typedef void (*handler_fn)(request_t *req);

/* Reply helpers for handlers. */
void reply_json(request_t *req, int status, json_t *body); /* takes ownership */
void reply_error(request_t *req, const sl_error_t *err);
void reply_errorf(request_t *req, sl_code_t code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A query-string argument, or NULL. */
const char *request_arg(request_t *req, const char *name);
/* Every value of a repeated query-string argument (?experiment=a&experiment=b), at most max. */
size_t request_args(request_t *req, const char *name, const char **out, size_t max);
/* Parse the body as JSON; on failure replies 400 and returns NULL. */
json_t *request_json(request_t *req);

int http_status_for(sl_code_t code);

int http_start(app_t *app, char *errbuf, size_t errlen);
void http_stop(app_t *app);

/* The list filters of GET /api/experiments and its CSV from the query string (limit
 * from 1 to max_limit, default default_limit; f->limit is one page, at most 500).
 * false when one is bad: the 422 is replied. */
bool request_list_filter(request_t *req, long long default_limit, long long max_limit, store_filter_t *f,
                         long long *limit);

/* handlers (handlers_*.c) */
void handle_health(request_t *req);
void handle_machines_list(request_t *req);
void handle_machine_get(request_t *req);
void handle_experiment_create(request_t *req);
void handle_experiments_list(request_t *req);
void handle_experiment_get(request_t *req);
void handle_experiment_cancel(request_t *req);
void handle_experiment_timeline(request_t *req);
void handle_experiment_trace(request_t *req);
void handle_sweep_create(request_t *req);
void handle_sweep_get(request_t *req);
void handle_metrics(request_t *req);
void handle_bundle_export(request_t *req);
void handle_bundle_import(request_t *req);
void handle_experiments_csv(request_t *req);
void handle_predict(request_t *req);
void handle_examples_list(request_t *req);
void handle_examples_import(request_t *req);

#endif
