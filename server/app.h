/* app.h — the one server struct (Redis's `server` style): configuration filled from
 * flags and environment in main.c, the machine we run on, and the running parts. */
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
} config_t;

struct queue;
struct MHD_Daemon;

typedef struct app {
    config_t cfg;
    machine_info_t machine;
    struct queue *queue;
    struct MHD_Daemon *daemon;
    pthread_key_t store_key; /* each thread's own store connection */
} app_t;

/* This thread's store connection (opened on first use). NULL with err on failure. */
store_t *app_store(app_t *app, sl_error_t *err);
/* A new random id with a prefix ("e-" experiments, "s-" sweeps). */
void app_new_id(const char *prefix, char out[40]);

#endif
