/* http.c — libmicrohttpd glue (see http.h). MHD calls on_request several times per
 * request: first with no body (we route, check method, auth, Content-Type and
 * Content-Length, and may answer at once), then once per body piece (accumulated up
 * to cfg.body_max_bytes; past it the rest is discarded and 413 answered), then a last
 * time with no data, when the handler runs. Every MHD return code is checked. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"

typedef struct route {
    const char *method;
    const char *pattern; /* segments; "*" matches one segment (a param) */
    handler_fn fn;
    bool mutating;
} route_t;

static const route_t routes[] = {
    {"GET", "/api/health", handle_health, false},
    {"GET", "/api/machines", handle_machines_list, false},
    {"GET", "/api/machines/*", handle_machine_get, false},
    {"POST", "/api/experiments", handle_experiment_create, true},
    {"GET", "/api/experiments", handle_experiments_list, false},
    {"GET", "/api/experiments/*", handle_experiment_get, false},
    {"DELETE", "/api/experiments/*", handle_experiment_cancel, true},
    {"GET", "/api/experiments/*/timeline", handle_experiment_timeline, false},
    {"GET", "/api/experiments/*/trace", handle_experiment_trace, false},
    {"POST", "/api/sweeps", handle_sweep_create, true},
    {"GET", "/api/sweeps/*", handle_sweep_get, false},
    {"GET", "/metrics", handle_metrics, false},
    {"POST", "/api/predict", handle_predict, true},
    {"GET", "/api/export", handle_bundle_export, false},
    {"POST", "/api/import", handle_bundle_import, true},
    {"GET", "/api/experiments.csv", handle_experiments_csv, false},
    {"GET", "/api/examples", handle_examples_list, false},
    {"POST", "/api/examples", handle_examples_import, true},
};
#define ROUTE_COUNT (sizeof routes / sizeof routes[0])

typedef struct conn_ctx {
    const route_t *route;
    char *params_buf;          /* storage for the path params */
    const char *params[ROUTE_MAX_PARAMS];
    char *body;
    size_t body_len, body_cap;
    bool overflow;
    bool answered;             /* a reply was queued at the first call */
    double start_s;
} conn_ctx_t;

int http_status_for(sl_code_t code) {
    switch (code) {
    case SL_OK: return 200;
    case SL_E_PARSE: return 400;
    case SL_E_AUTH: return 401;
    case SL_E_NOTFOUND: return 404;
    case SL_E_METHOD: return 405;
    case SL_E_CONFLICT: return 409;
    case SL_E_TOOLARGE: return 413;
    case SL_E_MEDIA: return 415;
    case SL_E_INVALID: return 422;
    case SL_E_BUSY: return 429;
    case SL_E_UNAVAILABLE: return 503;
    default: return 500;
    }
}

void reply_json(request_t *req, int status, json_t *body) {
    if (req->reply)
        json_decref(req->reply);
    req->status = status;
    req->reply = body;
}

/* Replace every byte that is not part of a valid UTF-8 sequence with '?': messages quote
 * what clients sent (paths, fields, values) and may cut a character in two, and a JSON
 * string must be valid UTF-8. */
static void utf8_sanitize(char *s) {
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 1 : (*p >> 5) == 0x6 ? 2 : (*p >> 4) == 0xe ? 3 : (*p >> 3) == 0x1e ? 4 : 0;
        bool ok = n > 0;
        for (int i = 1; ok && i < n; i++)
            ok = (p[i] & 0xc0) == 0x80;
        if (ok && n == 2 && *p < 0xc2) ok = false;                          /* overlong */
        if (ok && n == 3 && ((*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] >= 0xa0))) ok = false;
        if (ok && n == 4 && ((*p == 0xf0 && p[1] < 0x90) || *p > 0xf4 || (*p == 0xf4 && p[1] >= 0x90))) ok = false;
        if (!ok) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

void reply_error(request_t *req, const sl_error_t *err) {
    char message[sizeof err->message], field[sizeof err->field];
    snprintf(message, sizeof message, "%s", err->message);
    snprintf(field, sizeof field, "%s", err->field);
    utf8_sanitize(message);
    utf8_sanitize(field);
    json_t *e = json_pack("{s:s, s:s}", "code", sl_code_name(err->code), "message", message);
    if (e && field[0])
        json_object_set_new(e, "field", json_string(field));
    reply_json(req, http_status_for(err->code), json_pack("{s:o}", "error", e ? e : json_object()));
}

void reply_errorf(request_t *req, sl_code_t code, const char *field, const char *fmt, ...) {
    sl_error_t err = {.code = code};
    snprintf(err.field, sizeof err.field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.message, sizeof err.message, fmt, ap);
    va_end(ap);
    reply_error(req, &err);
}

const char *request_arg(request_t *req, const char *name) {
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

typedef struct arg_list {
    const char *name;
    const char **out;
    size_t n, max;
} arg_list_t;

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    arg_list_t *a = cls;
    if (strcmp(key, a->name) == 0 && value && a->n < a->max)
        a->out[a->n++] = value;
    return MHD_YES;
}

size_t request_args(request_t *req, const char *name, const char **out, size_t max) {
    arg_list_t a = {.name = name, .out = out, .max = max};
    if (MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, collect_arg, &a) < 0)
        return 0;
    return a.n;
}

/* POST /api/import takes bundles, far larger than specs: it has its own limit. */
static size_t body_max_for(const app_t *app, const route_t *route) {
    return route && route->fn == handle_bundle_import ? app->cfg.import_max_bytes : app->cfg.body_max_bytes;
}

json_t *request_json(request_t *req) {
    json_error_t jerr;
    if (req->body_len == 0) {
        reply_errorf(req, SL_E_PARSE, NULL, "the request has no body; send a JSON document");
        return NULL;
    }
    /* JSON_REJECT_DUPLICATES: {"streams":1,"streams":2} is ambiguous, so refused.
     * JSON_DECODE_ANY: a bare 5 is well-formed JSON (and then not a spec: 422). */
    size_t flags = JSON_REJECT_DUPLICATES | JSON_DECODE_ANY;
    json_t *j = json_loadb(req->body, req->body_len, flags, &jerr);
    if (!j && strstr(jerr.text, "too big integer")) /* well-formed, out of range: read it as a real, refused as a value */
        j = json_loadb(req->body, req->body_len, flags | JSON_DECODE_INT_AS_REAL, &jerr);
    if (!j)
        reply_errorf(req, SL_E_PARSE, NULL, "malformed JSON at line %d, column %d: %s", jerr.line, jerr.column,
                     jerr.text);
    return j;
}

static int split_path(char *s, char **segs, int max) {
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(s, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (n == max)
            return -1;
        segs[n++] = t;
    }
    return n;
}

/* Match path against pattern segment by segment; params point into buf. */
static bool route_match(const char *pattern, const char *path, char *buf, size_t buflen, const char **params) {
    char pat[128];
    snprintf(pat, sizeof pat, "%s", pattern);
    if (snprintf(buf, buflen, "%s", path) >= (int)buflen)
        return false;
    char *ps[8], *ss[8];
    int np = split_path(pat, ps, 8), ns = split_path(buf, ss, 8);
    if (np < 0 || ns < 0 || np != ns)
        return false;
    int k = 0;
    for (int i = 0; i < np; i++) {
        if (strcmp(ps[i], "*") == 0) {
            if (k >= ROUTE_MAX_PARAMS)
                return false;
            params[k++] = ss[i];
        } else if (strcmp(ps[i], ss[i]) != 0) {
            return false;
        }
    }
    return true;
}

static bool is_api(const char *path) {
    while (path[0] == '/' && path[1] == '/') /* the router reads //api/x as /api/x */
        path++;
    return strncmp(path, "/api/", 5) == 0 || strcmp(path, "/api") == 0 || strcmp(path, "/metrics") == 0;
}

static bool token_ok(app_t *app, struct MHD_Connection *conn) {
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *want = app->cfg.token;
    if (!auth || strncmp(auth, "Bearer ", 7) != 0)
        return false;
    const char *got = auth + 7;
    size_t gl = strlen(got), wl = strlen(want);
    /* constant time in the token's length: compare every byte whatever differs */
    unsigned char diff = (unsigned char)(gl != wl);
    for (size_t i = 0; i < wl; i++)
        diff |= (unsigned char)(want[i] ^ (i < gl ? got[i] : 0));
    return diff == 0;
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, request_t *req, const char *allow) {
    char *buf;
    size_t len;
    const char *type;
    if (req->reply) {
        buf = json_dumps(req->reply, JSON_COMPACT);
        if (!buf)
            return MHD_NO;
        len = strlen(buf);
        type = "application/json; charset=utf-8";
    } else {
        buf = req->text ? req->text : strdup("");
        req->text = NULL;
        if (!buf)
            return MHD_NO;
        len = req->text_len;
        type = req->text_type ? req->text_type : "text/plain; charset=utf-8";
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(buf);
        return MHD_NO;
    }
    enum MHD_Result ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (ok == MHD_YES && req->location[0])
        ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, req->location);
    if (ok == MHD_YES && allow)
        ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    if (ok == MHD_YES && req->retry_after_s > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", req->retry_after_s);
        ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    if (ok == MHD_YES && is_api(req->path))
        ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (ok == MHD_YES && req->status == 401)
        ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"streamlab\"");
    if (ok != MHD_YES) {
        MHD_destroy_response(resp);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)req->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void request_clear(request_t *req) {
    if (req->reply)
        json_decref(req->reply);
    free(req->text);
    req->reply = NULL;
    req->text = NULL;
}

/* ---- static files ---- */

static const char *content_type_for(const char *path) {
    static const struct { const char *ext, *type; } types[] = {
        {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
        {".json", "application/json; charset=utf-8"}, {".svg", "image/svg+xml"}, {".png", "image/png"},
        {".ico", "image/x-icon"}, {".txt", "text/plain; charset=utf-8"}, {".map", "application/json"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

static void not_found_html(request_t *req) {
    static const char page[] = "<!doctype html><title>404 Not Found</title><h1>404 Not Found</h1>"
                               "<p>No such page. The dashboard is at <a href=\"/\">/</a>.</p>\n";
    req->status = 404;
    req->text = strdup(page);
    req->text_len = req->text ? sizeof page - 1 : 0;
    req->text_type = "text/html; charset=utf-8";
}

static enum MHD_Result serve_static(app_t *app, struct MHD_Connection *conn, request_t *req) {
    const char *path = req->path;
    /* No segment may be "..", no NUL or backslash; then the resolved file must lie in web/. */
    bool bad = strstr(path, "/..") != NULL || strchr(path, '\\') != NULL || path[0] != '/';
    char rel[PATH_MAX], full[PATH_MAX], real_web[PATH_MAX], real_file[PATH_MAX];
    snprintf(rel, sizeof rel, "%s", strcmp(path, "/") == 0 ? "/index.html" : path);
    if (!bad && realpath(app->cfg.web_dir, real_web) && snprintf(full, sizeof full, "%s%s", real_web, rel) < (int)sizeof full &&
        realpath(full, real_file) && strncmp(real_file, real_web, strlen(real_web)) == 0 &&
        real_file[strlen(real_web)] == '/') {
        struct stat stt;
        int fd = open(real_file, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && fstat(fd, &stt) == 0 && S_ISREG(stt.st_mode) && stt.st_size < (64 << 20)) {
            char etag[64];
            snprintf(etag, sizeof etag, "\"%llx-%llx\"", (unsigned long long)stt.st_mtime,
                     (unsigned long long)stt.st_size);
            const char *inm = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
            struct MHD_Response *resp = NULL;
            unsigned status = 200;
            if (inm && strcmp(inm, etag) == 0) {
                status = 304;
                resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
                close(fd);
            } else {
                resp = MHD_create_response_from_fd((size_t)stt.st_size, fd); /* owns fd */
                if (!resp)
                    close(fd);
            }
            if (!resp)
                return MHD_NO;
            enum MHD_Result ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type_for(real_file));
            if (ok == MHD_YES)
                ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
            if (ok == MHD_YES)
                ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
            if (ok == MHD_YES)
                ok = MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
            enum MHD_Result ret = ok == MHD_YES ? MHD_queue_response(conn, status, resp) : MHD_NO;
            MHD_destroy_response(resp);
            metrics_http("GET", "static", (int)status);
            return ret;
        }
        if (fd >= 0)
            close(fd);
    }
    not_found_html(req);
    metrics_http("GET", "static", 404);
    return send_reply(conn, req, NULL);
}

/* ---- the MHD callbacks ---- */

static void allowed_methods(const char *path, char *out, size_t len) {
    out[0] = 0;
    char buf[1024];
    const char *params[ROUTE_MAX_PARAMS];
    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        if (route_match(routes[i].pattern, path, buf, sizeof buf, params) && !strstr(out, routes[i].method)) {
            if (out[0])
                strncat(out, ", ", len - strlen(out) - 1);
            strncat(out, routes[i].method, len - strlen(out) - 1);
        }
    }
}

/* metrics keep the pointer: give them a string that lives as long as the process */
static const char *static_method(const char *m) {
    static const char *const known[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i], m) == 0)
            return known[i];
    return "OTHER";
}

static enum MHD_Result answer(struct MHD_Connection *conn, request_t *req, const char *allow, const route_t *route) {
    enum MHD_Result r = send_reply(conn, req, allow);
    metrics_http(route ? route->method : static_method(req->method), route ? route->pattern : "unmatched", req->status);
    request_clear(req);
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    (void)version;
    app_t *app = cls;
    conn_ctx_t *ctx = *con_cls;
    request_t req = {.app = app, .conn = conn, .method = method, .path = url, .status = 200};
    if (!ctx) {
        ctx = calloc(1, sizeof *ctx);
        if (!ctx)
            return MHD_NO;
        *con_cls = ctx;
        if (strlen(url) > 512) {
            ctx->answered = true;
            if (is_api(url))
                reply_errorf(&req, SL_E_NOTFOUND, NULL, "path too long");
            else
                not_found_html(&req);
            return answer(conn, &req, NULL, ctx->route);
        }
        ctx->params_buf = malloc(1024);
        if (!ctx->params_buf)
            return MHD_NO;
        bool path_known = false;
        for (size_t i = 0; i < ROUTE_COUNT; i++) {
            const char *params[ROUTE_MAX_PARAMS] = {0};
            if (!route_match(routes[i].pattern, url, ctx->params_buf, 1024, params))
                continue;
            path_known = true;
            if (strcmp(routes[i].method, method) == 0) {
                ctx->route = &routes[i];
                memcpy(ctx->params, params, sizeof params);
                break;
            }
        }
        if (!ctx->route && !is_api(url) && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)) {
            ctx->answered = true;
            return serve_static(app, conn, &req);
        }
        if (!ctx->route) {
            ctx->answered = true;
            if (path_known) {
                char allow[64];
                allowed_methods(url, allow, sizeof allow);
                reply_errorf(&req, SL_E_METHOD, NULL, "%s is not allowed on %s; allowed: %s", method, url, allow);
                return answer(conn, &req, allow, NULL);
            }
            if (!is_api(url)) {
                char allow[] = "GET, HEAD";
                reply_errorf(&req, SL_E_METHOD, NULL, "%s is not allowed on %s; allowed: %s", method, url, allow);
                return answer(conn, &req, allow, NULL);
            }
            reply_errorf(&req, SL_E_NOTFOUND, NULL, "no such endpoint: %s %s", method, url);
            return answer(conn, &req, NULL, ctx->route);
        }
        if (app->cfg.token[0] && (ctx->route->mutating || app->cfg.private_reads) && !token_ok(app, conn)) {
            ctx->answered = true;
            reply_errorf(&req, SL_E_AUTH, NULL, "this server needs \"Authorization: Bearer <token>\" for %s", method);
            return answer(conn, &req, NULL, ctx->route);
        }
        if (strcmp(method, "POST") == 0) {
            const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
            const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
            /* POST /api/examples takes no body: a bare `curl -X POST` needs no Content-Type */
            bool bodiless = ctx->route->fn == handle_examples_import && !ct && (!cl || strcmp(cl, "0") == 0);
            if (!bodiless &&
                (!ct || strncasecmp(ct, "application/json", 16) != 0 || (ct[16] && ct[16] != ';' && ct[16] != ' '))) {
                ctx->answered = true;
                reply_errorf(&req, SL_E_MEDIA, NULL, "send the body as Content-Type: application/json (got %s)",
                             ct ? ct : "none");
                return answer(conn, &req, NULL, ctx->route);
            }
            if (cl && strtoull(cl, NULL, 10) > body_max_for(app, ctx->route)) {
                ctx->answered = true;
                reply_errorf(&req, SL_E_TOOLARGE, NULL, "the body is %s bytes; the limit is %zu", cl,
                             body_max_for(app, ctx->route));
                return answer(conn, &req, NULL, ctx->route);
            }
        }
        return MHD_YES;
    }
    if (ctx->answered) { /* a reply is queued; swallow any body */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (ctx->overflow || ctx->body_len + n > body_max_for(app, ctx->route)) {
            ctx->overflow = true;
            return MHD_YES;
        }
        if (ctx->body_len + n + 1 > ctx->body_cap) {
            size_t cap = ctx->body_cap ? ctx->body_cap : 4096;
            while (cap < ctx->body_len + n + 1)
                cap *= 2;
            char *b = realloc(ctx->body, cap);
            if (!b)
                return MHD_NO;
            ctx->body = b;
            ctx->body_cap = cap;
        }
        memcpy(ctx->body + ctx->body_len, upload_data, n);
        ctx->body_len += n;
        ctx->body[ctx->body_len] = 0;
        return MHD_YES;
    }
    /* the whole request is in */
    ctx->answered = true;
    if (ctx->overflow) {
        reply_errorf(&req, SL_E_TOOLARGE, NULL, "the body is larger than the limit of %zu bytes",
                     body_max_for(app, ctx->route));
        return answer(conn, &req, NULL, ctx->route);
    }
    memcpy(req.params, ctx->params, sizeof req.params);
    req.body = ctx->body;
    req.body_len = ctx->body_len;
    ctx->route->fn(&req);
    if (!req.reply && !req.text)
        reply_errorf(&req, SL_E_INTERNAL, NULL, "the handler gave no answer");
    return answer(conn, &req, NULL, ctx->route);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
    (void)cls, (void)conn, (void)toe;
    conn_ctx_t *ctx = *con_cls;
    if (!ctx)
        return;
    free(ctx->body);
    free(ctx->params_buf);
    free(ctx);
    *con_cls = NULL;
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* MHD's default unescaping (each %HH of two hex digits; anything else as sent), but a
 * %00 is kept as sent: decoded, its NUL would end the C string that the router and the
 * handlers see early, and /api/experiments/%00 would route as /api/experiments/ (the
 * list), /index.html%00.png serve /index.html. Kept, "%00" is in no route, id or file
 * name: 404. MHD uses it for the path and each query-string name and value. */
static size_t unescape_but_nul(void *cls, struct MHD_Connection *conn, char *s) {
    (void)cls, (void)conn;
    char *out = s;
    for (const char *in = s; *in;) {
        int hi = in[0] == '%' ? hex_digit(in[1]) : -1;
        int lo = hi >= 0 ? hex_digit(in[2]) : -1;
        if (lo >= 0 && (hi | lo)) {
            *out++ = (char)(hi << 4 | lo);
            in += 3;
        } else {
            *out++ = *in++;
        }
    }
    *out = 0;
    return (size_t)(out - s);
}

static void log_mhd(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    fprintf(stderr, "streamlab: http: ");
    vfprintf(stderr, fmt, ap);
}

int http_start(app_t *app, char *errbuf, size_t errlen) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *ai = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", app->cfg.port);
    const char *host = app->cfg.listen_host[0] ? app->cfg.listen_host : NULL;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0 || !ai) {
        snprintf(errbuf, errlen, "cannot resolve listen address %s:%d: %s", host ? host : "*", app->cfg.port,
                 gai_strerror(gai));
        return -1;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
#ifdef MHD_USE_EPOLL
    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
        flags |= MHD_USE_EPOLL;
#endif
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned pool = (unsigned)(ncpu > 1 ? (ncpu > 16 ? 16 : ncpu) : 1);
    app->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, app, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL, MHD_OPTION_SOCK_ADDR,
        ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, app, MHD_OPTION_UNESCAPE_CALLBACK, unescape_but_nul, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, pool, MHD_OPTION_CONNECTION_LIMIT, (unsigned)app->cfg.conn_max,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)app->cfg.conn_per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)app->cfg.conn_timeout_s, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!app->daemon) {
        snprintf(errbuf, errlen, "cannot listen on %s:%d (in use, or not an address of this host?)",
                 host ? host : "*", app->cfg.port);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(app->daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (info && info->port)
        app->cfg.port = info->port;
    return 0;
}

void http_stop(app_t *app) {
    if (app->daemon) {
        MHD_stop_daemon(app->daemon);
        app->daemon = NULL;
    }
}
