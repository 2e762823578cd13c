/* push.c — delivering finished experiments to a central streamlab (see push.h).
 *
 * The HTTP client is the least that works: one connection per delivery, "Connection:
 * close", Content-Length, no redirects, no TLS (put a TLS proxy in front where needed).
 * Connect waits at most PUSH_CONNECT_S, each send or receive at most PUSH_IO_S.
 * What a reply means: 2xx delivered (the central import is idempotent, so "unchanged"
 * is delivered too); no answer, 5xx, 409 or 429 try again later; any other 4xx (or a
 * redirect) is refused for good: the entry keeps its error and is not tried again.
 * It must not lose an entry: one is removed only after a 2xx. */
#include "push.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../db/bundle.h"
#include "../db/outbox.h"

#define PUSH_CONNECT_S 5
#define PUSH_IO_S 30
#define PUSH_REPLY_MAX 8192 /* bytes of a reply kept (status line, headers, an error's JSON) */

struct push {
    app_t *app;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    unsigned long long generation; /* bumped by push_enqueue */
};

typedef struct push_target {
    char host[256];       /* for getaddrinfo: no brackets */
    char port[8];
    char host_header[300];
    char path[512];       /* prefix + "/api/import" */
} push_target_t;

typedef enum { DELIVERED, TRY_LATER, REFUSED } delivery_t;

/* ---- the URL ---- */

static int parse_url(const char *url, push_target_t *t, char *why, size_t whylen) {
    memset(t, 0, sizeof *t);
    if (strncasecmp(url, "http://", 7) != 0) {
        snprintf(why, whylen, "the push URL must start with http:// (plain HTTP; got \"%.80s\")", url);
        return -1;
    }
    const char *auth = url + 7;
    size_t alen = strcspn(auth, "/");
    const char *prefix = auth + alen;
    for (const char *c = url; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '?' || *c == '#' || *c == '@') {
            snprintf(why, whylen, "the push URL may not hold spaces, control characters, '?', '#' or '@'");
            return -1;
        }
    const char *host = auth, *port = NULL;
    size_t hlen;
    if (auth[0] == '[') { /* [::1]:8080 */
        const char *close = memchr(auth, ']', alen);
        if (!close) {
            snprintf(why, whylen, "the push URL's IPv6 address lacks its ']'");
            return -1;
        }
        host = auth + 1;
        hlen = (size_t)(close - host);
        if (close + 1 < auth + alen) {
            if (close[1] != ':') {
                snprintf(why, whylen, "the push URL has something after its IPv6 address that is not :PORT");
                return -1;
            }
            port = close + 2;
        }
    } else {
        const char *colon = memchr(auth, ':', alen);
        hlen = colon ? (size_t)(colon - auth) : alen;
        if (colon)
            port = colon + 1;
    }
    size_t plen = port ? (size_t)(auth + alen - port) : 0;
    if (hlen == 0 || hlen >= sizeof t->host) {
        snprintf(why, whylen, "the push URL needs a host (http://HOST:PORT)");
        return -1;
    }
    if (port && (plen == 0 || plen > 5 || strspn(port, "0123456789") < plen || atoi(port) < 1 || atoi(port) > 65535)) {
        snprintf(why, whylen, "the push URL's port must be a number from 1 to 65535");
        return -1;
    }
    snprintf(t->host, sizeof t->host, "%.*s", (int)hlen, host);
    snprintf(t->port, sizeof t->port, "%.*s", port ? (int)plen : 2, port ? port : "80");
    snprintf(t->host_header, sizeof t->host_header, "%.*s", (int)alen, auth);
    size_t prefix_len = strlen(prefix);
    while (prefix_len > 0 && prefix[prefix_len - 1] == '/')
        prefix_len--;
    if (prefix_len + sizeof "/api/import" > sizeof t->path) {
        snprintf(why, whylen, "the push URL's path is too long");
        return -1;
    }
    snprintf(t->path, sizeof t->path, "%.*s/api/import", (int)prefix_len, prefix);
    return 0;
}

int push_check_url(const char *url, char *why, size_t whylen) {
    push_target_t t;
    return parse_url(url, &t, why, whylen);
}

/* ---- the HTTP client ---- */

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A connected, blocking socket with I/O timeouts, or -1 with why. */
static int connect_to(const push_target_t *t, char *why, size_t whylen) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int gai = getaddrinfo(t->host, t->port, &hints, &ai);
    if (gai != 0) {
        snprintf(why, whylen, "cannot resolve %s: %s", t->host, gai_strerror(gai));
        return -1;
    }
    int fd = -1;
    snprintf(why, whylen, "no address for %s", t->host);
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            snprintf(why, whylen, "socket: %s", strerror(errno));
            continue;
        }
        int rc = connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int n;
            do
                n = poll(&pfd, 1, PUSH_CONNECT_S * 1000);
            while (n < 0 && errno == EINTR);
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (n == 0)
                soerr = ETIMEDOUT;
            else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
                soerr = errno;
            rc = soerr ? -1 : 0;
            errno = soerr;
        }
        struct timeval tv = {.tv_sec = PUSH_IO_S};
        int flags = rc == 0 ? fcntl(fd, F_GETFL) : -1;
        if (rc != 0 || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
            snprintf(why, whylen, "cannot connect to %s:%s: %s", t->host, t->port, strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    return fd;
}

static int send_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* POST body to the target. Returns the HTTP status (reply holds the body's start), or -1
 * with why when no answer came. */
static int http_post(const push_target_t *t, const char *token, const char *body, size_t len, char *reply,
                     size_t replylen, char *why, size_t whylen) {
    char head[1536];
    int hl = snprintf(head, sizeof head,
                      "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: streamlab/%s\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n%s%s%s\r\n",
                      t->path, t->host_header, STREAMLAB_VERSION, len, token[0] ? "Authorization: Bearer " : "",
                      token, token[0] ? "\r\n" : "");
    if (hl < 0 || (size_t)hl >= sizeof head) {
        snprintf(why, whylen, "the request's headers are too long");
        return -1;
    }
    int fd = connect_to(t, why, whylen);
    if (fd < 0)
        return -1;
    /* The server may answer early (413) and close: a failed send is judged by the reply. */
    int sent = send_all(fd, head, (size_t)hl) == 0 && send_all(fd, body, len) == 0 ? 0 : errno;
    char *buf = malloc(PUSH_REPLY_MAX + 1);
    size_t got = 0;
    int status = -1;
    if (!buf) {
        snprintf(why, whylen, "out of memory reading the reply");
        goto done;
    }
    for (;;) {
        char sink[4096];
        char *to = got < PUSH_REPLY_MAX ? buf + got : sink;
        size_t room = got < PUSH_REPLY_MAX ? PUSH_REPLY_MAX - got : sizeof sink;
        ssize_t n = recv(fd, to, room, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(why, whylen, "no reply from %s:%s: %s", t->host, t->port,
                     errno == EAGAIN || errno == EWOULDBLOCK ? "timed out" : strerror(errno));
            goto done;
        }
        if (n == 0)
            break;
        if (to == buf + got)
            got += (size_t)n;
    }
    buf[got] = 0;
    int major, minor, code;
    if (sscanf(buf, "HTTP/%d.%d %3d", &major, &minor, &code) != 3 || code < 100 || code > 599) {
        if (sent)
            snprintf(why, whylen, "sending to %s:%s failed: %s", t->host, t->port, strerror(sent));
        else
            snprintf(why, whylen, "%s:%s answered something that is not HTTP", t->host, t->port);
        goto done;
    }
    status = code;
    const char *start = strstr(buf, "\r\n\r\n");
    snprintf(reply, replylen, "%s", start ? start + 4 : "");
done:
    free(buf);
    close(fd);
    return status;
}

/* ---- one delivery ---- */

/* The central server's error message, where its reply is API.md's error JSON. */
static void describe_reply(int status, const char *reply, char *why, size_t whylen) {
    json_t *j = json_loads(reply, 0, NULL);
    const char *msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
    snprintf(why, whylen, "HTTP %d%s%.400s", status, msg || reply[0] ? ": " : "", msg ? msg : reply);
    json_decref(j);
}

static delivery_t deliver(app_t *app, store_t *store, const char *id, char *why, size_t whylen) {
    push_target_t t;
    if (parse_url(app->cfg.push_url, &t, why, whylen))
        return REFUSED;
    sl_error_t err = {0};
    json_t *bundle = store_export_bundle(store, &id, 1, NULL, &err);
    char *body = bundle ? json_dumps(bundle, JSON_COMPACT) : NULL;
    if (bundle && !body)
        sl_error_set(&err, SL_E_NOMEM, "", "out of memory");
    json_decref(bundle);
    if (!body) {
        snprintf(why, whylen, "cannot make its bundle: %s", err.message);
        return err.code == SL_E_NOTFOUND ? REFUSED : TRY_LATER;
    }
    char reply[1024];
    int status = http_post(&t, app->cfg.push_token, body, strlen(body), reply, sizeof reply, why, whylen);
    free(body);
    if (status < 0)
        return TRY_LATER;
    if (status >= 200 && status < 300)
        return DELIVERED;
    describe_reply(status, reply, why, whylen);
    if (status >= 500 || status == 409 || status == 429)
        return TRY_LATER;
    if (status >= 300 && status < 400) {
        size_t n = strlen(why);
        snprintf(why + n, whylen - n, " (redirects are not followed: push to the central server's own address)");
    }
    return REFUSED;
}

/* Deliver one entry and record what happened. Returns the outcome. */
static delivery_t deliver_entry(app_t *app, store_t *store, const char *id, double backoff_s) {
    char why[600] = "";
    sl_error_t err = {0};
    delivery_t d = deliver(app, store, id, why, sizeof why);
    int rc = SL_OK;
    if (d == DELIVERED) {
        rc = store_outbox_remove(store, id, &err);
        fprintf(stderr, "streamlab: push: %s delivered to %s\n", id, app->cfg.push_url);
    } else if (d == REFUSED) {
        rc = store_outbox_give_up(store, id, why, &err);
        fprintf(stderr, "streamlab: push: %s refused by %s, not retried (it stays in the outbox): %s\n", id,
                app->cfg.push_url, why);
    } else {
        rc = store_outbox_defer(store, id, backoff_s, why, &err);
        fprintf(stderr, "streamlab: push: %s not delivered (%s); next try in %.0f s\n", id, why, backoff_s);
    }
    if (rc)
        fprintf(stderr, "streamlab: push: %s: cannot update the outbox: %s\n", id, err.message);
    return d;
}

/* ---- serve: the push thread ---- */

/* Sleep up to seconds; return early when stopping (or, with on_enqueue, when work came). */
static void push_sleep(struct push *p, double seconds, bool on_enqueue) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double whole = floor(seconds);
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((seconds - whole) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->lock);
    unsigned long long gen = p->generation;
    while (!p->stopping && !(on_enqueue && p->generation != gen))
        if (pthread_cond_timedwait(&p->wake, &p->lock, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&p->lock);
}

static bool push_stopping(struct push *p) {
    pthread_mutex_lock(&p->lock);
    bool stopping = p->stopping;
    pthread_mutex_unlock(&p->lock);
    return stopping;
}

static void *push_main(void *arg) {
    struct push *p = arg;
    app_t *app = p->app;
    sl_error_t err = {0};
    store_t *store = app_store(app, &err);
    if (!store) {
        fprintf(stderr, "streamlab: push: cannot open the store: %s (nothing will be pushed)\n", err.message);
        return NULL;
    }
    double backoff_s = PUSH_BACKOFF_MIN_S;
    while (!push_stopping(p)) {
        char id[64];
        int got = store_outbox_next(store, true, id, &err);
        if (got < 0)
            fprintf(stderr, "streamlab: push: %s\n", err.message);
        if (got <= 0) { /* nothing due: wait for work (deferred entries fall due within a second) */
            push_sleep(p, 1.0, true);
            continue;
        }
        delivery_t d = deliver_entry(app, store, id, backoff_s);
        if (d == TRY_LATER) { /* the central server is unreachable or busy: back off */
            push_sleep(p, backoff_s, false);
            backoff_s = fmin(backoff_s * 2, PUSH_BACKOFF_MAX_S);
        } else {
            backoff_s = PUSH_BACKOFF_MIN_S;
        }
    }
    return NULL;
}

void push_enqueue(app_t *app, store_t *store, const char *experiment_id) {
    if (!app->cfg.push_url[0])
        return;
    sl_error_t err = {0};
    if (store_outbox_add(store, experiment_id, &err)) {
        fprintf(stderr, "streamlab: push: %s: cannot add it to the outbox: %s\n", experiment_id, err.message);
        return;
    }
    struct push *p = app->push;
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

int push_start(app_t *app, sl_error_t *err) {
    if (!app->cfg.push_url[0])
        return SL_OK;
    struct push *p = calloc(1, sizeof *p);
    if (!p)
        return sl_error_set(err, SL_E_NOMEM, "", "out of memory starting the push thread");
    p->app = app;
    if (pthread_mutex_init(&p->lock, NULL)) {
        free(p);
        return sl_error_set(err, SL_E_INTERNAL, "", "cannot create the push thread's lock");
    }
    if (pthread_cond_init(&p->wake, NULL)) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        return sl_error_set(err, SL_E_INTERNAL, "", "cannot create the push thread's condition");
    }
    int rc = pthread_create(&p->thread, NULL, push_main, p);
    if (rc) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return sl_error_set(err, SL_E_INTERNAL, "", "cannot start the push thread: %s", strerror(rc));
    }
    app->push = p;
    fprintf(stderr, "streamlab: push: finished experiments go to %s%s\n", app->cfg.push_url,
            app->cfg.push_token[0] ? " (with STREAMLAB_PUSH_TOKEN)" : "");
    return SL_OK;
}

void push_stop(app_t *app) {
    struct push *p = app->push;
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    int rc = pthread_join(p->thread, NULL);
    if (rc)
        fprintf(stderr, "streamlab: push: joining the push thread failed: %s\n", strerror(rc));
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
    app->push = NULL;
}

/* ---- run: deliver in the caller's thread ---- */

static void sleep_s(double seconds) {
    struct timespec ts = {.tv_sec = (time_t)seconds, .tv_nsec = (long)((seconds - floor(seconds)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int push_drain(app_t *app, store_t *store, const char *experiment_id, double wait_s, char *why, size_t whylen) {
    double deadline = mono_s() + wait_s, backoff_s = PUSH_BACKOFF_MIN_S;
    sl_error_t err = {0};
    for (;;) {
        char id[64];
        int got = store_outbox_next(store, false, id, &err); /* a new process tries every entry at once */
        if (got < 0) {
            snprintf(why, whylen, "%s", err.message);
            return 1;
        }
        if (got == 0)
            break;
        delivery_t d = deliver_entry(app, store, id, backoff_s);
        double left = deadline - mono_s();
        if (left <= 0)
            break;
        if (d != TRY_LATER) {
            backoff_s = PUSH_BACKOFF_MIN_S;
            continue;
        }
        sleep_s(fmin(backoff_s, left));
        backoff_s = fmin(backoff_s * 2, PUSH_BACKOFF_MAX_S);
    }
    outbox_entry_t e;
    if (store_outbox_get(store, experiment_id, &e, &err)) {
        snprintf(why, whylen, "%s", err.message);
        return 1;
    }
    if (!e.present)
        return 0;
    snprintf(why, whylen, "%s after %d attempt%s: %s", e.given_up ? "refused" : "not delivered", e.attempts,
             e.attempts == 1 ? "" : "s", e.last_error);
    return 1;
}
