/* app.h — the one server struct (Redis's `server` style): configuration filled from
 * flags and environment in main.c, the machine we run on, and the running parts; and
 * what every part asks of it (app.c): this thread's store connection, a new id. */
#ifndef STREAMLAB_APP_H
#define STREAMLAB_APP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "../db/store.h"
#include "../gpu/backend.h"

#define STREAMLAB_VERSION "0.1.0"

typedef struct config {
    char listen_host[128];
    int port;
    char db_path[1024];
    char web_dir[1024];
    char examples_dir[1024]; /* --examples: the example bundles (GET/POST /api/examples) */
    bool force_sim;          /* --backend sim */
    int workers;             /* -1: one per device; 0: queue only */
    int sim_devices;
    size_t body_max_bytes;
    int queue_max;
    int sweep_max;
    int conn_max;
    int conn_per_ip;
    int conn_timeout_s;
    char machine_label[128];
    char token[256];         /* "" = no token */
    bool private_reads;      /* GETs need the token too */
    size_t import_max_bytes; /* body limit of POST /api/import (bundles are large) */
    char push_url[512];      /* --push: a central streamlab, "" = none */
    char push_token[256];    /* STREAMLAB_PUSH_TOKEN, sent as Bearer */
    int push_wait_s;         /* run --push: how long to try before giving up (exit 3) */
    int worker_cpu;          /* --worker-cpu: the CPU the GPU work is issued from (worker i: N + i); -1 any */
} config_t;

struct queue;
struct MHD_Daemon;
struct push;

typedef struct app {
    config_t cfg;
    machine_info_t machine;
    struct queue *queue;
    struct MHD_Daemon *daemon;
    struct push *push;       /* the push thread (serve --push), or NULL */
    json_t *profiles;        /* the embedded profiles: machine id -> "profile" metadata (sim_of.c) */
    pthread_key_t store_key; /* each thread's own store connection */
} app_t;

/* This thread's store connection (opened on first use). NULL with err on failure. */
store_t *app_store(app_t *app, sl_error_t *err);
/* A new random id with a prefix ("e-" experiments, "s-" sweeps). */
void app_new_id(const char *prefix, char out[40]);
/* Pin the calling thread to CPU cpu: 0, or -1 with why (e.g. a CPU outside this process's cpuset). */
int app_pin_thread(int cpu, char *why, size_t len);
/* Keep the calling thread, and the threads it starts from now on, off CPUs first..first+n-1
 * (the workers'), where it may run elsewhere: 0, or -1 with why. */
int app_keep_off_cpus(int first, int n, char *why, size_t len);

#endif
