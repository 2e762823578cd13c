/* store.h — the door to streamlab's SQLite store. The only room with SQL.
 *
 * A store_t is one SQLite connection (WAL, busy timeout); it is not shared between
 * threads: each thread opens its own. Reads return jansson objects in the shapes of
 * API.md, ready for the HTTP layer. Writes that belong together (an experiment's result
 * and all its op events; a sweep and its experiments) are one transaction. */
#ifndef STREAMLAB_STORE_H
#define STREAMLAB_STORE_H

#include <jansson.h>

#include "../gpu/backend.h"

typedef struct store store_t;

/* Open (creating the file) without migrating. */
int store_open(const char *path, store_t **out, sl_error_t *err);
void store_close(store_t *s);
/* Apply the embedded migrations newer than PRAGMA user_version, each in a transaction.
 * A database from a newer streamlab is refused (SL_E_DB, a message that says so). */
int store_migrate(store_t *s, sl_error_t *err);
int store_schema_version(store_t *s);
int store_latest_version(void);
/* Run PRAGMA integrity_check; 0 when "ok". */
int store_integrity_check(store_t *s, sl_error_t *err);

/* machines */
int store_upsert_machine(store_t *s, const machine_info_t *m, sl_error_t *err);
json_t *store_machine_json(store_t *s, const char *machine_id, sl_error_t *err);
json_t *store_list_machines(store_t *s, sl_error_t *err);

/* experiments */
typedef struct store_new_experiment {
    const char *id;
    const char *machine_id;
    const char *sweep_id;     /* NULL if none */
    int sweep_index;
    const spec_t *spec;
    json_t *spec_json;        /* the full spec after defaults (borrowed) */
} store_new_experiment_t;

int store_insert_experiment(store_t *s, const store_new_experiment_t *e, sl_error_t *err);
/* A sweep and its experiments in one transaction. */
int store_insert_sweep(store_t *s, const char *sweep_id, json_t *request,
                       const store_new_experiment_t *exps, size_t n, sl_error_t *err);

/* Experiments (and their sweep, when sweep_id is not NULL) in one transaction that
 * first checks the queue: more than queue_max queued (0: no limit) is SL_E_BUSY and
 * nothing is written. */
int store_enqueue(store_t *s, const char *sweep_id, json_t *request, const store_new_experiment_t *exps, size_t n,
                  long long queue_max, sl_error_t *err);

/* Atomically move the oldest queued experiment of this machine whose first device is
 * `device` to running. Returns 1 with id and spec (caller json_decref) filled, 0 when
 * nothing is queued, or -1 on error. */
int store_claim_next(store_t *s, const char *machine_id, int device, char id_out[64],
                     json_t **spec_out, sl_error_t *err);
/* queued -> running for one experiment (`streamlab run`). */
int store_start_experiment(store_t *s, const char *id, sl_error_t *err);
/* running -> done with the result and every rep's op events, one transaction. */
int store_finish_experiment(store_t *s, const char *id, const result_t *r, sl_error_t *err);
/* running -> failed with a message. */
int store_fail_experiment(store_t *s, const char *id, const char *message, sl_error_t *err);
/* running -> queued (graceful shutdown gives the experiment back). */
int store_requeue_experiment(store_t *s, const char *id, sl_error_t *err);
/* queued -> cancelled; SL_E_NOTFOUND or SL_E_CONFLICT (not queued). */
int store_cancel_experiment(store_t *s, const char *id, sl_error_t *err);
/* At start-up: every running experiment becomes failed ("interrupted"). Returns count. */
int store_recover_interrupted(store_t *s, sl_error_t *err);

json_t *store_experiment_json(store_t *s, const char *id, sl_error_t *err);

typedef struct store_filter {
    const char *status, *variant, *machine, *sweep, *label;
    long long size, streams;  /* 0: any */
    const char *before;       /* cursor: an experiment id */
    int limit;                /* 1..500 */
} store_filter_t;
typedef char store_id_t[64];
typedef struct store_list_entry {
    store_id_t id;
    char status[16];
} store_list_entry_t;
/* The ids and statuses of the list's page (malloc'd array, caller frees) and the next
 * cursor ("" at the end): for callers that have the experiments' JSON cached. */
int store_list_ids(store_t *s, const store_filter_t *f, store_list_entry_t **ids, size_t *n, store_id_t next,
                   sl_error_t *err);
/* {"items": [...], "next": id or null}, newest first. */
json_t *store_list_experiments(store_t *s, const store_filter_t *f, sl_error_t *err);
/* {"experiment": id, "rep": K, "median_rep": M, "reps": N, "ops": [...]}; rep < 0: median. */
json_t *store_timeline_json(store_t *s, const char *id, int rep, sl_error_t *err);
json_t *store_sweep_json(store_t *s, const char *sweep_id, sl_error_t *err);

typedef struct store_counts {
    long long queued, running, done, failed, cancelled;
} store_counts_t;
int store_count_by_status(store_t *s, store_counts_t *out, sl_error_t *err);

#endif
