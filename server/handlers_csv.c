/* handlers_csv.c — GET /api/experiments.csv: the runs table as CSV (RFC 4180: a header
 * line, CRLF line ends, a field quoted when it holds a comma, a quote or a line break,
 * quotes doubled), with the filters of GET /api/experiments, newest first. The store is
 * read a page at a time so that a large export never holds every row as JSON at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "spec.h"

#define CSV_LIMIT_MAX 100000
#define CSV_PAGE 500

static const char *const csv_columns[] = {
    "id", "created_at", "machine_id", "status", "variant", "size", "streams", "chunks", "kernel", "launch",
    "host_memory", "default_stream", "backend", "total_median_ms", "total_min_ms", "total_max_ms", "h2d_gbps",
    "d2h_gbps", "overlap", "floor_ms", "efficiency", "verified", "label",
};
#define CSV_COLUMNS (sizeof csv_columns / sizeof csv_columns[0])

typedef struct csv_buf {
    char *data;
    size_t len, cap;
    bool failed; /* out of memory: the reply is an error */
} csv_buf_t;

static void csv_put(csv_buf_t *b, const char *s, size_t n) {
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->failed = true;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void csv_text(csv_buf_t *b, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        csv_put(b, s, strlen(s));
        return;
    }
    csv_put(b, "\"", 1);
    for (const char *q; (q = strchr(s, '"')); s = q + 1) {
        csv_put(b, s, (size_t)(q - s));
        csv_put(b, "\"\"", 2);
    }
    csv_put(b, s, strlen(s));
    csv_put(b, "\"", 1);
}

/* One cell: strings quoted as needed, numbers in the fewest digits that read back the
 * same double, booleans as true/false, null or missing as an empty field. */
static void csv_cell(csv_buf_t *b, json_t *v) {
    char num[40];
    if (json_is_string(v)) {
        csv_text(b, json_string_value(v));
    } else if (json_is_integer(v)) {
        csv_put(b, num, (size_t)snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v)));
    } else if (json_is_real(v)) {
        double x = json_real_value(v);
        int len = 0;
        for (int digits = 15; digits <= 17; digits++) {
            len = snprintf(num, sizeof num, "%.*g", digits, x);
            if (strtod(num, NULL) == x)
                break;
        }
        csv_put(b, num, (size_t)len);
    } else if (json_is_boolean(v)) {
        csv_text(b, json_is_true(v) ? "true" : "false");
    }
}

static void csv_row(csv_buf_t *b, json_t *e) {
    json_t *spec = json_object_get(e, "spec"), *result = json_object_get(e, "result");
    json_t *total = json_object_get(result, "total_ms");
    json_t *backend = json_object_get(result, "backend");
    json_t *cells[CSV_COLUMNS] = {
        json_object_get(e, "id"), json_object_get(e, "created_at"), json_object_get(e, "machine_id"),
        json_object_get(e, "status"), json_object_get(spec, "variant"), json_object_get(spec, "size"),
        json_object_get(spec, "streams"), json_object_get(spec, "chunks"), json_object_get(spec, "kernel"),
        json_object_get(spec, "launch"), json_object_get(spec, "host_memory"), json_object_get(spec, "default_stream"),
        backend ? backend : json_object_get(spec, "backend"), json_object_get(total, "median"),
        json_object_get(total, "min"), json_object_get(total, "max"), json_object_get(result, "h2d_gbps"),
        json_object_get(result, "d2h_gbps"), json_object_get(result, "overlap"), json_object_get(result, "floor_ms"),
        json_object_get(result, "efficiency"), json_object_get(result, "verified"), json_object_get(spec, "label"),
    };
    for (size_t i = 0; i < CSV_COLUMNS; i++) {
        if (i)
            csv_put(b, ",", 1);
        csv_cell(b, cells[i]);
    }
    csv_put(b, "\r\n", 2);
}

void handle_experiments_csv(request_t *req) {
    sl_error_t err = {0};
    store_filter_t f;
    long long limit;
    if (!request_list_filter(req, CSV_LIMIT_MAX, CSV_LIMIT_MAX, &f, &limit))
        return;
    store_t *store = app_store(req->app, &err);
    if (!store) {
        reply_error(req, &err);
        return;
    }
    csv_buf_t b = {0};
    for (size_t i = 0; i < CSV_COLUMNS; i++) {
        if (i)
            csv_put(&b, ",", 1);
        csv_text(&b, csv_columns[i]);
    }
    csv_put(&b, "\r\n", 2);
    char cursor[64];
    for (long long left = limit; left > 0 && !b.failed;) {
        f.limit = (int)(left < CSV_PAGE ? left : CSV_PAGE);
        json_t *page = store_list_experiments(store, &f, &err);
        if (!page) {
            free(b.data);
            reply_error(req, &err);
            return;
        }
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(page, "items"), i, e) {
            csv_row(&b, e);
            left--;
        }
        const char *next = json_string_value(json_object_get(page, "next"));
        if (next)
            snprintf(cursor, sizeof cursor, "%s", next);
        json_decref(page);
        if (!next)
            break;
        f.before = cursor;
    }
    if (b.failed) {
        free(b.data);
        reply_errorf(req, SL_E_NOMEM, NULL, "out of memory writing the CSV");
        return;
    }
    req->status = 200;
    req->text = b.data;
    req->text_len = b.len;
    req->text_type = "text/csv; charset=utf-8";
}
