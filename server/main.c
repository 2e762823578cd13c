/* main.c — streamlab's entry: configuration from defaults, then STREAMLAB_* environment,
 * then flags (in that order, in one place), and the subcommands:
 *   serve (default)   the HTTP service with its queue and workers
 *   run SPEC.json     one experiment without the server; prints the experiment JSON
 *   devices           what this machine is (GPUs, calibration) as JSON
 *   migrate           create or upgrade the store and exit
 *   import PATH       import a bundle file, or a folder of them, into the store
 * Start-up and shutdown read top to bottom in serve(). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_files.h"
#include "http.h"
#include "push.h"
#include "queue.h"
#include "sim_of.h"
#include "spec.h"

static app_t app;

static void usage(FILE *f) {
    fprintf(f,
            "usage: streamlab [serve] [options]        run the service\n"
            "       streamlab run SPEC.json [options]  run one experiment, print it as JSON\n"
            "       streamlab devices [options]        print this machine (GPUs, calibration)\n"
            "       streamlab migrate [--db PATH]      create or upgrade the store\n"
            "       streamlab import PATH [--db PATH]  import a bundle file, or every *.json bundle of a folder\n"
            "                                          (e.g. examples/), into the store; prints the counts\n"
            "options (environment in brackets):\n"
            "  --listen HOST:PORT   [STREAMLAB_LISTEN]   default 127.0.0.1:8080\n"
            "  --db PATH            [STREAMLAB_DB]       default ./streamlab.db (run: in memory)\n"
            "  --web DIR            [STREAMLAB_WEB]      default ./web\n"
            "  --examples DIR       [STREAMLAB_EXAMPLES] example bundles (/api/examples), default ./examples\n"
            "  --backend auto|sim   [STREAMLAB_BACKEND]  sim: use the simulator even with a GPU\n"
            "  --workers N          worker threads (default one per device; 0: queue only)\n"
            "  --worker-cpu N       [STREAMLAB_WORKER_CPU] issue the GPU work from CPU N (worker i: N + i), and\n"
            "                       calibrate there: a pinned benchmark's other program on N meets no other thread\n"
            "  --sim-devices N      [STREAMLAB_SIM_DEVICES] simulated GPUs (default 1)\n"
            "  --token-file PATH    [STREAMLAB_TOKEN]    POST/DELETE need 'Authorization: Bearer TOKEN'\n"
            "  --private            reads need the token too\n"
            "  --machine-label TEXT [STREAMLAB_MACHINE_LABEL]\n"
            "  --push URL           [STREAMLAB_PUSH_URL] send each finished experiment to a central streamlab\n"
            "                       (http://HOST:PORT; token from STREAMLAB_PUSH_TOKEN), kept until it is accepted\n"
            "  --push-wait S        run --push: how long to keep trying (default 30; then exit 3)\n"
            "  --import-max BYTES   body limit of POST /api/import (default 64 MiB)\n"
            "  --body-max BYTES  --queue-max N  --sweep-max N  --conn-max N  --conn-per-ip N  --timeout S\n");
}

static int parse_listen(const char *s, config_t *c) {
    const char *colon = strrchr(s, ':');
    if (!colon)
        return -1;
    size_t hl = (size_t)(colon - s);
    if (s[0] == '[' && hl >= 2 && s[hl - 1] == ']') { /* [::1]:8080 */
        snprintf(c->listen_host, sizeof c->listen_host, "%.*s", (int)(hl - 2), s + 1);
    } else {
        snprintf(c->listen_host, sizeof c->listen_host, "%.*s", (int)hl, s);
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535)
        return -1;
    c->port = (int)port;
    return 0;
}

/* Every address the host name resolves to is a loopback one (a name that merely starts
 * with "127." could resolve anywhere). */
static bool is_loopback(const char *host) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    if (!host[0] || getaddrinfo(host, NULL, &hints, &ai) != 0 || !ai)
        return false;
    bool all = true;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        if (a->ai_family == AF_INET) {
            const struct sockaddr_in *in = (const struct sockaddr_in *)a->ai_addr;
            all &= (ntohl(in->sin_addr.s_addr) >> 24) == 127;
        } else if (a->ai_family == AF_INET6) {
            const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)a->ai_addr;
            all &= IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
        } else {
            all = false;
        }
    }
    freeaddrinfo(ai);
    return all;
}

static int read_token_file(const char *path, config_t *c) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(c->token, 1, sizeof c->token - 1, f);
    fclose(f);
    c->token[n] = 0;
    c->token[strcspn(c->token, "\r\n \t")] = 0;
    return c->token[0] ? 0 : -1;
}

/* A folder of the repository (web, examples): ./name where ./name/probe exists (run from the
 * checkout), else name beside the binary's folder (build/streamlab -> build/../name). */
static void default_repo_dir(const char *name, const char *probe, char *out, size_t len) {
    struct stat st;
    char here[PATH_MAX];
    snprintf(here, sizeof here, "%s%s%s", name, probe[0] ? "/" : "", probe);
    if (stat(here, &st) == 0) {
        snprintf(out, len, "%s", name);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(out, len, "%.*s/../%s", (int)(len - 5 - strlen(name)), exe, name);
            return;
        }
    }
    snprintf(out, len, "%s", name);
}

static long long int_arg(const char *flag, const char *v, long long lo, long long hi) {
    char *end;
    errno = 0;
    long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || errno || *end || x < lo || x > hi) {
        fprintf(stderr, "streamlab: %s needs an integer from %lld to %lld\n", flag, lo, hi);
        exit(2);
    }
    return x;
}

/* Defaults, then environment, then flags. Returns the index of the first positional
 * argument after the subcommand (or argc). */
static void configure(int argc, char **argv, int first, config_t *c, const char **positional) {
    memset(c, 0, sizeof *c);
    snprintf(c->listen_host, sizeof c->listen_host, "127.0.0.1");
    c->port = 8080;
    snprintf(c->db_path, sizeof c->db_path, "streamlab.db");
    default_repo_dir("web", "index.html", c->web_dir, sizeof c->web_dir);
    default_repo_dir("examples", "", c->examples_dir, sizeof c->examples_dir);
    c->workers = -1;
    c->sim_devices = 1;
    c->body_max_bytes = 1 << 20;
    c->queue_max = 10000;
    c->sweep_max = 1000;
    c->conn_max = 1024;
    c->conn_per_ip = 256;
    c->conn_timeout_s = 30;
    c->import_max_bytes = (size_t)64 << 20; /* jansson needs ~25x a body's size while it parses */
    c->push_wait_s = 30;
    c->worker_cpu = -1;
    const char *e;
    if ((e = getenv("STREAMLAB_LISTEN")) && parse_listen(e, c)) {
        fprintf(stderr, "streamlab: STREAMLAB_LISTEN must be HOST:PORT\n");
        exit(2);
    }
    if ((e = getenv("STREAMLAB_DB")))
        snprintf(c->db_path, sizeof c->db_path, "%s", e);
    if ((e = getenv("STREAMLAB_WEB")))
        snprintf(c->web_dir, sizeof c->web_dir, "%s", e);
    if ((e = getenv("STREAMLAB_EXAMPLES")))
        snprintf(c->examples_dir, sizeof c->examples_dir, "%s", e);
    if ((e = getenv("STREAMLAB_BACKEND")))
        c->force_sim = strcmp(e, "sim") == 0;
    if ((e = getenv("STREAMLAB_SIM_DEVICES")))
        c->sim_devices = (int)int_arg("STREAMLAB_SIM_DEVICES", e, 1, SPEC_MAX_DEVICES);
    if ((e = getenv("STREAMLAB_WORKER_CPU")))
        c->worker_cpu = (int)int_arg("STREAMLAB_WORKER_CPU", e, 0, CPU_SETSIZE - 1);
    if ((e = getenv("STREAMLAB_TOKEN")))
        snprintf(c->token, sizeof c->token, "%s", e);
    if ((e = getenv("STREAMLAB_MACHINE_LABEL")))
        snprintf(c->machine_label, sizeof c->machine_label, "%s", e);
    if ((e = getenv("STREAMLAB_PUSH_URL")))
        snprintf(c->push_url, sizeof c->push_url, "%s", e);
    if ((e = getenv("STREAMLAB_PUSH_TOKEN")))
        snprintf(c->push_token, sizeof c->push_token, "%s", e);
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        char flag[64];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq) {
            snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else {
            snprintf(flag, sizeof flag, "%s", a);
        }
#define VALUE() (val ? val : (i + 1 < argc ? argv[++i] : NULL))
        if (!strcmp(flag, "--listen")) {
            const char *v = VALUE();
            if (!v || parse_listen(v, c)) {
                fprintf(stderr, "streamlab: --listen needs HOST:PORT\n");
                exit(2);
            }
        } else if (!strcmp(flag, "--db")) {
            const char *v = VALUE();
            if (!v) { usage(stderr); exit(2); }
            snprintf(c->db_path, sizeof c->db_path, "%s", v);
        } else if (!strcmp(flag, "--web")) {
            const char *v = VALUE();
            if (!v) { usage(stderr); exit(2); }
            snprintf(c->web_dir, sizeof c->web_dir, "%s", v);
        } else if (!strcmp(flag, "--examples")) {
            const char *v = VALUE();
            if (!v) { usage(stderr); exit(2); }
            snprintf(c->examples_dir, sizeof c->examples_dir, "%s", v);
        } else if (!strcmp(flag, "--backend")) {
            const char *v = VALUE();
            if (!v || (strcmp(v, "sim") && strcmp(v, "auto"))) {
                fprintf(stderr, "streamlab: --backend is auto or sim\n");
                exit(2);
            }
            c->force_sim = strcmp(v, "sim") == 0;
        } else if (!strcmp(flag, "--workers")) {
            c->workers = (int)int_arg("--workers", VALUE(), 0, SPEC_MAX_DEVICES);
        } else if (!strcmp(flag, "--worker-cpu")) {
            c->worker_cpu = (int)int_arg("--worker-cpu", VALUE(), 0, CPU_SETSIZE - 1);
        } else if (!strcmp(flag, "--sim-devices")) {
            c->sim_devices = (int)int_arg("--sim-devices", VALUE(), 1, SPEC_MAX_DEVICES);
        } else if (!strcmp(flag, "--token-file")) {
            const char *v = VALUE();
            if (!v || read_token_file(v, c)) {
                fprintf(stderr, "streamlab: --token-file needs a readable file holding the token\n");
                exit(2);
            }
        } else if (!strcmp(flag, "--private")) {
            c->private_reads = true;
        } else if (!strcmp(flag, "--machine-label")) {
            const char *v = VALUE();
            if (!v) { usage(stderr); exit(2); }
            snprintf(c->machine_label, sizeof c->machine_label, "%s", v);
        } else if (!strcmp(flag, "--push")) {
            const char *v = VALUE();
            if (!v) { usage(stderr); exit(2); }
            snprintf(c->push_url, sizeof c->push_url, "%s", v);
        } else if (!strcmp(flag, "--push-wait")) {
            c->push_wait_s = (int)int_arg("--push-wait", VALUE(), 0, 86400);
        } else if (!strcmp(flag, "--import-max")) {
            c->import_max_bytes = (size_t)int_arg("--import-max", VALUE(), 1024, 1ll << 36);
        } else if (!strcmp(flag, "--body-max")) {
            c->body_max_bytes = (size_t)int_arg("--body-max", VALUE(), 1024, 1ll << 30);
        } else if (!strcmp(flag, "--queue-max")) {
            c->queue_max = (int)int_arg("--queue-max", VALUE(), 1, 10000000);
        } else if (!strcmp(flag, "--sweep-max")) {
            c->sweep_max = (int)int_arg("--sweep-max", VALUE(), 1, 1000000);
        } else if (!strcmp(flag, "--conn-max")) {
            c->conn_max = (int)int_arg("--conn-max", VALUE(), 1, 65536);
        } else if (!strcmp(flag, "--conn-per-ip")) {
            c->conn_per_ip = (int)int_arg("--conn-per-ip", VALUE(), 1, 65536);
        } else if (!strcmp(flag, "--timeout")) {
            c->conn_timeout_s = (int)int_arg("--timeout", VALUE(), 1, 3600);
        } else if (!strcmp(flag, "-h") || !strcmp(flag, "--help")) {
            usage(stdout);
            exit(0);
        } else if (a[0] != '-' && positional && !*positional) {
            *positional = a;
        } else {
            fprintf(stderr, "streamlab: unknown argument %s\n", a);
            usage(stderr);
            exit(2);
        }
#undef VALUE
    }
    char why[256];
    if (c->push_url[0] && push_check_url(c->push_url, why, sizeof why)) {
        fprintf(stderr, "streamlab: --push: %s\n", why);
        exit(2);
    }
    if (strpbrk(c->push_token, "\r\n")) {
        fprintf(stderr, "streamlab: STREAMLAB_PUSH_TOKEN must be one line\n");
        exit(2);
    }
    cpu_set_t allowed;
    if (c->worker_cpu >= 0 &&
        (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || !CPU_ISSET(c->worker_cpu, &allowed))) {
        fprintf(stderr, "streamlab: --worker-cpu %d: not a CPU this process may run on (taskset -p %d says which)\n",
                c->worker_cpu, (int)getpid());
        exit(2);
    }
    char n[16];
    snprintf(n, sizeof n, "%d", c->sim_devices);
    setenv("STREAMLAB_SIM_DEVICES", n, 1); /* machine_discover reads it */
}

static void close_store(void *p) {
    store_close(p);
}

static int open_store(store_t **s) {
    sl_error_t err = {0};
    if (store_open(app.cfg.db_path, s, &err) || store_migrate(*s, &err)) {
        fprintf(stderr, "streamlab: store %s: %s\n", app.cfg.db_path, err.message);
        store_close(*s);
        *s = NULL;
        return -1;
    }
    return 0;
}

/* The machine and its calibration. With --worker-cpu the calibration issues from that
 * CPU, as the workers will (its host costs per call are theirs), then the thread is free
 * again. */
static void discover(void) {
    machine_discover(&app.machine, app.cfg.force_sim, app.cfg.machine_label);
    sl_error_t err = {0};
    cpu_set_t before;
    char why[160];
    bool pinned = app.cfg.worker_cpu >= 0 && pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0;
    if (pinned && app_pin_thread(app.cfg.worker_cpu, why, sizeof why)) {
        fprintf(stderr, "streamlab: --worker-cpu: %s\n", why);
        pinned = false;
    }
    if (machine_calibrate(&app.machine, &err))
        fprintf(stderr, "streamlab: calibration failed: %s (floors will be missing)\n", err.message);
    if (pinned && pthread_setaffinity_np(pthread_self(), sizeof before, &before) != 0)
        fprintf(stderr, "streamlab: cannot unpin the main thread after the calibration\n");
}

static int cmd_migrate(void) {
    store_t *s = NULL;
    if (open_store(&s))
        return 1;
    printf("{\"db\": \"%s\", \"schema_version\": %d}\n", app.cfg.db_path, store_schema_version(s));
    store_close(s);
    return 0;
}

static int cmd_devices(void) {
    discover();
    json_t *m = machine_to_json(&app.machine);
    if (m)
        sim_of_annotate(&app, m);
    char *text = m ? json_dumps(m, JSON_INDENT(2)) : NULL;
    json_decref(m);
    if (!text)
        return 1;
    printf("%s\n", text);
    free(text);
    return 0;
}

static void print_json(FILE *f, json_t *j) {
    char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
    if (text)
        fprintf(f, "%s\n", text);
    free(text);
}

static void print_error(FILE *f, const sl_error_t *err) {
    json_t *e = json_pack("{s:{s:s, s:s, s:s}}", "error", "code", sl_code_name(err->code), "message", err->message,
                          "field", err->field);
    print_json(f, e);
    json_decref(e);
}

/* Counts on stdout as POST /api/import answers them; a bad bundle (or path) is exit 2 with
 * the error JSON on stderr, a store that fails exit 1. */
static int cmd_import(const char *path) {
    sl_error_t err = {0};
    bundle_counts_t counts = {0};
    if (!path) {
        fprintf(stderr, "streamlab: import needs a bundle file or a folder of them\n");
        return 2;
    }
    store_t *s = NULL;
    if (open_store(&s))
        return 1;
    /* no machine is this one: serve records its own machine again when it starts on the store */
    int rc = bundle_files_import(s, path, NULL, 0, &counts, &err);
    store_close(s);
    if (rc) {
        print_error(stderr, &err);
        return err.code == SL_E_DB || err.code == SL_E_NOMEM || err.code == SL_E_INTERNAL ? 1 : 2;
    }
    json_t *out = bundle_counts_json(&counts);
    print_json(stdout, out);
    json_decref(out);
    return out ? 0 : 1;
}

static int cmd_run(const char *spec_path, bool db_given) {
    sl_error_t err = {0};
    json_error_t jerr;
    if (!spec_path) {
        fprintf(stderr, "streamlab: run needs SPEC.json (or - for standard input)\n");
        return 2;
    }
    json_t *j = strcmp(spec_path, "-") == 0 ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &jerr)
                                            : json_load_file(spec_path, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) {
        sl_error_set(&err, SL_E_PARSE, "", "%s: line %d: %s", spec_path, jerr.line, jerr.text);
        print_error(stdout, &err);
        return 2;
    }
    spec_t spec;
    if (spec_from_json(j, &spec, &err)) {
        print_error(stdout, &err);
        json_decref(j);
        return 2;
    }
    json_decref(j);
    if (!db_given)
        snprintf(app.cfg.db_path, sizeof app.cfg.db_path, ":memory:");
    discover();
    store_t *s = NULL;
    if (open_store(&s))
        return 1;
    sim_of_profiles_store(&app, s); /* the machines sim_of may name, in the store it looks them up in */
    int rc = 1;
    json_t *full = NULL;
    machine_info_t *sim = calloc(1, sizeof *sim);
    if (!sim || sim_of_check(&app, s, &spec, sim, &err)) {
        if (!sim)
            sl_error_set(&err, SL_E_NOMEM, "", "out of memory");
        print_error(stdout, &err);
        rc = 2;
        goto done;
    }
    full = spec_to_json(&spec);
    char id[40];
    app_new_id("e-", id);
    store_new_experiment_t e = {.id = id, .machine_id = app.machine.id, .spec = &spec, .spec_json = full};
    if (store_upsert_machine(s, &app.machine, &err) || !full || store_insert_experiment(s, &e, &err) ||
        store_start_experiment(s, id, &err)) {
        fprintf(stderr, "streamlab: %s\n", err.message);
        goto done;
    }
    char pin_why[160];
    if (app.cfg.worker_cpu >= 0 && app_pin_thread(app.cfg.worker_cpu, pin_why, sizeof pin_why)) /* the worker here */
        fprintf(stderr, "streamlab: --worker-cpu: %s\n", pin_why);
    rc = queue_run_one(&app, s, id, full, &err) == SL_OK ? 0 : 1;
    json_t *out = store_experiment_json(s, id, &err);
    print_json(stdout, out);
    json_decref(out);
    char why[700];
    if (app.cfg.push_url[0] && push_drain(&app, s, id, app.cfg.push_wait_s, why, sizeof why)) {
        fprintf(stderr, "streamlab: run --push: %s was not delivered to %s: %s\n"
                        "           it stays in the outbox of %s (the next run or serve --push with that --db sends it)\n",
                id, app.cfg.push_url, why, db_given ? app.cfg.db_path : "the in-memory store: it is lost; use --db");
        rc = 3;
    }
done:
    free(sim);
    json_decref(full);
    store_close(s);
    return rc;
}

static int serve(void) {
    char msg[512];
    if (!is_loopback(app.cfg.listen_host) && !app.cfg.token[0]) {
        fprintf(stderr,
                "streamlab: refusing to listen on %s without a token: anyone who can reach it could queue work.\n"
                "           Set STREAMLAB_TOKEN or --token-file, or listen on 127.0.0.1.\n",
                app.cfg.listen_host[0] ? app.cfg.listen_host : "all interfaces");
        return 2;
    }
    /* SIGINT/SIGTERM are taken by sigwait below; every thread inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &sigs, NULL)) {
        fprintf(stderr, "streamlab: cannot block signals\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    store_t *s = NULL;
    if (open_store(&s))
        return 1;
    discover();
    /* the profiles' machines first, so that this machine is the one seen last */
    sim_of_profiles_store(&app, s);
    sl_error_t err = {0};
    int interrupted = store_recover_interrupted(s, &err);
    if (interrupted < 0 || store_upsert_machine(s, &app.machine, &err)) {
        fprintf(stderr, "streamlab: store: %s\n", err.message);
        store_close(s);
        return 1;
    }
    if (interrupted > 0)
        fprintf(stderr, "streamlab: %d experiment(s) were running when the last process stopped: marked failed (interrupted)\n",
                interrupted);
    if (app.cfg.worker_cpu >= 0) {
        /* the workers' CPUs are theirs alone: this thread, and the HTTP and push threads it
         * starts, run on the others */
        int nw = queue_worker_count(&app, app.cfg.workers);
        if (app_keep_off_cpus(app.cfg.worker_cpu, nw < 1 ? 1 : nw, msg, sizeof msg))
            fprintf(stderr, "streamlab: --worker-cpu: the other threads share the workers' CPUs: %s\n", msg);
    }
    if (push_start(&app, &err) || queue_start(&app, app.cfg.workers, &app.queue, &err)) {
        fprintf(stderr, "streamlab: %s\n", err.message);
        push_stop(&app);
        store_close(s);
        return 1;
    }
    if (http_start(&app, msg, sizeof msg)) {
        fprintf(stderr, "streamlab: %s\n", msg);
        queue_stop(app.queue);
        push_stop(&app);
        store_close(s);
        return 1;
    }
    fprintf(stderr, "streamlab %s: listening on http://%s:%d/ (backend %s, %d device%s%s, db %s, web %s)\n",
            STREAMLAB_VERSION, app.cfg.listen_host, app.cfg.port, backend_names[app.machine.backend],
            app.machine.device_count, app.machine.device_count == 1 ? "" : "s",
            cuda_compiled_in() ? "" : ", CUDA not compiled in", app.cfg.db_path, app.cfg.web_dir);
    int sig = 0;
    sigwait(&sigs, &sig);
    fprintf(stderr, "streamlab: %s: stopping (a running experiment finishes first)\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    http_stop(&app);
    queue_stop(app.queue);
    push_stop(&app);
    store_close(s);
    fprintf(stderr, "streamlab: stopped\n");
    return 0;
}

int main(int argc, char **argv) {
    const char *cmd = "serve";
    int first = 1;
    if (argc > 1 && argv[1][0] != '-') {
        cmd = argv[1];
        first = 2;
    }
    const char *positional = NULL;
    configure(argc, argv, first, &app.cfg, &positional);
    if (pthread_key_create(&app.store_key, close_store)) {
        fprintf(stderr, "streamlab: cannot create thread storage\n");
        return 1;
    }
    sim_of_profiles_load(&app); /* the embedded machines every store knows (sim_of) */
    bool db_given = false;
    for (int i = first; i < argc; i++)
        if (strncmp(argv[i], "--db", 4) == 0)
            db_given = true;
    if (getenv("STREAMLAB_DB"))
        db_given = true;
    int rc = 2;
    if (strcmp(cmd, "serve") == 0 && !positional)
        rc = serve();
    else if (strcmp(cmd, "run") == 0)
        rc = cmd_run(positional, db_given);
    else if (strcmp(cmd, "devices") == 0 && !positional)
        rc = cmd_devices();
    else if (strcmp(cmd, "migrate") == 0 && !positional)
        rc = cmd_migrate();
    else if (strcmp(cmd, "import") == 0)
        rc = cmd_import(positional);
    else {
        fprintf(stderr, "streamlab: unknown command %s\n", positional ? positional : cmd);
        usage(stderr);
    }
    sim_of_profiles_free(&app);
    return rc;
}
