/* fuzz_router.c — libFuzzer harness of the HTTP layer (server/http.c and the handlers
 * behind it), driven the way a client drives it: over a loopback socket.
 *
 * LLVMFuzzerInitialize starts two real libmicrohttpd daemons in this process, each with
 * its own temporary SQLite store, the sim machine and no workers (queued work stays
 * queued): daemon 0 open, daemon 1 with a token and --private. The first input byte picks
 * the daemon; the rest is sent as raw bytes (one or more HTTP requests), the write side
 * is shut, and the reply is read to the end. Findings (abort, so libFuzzer keeps the
 * input), besides what ASan and UBSan report inside the daemon's threads:
 *   - a non-JSON reply holding the marker of a file outside web/ (static files escaped
 *     web/; web/ holds a symlink to that file and one to its parent);
 *   - a 500, or a JSON 5xx other than 503 (a bad request must get a 4xx);
 *   - a JSON error answer that is not {"error": {"code": string, "message": string}};
 *   - on daemon 1, a 2xx answer to an /api or /metrics request without the token;
 *   - no complete answer within 10 s to a complete request (the server is stuck). */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../server/http.h"
#include "../../server/queue.h"
#include "fuzz_util.h"

#define SECRET_MARKER "STREAMLAB-FUZZ-SECRET-OUTSIDE-WEB"
#define FUZZ_TOKEN "fuzz-token-0123456789"
#define REPLY_MAX (8u << 20)

static app_t apps[2];
static char tmpdir[256];
static char *reply_buf;

static void close_store(void *p) {
    store_close(p);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* at exit: the daemons' stores and the web folder go (the daemons are not stopped:
 * a finding may have left them in any state) */
static void remove_tmpdir(void) {
    if (tmpdir[0] && !getenv("FUZZ_KEEP_TMP"))
        nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f))
        FUZZ_FAIL("cannot write %s", path);
}

static void make_web(void) {
    char p[512], q[512];
    snprintf(tmpdir, sizeof tmpdir, "/tmp/streamlab-fuzz-router-XXXXXX");
    if (!mkdtemp(tmpdir))
        FUZZ_FAIL("mkdtemp: %s", strerror(errno));
    atexit(remove_tmpdir);
    snprintf(p, sizeof p, "%s/secret.txt", tmpdir);
    write_file(p, SECRET_MARKER "\n");
    snprintf(p, sizeof p, "%s/web", tmpdir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/web/sub", tmpdir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/web/index.html", tmpdir);
    write_file(p, "<!doctype html><title>fuzz</title><p>index</p>\n");
    snprintf(p, sizeof p, "%s/web/app.js", tmpdir);
    write_file(p, "export const x = 1;\n");
    snprintf(p, sizeof p, "%s/web/style.css", tmpdir);
    write_file(p, "body { color: black }\n");
    snprintf(p, sizeof p, "%s/web/sub/data.json", tmpdir);
    write_file(p, "{\"a\": 1}\n");
    snprintf(p, sizeof p, "%s/secret.txt", tmpdir);
    snprintf(q, sizeof q, "%s/web/escape.txt", tmpdir);
    if (symlink(p, q))
        FUZZ_FAIL("symlink: %s", strerror(errno));
    snprintf(q, sizeof q, "%s/web/up", tmpdir);
    if (symlink("..", q))
        FUZZ_FAIL("symlink: %s", strerror(errno));
}

static void start_app(app_t *app, int which) {
    config_t *c = &app->cfg;
    memset(app, 0, sizeof *app);
    snprintf(c->listen_host, sizeof c->listen_host, "127.0.0.1");
    c->port = 0;
    snprintf(c->db_path, sizeof c->db_path, "%s/store%d.db", tmpdir, which);
    snprintf(c->web_dir, sizeof c->web_dir, "%s/web", tmpdir);
    c->force_sim = true;
    c->workers = 0;
    c->sim_devices = 1;
    c->body_max_bytes = 64 << 10;
    c->import_max_bytes = 1 << 20;
    c->queue_max = 2000;
    c->sweep_max = 64;
    c->conn_max = 64;
    c->conn_per_ip = 64;
    c->conn_timeout_s = 5;
    if (which == 1) {
        snprintf(c->token, sizeof c->token, FUZZ_TOKEN);
        c->private_reads = true;
    }
    if (pthread_key_create(&app->store_key, close_store))
        FUZZ_FAIL("pthread_key_create");
    machine_discover(&app->machine, true, "fuzz");
    sl_error_t err = {0};
    machine_calibrate(&app->machine, &err);
    store_t *s = NULL;
    if (store_open(c->db_path, &s, &err) || store_migrate(s, &err) || store_upsert_machine(s, &app->machine, &err))
        FUZZ_FAIL("store %s: %s", c->db_path, err.message);
    store_close(s);
    if (queue_start(app, 0, &app->queue, &err))
        FUZZ_FAIL("queue_start: %s", err.message);
    char msg[512];
    if (http_start(app, msg, sizeof msg))
        FUZZ_FAIL("http_start: %s", msg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    signal(SIGPIPE, SIG_IGN);
    setenv("STREAMLAB_SIM_DEVICES", "1", 1);
    make_web();
    start_app(&apps[0], 0);
    start_app(&apps[1], 1);
    reply_buf = malloc(REPLY_MAX + 1);
    if (!reply_buf)
        FUZZ_FAIL("out of memory");
    fprintf(stderr, "fuzz_router: daemons on 127.0.0.1:%d (open) and :%d (token, private); files in %s\n",
            apps[0].cfg.port, apps[1].cfg.port, tmpdir);
    return 0;
}

/* Send everything, shut the write side, read until EOF. Returns the reply length, or
 * -1 when the server did not finish within the deadline. */
static long exchange(int port, const uint8_t *data, size_t size) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {.tv_sec = 10};
    int fd = -1;
    /* a signal (libFuzzer's own timers) can interrupt connect: a new socket and again,
     * a few times, before it counts as a finding (seen once in CI) */
    for (int attempt = 0; fd < 0; attempt++) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            FUZZ_FAIL("socket: %s", strerror(errno));
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            break;
        int e = errno;
        close(fd);
        fd = -1;
        if (e != EINTR || attempt >= 4)
            FUZZ_FAIL("connect to the daemon on port %d: %s", port, strerror(e));
    }
    size_t off = 0;
    while (off < size) {
        ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the server may close early (413, a parse error): not a finding */
        off += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    long len = 0;
    for (;;) {
        ssize_t n = recv(fd, reply_buf + len, REPLY_MAX - (size_t)len, 0);
        if (n > 0) {
            len += n;
            if ((size_t)len == REPLY_MAX)
                break;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            len = -1 - len; /* timed out */
        break;
    }
    close(fd);
    if (len >= 0)
        reply_buf[len] = 0;
    return len;
}

static const char *memfind(const char *hay, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return hay + i;
    return NULL;
}

/* The header's value (case-insensitive name) within head[0..n), copied to out. */
static int header_value(const char *head, size_t n, const char *name, char *out, size_t outlen) {
    size_t k = strlen(name);
    for (const char *p = head; p && p < head + n;) {
        const char *eol = memfind(p, (size_t)(head + n - p), "\r\n");
        size_t linelen = eol ? (size_t)(eol - p) : (size_t)(head + n - p);
        if (linelen > k && strncasecmp(p, name, k) == 0 && p[k] == ':') {
            const char *v = p + k + 1;
            while (*v == ' ')
                v++;
            size_t vl = (size_t)(p + linelen - v);
            if (vl >= outlen)
                vl = outlen - 1;
            memcpy(out, v, vl);
            out[vl] = 0;
            return 1;
        }
        p = eol ? eol + 2 : NULL;
    }
    return 0;
}

/* Must the first request carry the token on daemon 1 (an /api or /metrics path; the
 * dashboard's files stay open so that it can ask for the token), and does it? */
static int needs_token_but_lacks_it(const uint8_t *data, size_t size) {
    const char *s = (const char *)data;
    const char *sp = memchr(s, ' ', size);
    if (!sp || (size_t)(sp + 1 - s) >= size)
        return 0;
    size_t rest = size - (size_t)(sp + 1 - s);
    int api = (rest >= 4 && memcmp(sp + 1, "/api", 4) == 0) || (rest >= 8 && memcmp(sp + 1, "/metrics", 8) == 0);
    return api && memfind(s, size, "Bearer " FUZZ_TOKEN) == NULL;
}

static void check_replies(const char *reply, size_t len, const uint8_t *req, size_t req_len, int which) {
    const char *p = reply, *end = reply + len;
    int first = 1;
    while (p < end && end - p >= 12 && strncmp(p, "HTTP/1.", 7) == 0) {
        const char *hend = memfind(p, (size_t)(end - p), "\r\n\r\n");
        if (!hend)
            return;
        int status = atoi(p + 9);
        size_t hlen = (size_t)(hend - p);
        char ctype[128] = "", clen[32] = "";
        header_value(p, hlen, "Content-Type", ctype, sizeof ctype);
        /* libmicrohttpd's own 501 (method) and 505 (version) are right; a 500, or any 5xx
         * but 503 from streamlab's JSON layer, is a bad request that broke something */
        if (status == 500 || (status > 500 && status != 503 && strncmp(ctype, "application/json", 16) == 0))
            FUZZ_FAIL("status %d for a client's bytes (a bad request must get a 4xx)\n  reply: %.600s", status, p);
        if (which == 1 && first && status >= 200 && status < 300 && needs_token_but_lacks_it(req, req_len))
            FUZZ_FAIL("daemon with a token and --private answered %d without the token\n  reply: %.400s", status, p);
        first = 0;
        if (!header_value(p, hlen, "Content-Length", clen, sizeof clen))
            return; /* chunked or to the close: stop here */
        size_t blen = (size_t)strtoull(clen, NULL, 10);
        const char *body = hend + 4;
        if ((size_t)(end - body) < blen)
            return; /* a HEAD reply, or cut short */
        /* JSON answers may echo the request (which can hold the marker: libFuzzer learns it
         * from this very comparison); a file's content may not hold it */
        if (strncmp(ctype, "application/json", 16) != 0 && memfind(body, blen, SECRET_MARKER))
            FUZZ_FAIL("a static file outside web/ was served\n  reply: %.600s", p);
        /* FUZZ_ROUTER_SKIP_ERROR_SHAPE=1 looks past the known {"error":{}} answers
         * (tests/fuzz/crashes/fuzz_router-*-non-utf8-*) */
        if (status >= 400 && strncmp(ctype, "application/json", 16) == 0 && !getenv("FUZZ_ROUTER_SKIP_ERROR_SHAPE")) {
            json_error_t jerr;
            json_t *j = json_loadb(body, blen, 0, &jerr);
            json_t *e = json_object_get(j, "error");
            if (!json_is_string(json_object_get(e, "code")) || !json_is_string(json_object_get(e, "message")) ||
                !json_string_length(json_object_get(e, "message")))
                FUZZ_FAIL("error %d is not {\"error\": {\"code\", \"message\"}}\n  body: %.*s", status,
                          (int)(blen > 600 ? 600 : blen), body);
            json_decref(j);
        }
        p = body + blen;
    }
}

/* Is the input a complete request (so the server owes an answer)? Only then is a
 * timeout a finding: a half request may be held until --timeout. */
static int looks_complete(const uint8_t *data, size_t size) {
    const char *s = (const char *)data;
    const char *hend = memfind(s, size, "\r\n\r\n");
    if (!hend || memfind(s, (size_t)(hend - s), "Content-Length") || memfind(s, (size_t)(hend - s), "content-length") ||
        memfind(s, (size_t)(hend - s), "Transfer-Encoding") || memfind(s, (size_t)(hend - s), "transfer-encoding"))
        return 0;
    return strncmp(s, "GET /", 5) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    int which = data[0] & 1;
    data++, size--;
    long len = exchange(apps[which].cfg.port, data, size);
    if (len < 0) {
        if (looks_complete(data, size))
            FUZZ_FAIL("no complete answer within 10 s to a complete GET (got %ld bytes)", -1 - len);
        return 0;
    }
    check_replies(reply_buf, (size_t)len, data, size, which);
    return 0;
}
