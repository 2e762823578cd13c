/* bundle.h — result bundles: experiments with their machines, sweeps, results and every
 * repetition's op timeline as one JSON document (API.md "Bundles"), so that results move
 * between stores (export from a GPU host, import into a central streamlab).
 *
 * The document:
 *   {"format": "streamlab-bundle", "version": 1,
 *    "machines":    [machine as GET /api/machines/{id}],
 *    "sweeps":      [{"id", "created_at", "request"}],
 *    "experiments": [experiment as GET /api/experiments/{id}, result included],
 *    "timelines":   {experiment id: [{"rep": K, "ops": [op as in the timeline]}, ...every rep]}}
 *
 * Import checks every field before it writes anything, then writes in one transaction;
 * it is idempotent by experiment id. Only finished experiments (done, failed, cancelled)
 * are imported, so that no worker ever picks up another machine's work. */
#ifndef STREAMLAB_BUNDLE_H
#define STREAMLAB_BUNDLE_H

#include <jansson.h>

#include "store.h"

#define BUNDLE_FORMAT "streamlab-bundle"
#define BUNDLE_VERSION 1

/* The bundle of the named experiments (ids[0..n), duplicates once, in that order), or of
 * every experiment of a sweep (sweep_id, in sweep order; then ids is ignored). Read in one
 * transaction, so the document is one moment of the store. SL_E_NOTFOUND names the first
 * id (or the sweep) that is not in the store. */
json_t *store_export_bundle(store_t *s, const char *const *ids, size_t n, const char *sweep_id, sl_error_t *err);

typedef struct bundle_counts {
    long long imported;  /* experiments new to this store */
    long long unchanged; /* experiments already here, identical */
    long long machines;  /* machines inserted or updated */
    long long sweeps;    /* sweeps inserted */
} bundle_counts_t;

/* Checks one experiment's spec (the server's spec parser); 0 or an error naming the field. */
typedef int (*store_spec_check_fn)(json_t *spec, sl_error_t *err);

/* Import a bundle. Every field is checked first (SL_E_INVALID naming the field, e.g.
 * "experiments[2].result.reps_ms"; check_spec, when not NULL, checks each spec); then one
 * transaction inserts the machines (a known machine is updated only when the bundle saw it
 * later, and this_machine_id, the importing machine itself, never), the sweeps and the
 * experiments with their original ids, times, results, repetitions and op events. An
 * experiment already in the store counts as unchanged when its content is identical; when
 * it differs the whole import is refused with SL_E_CONFLICT and nothing is written. */
int store_import_bundle(store_t *s, json_t *bundle, const char *this_machine_id, store_spec_check_fn check_spec,
                        bundle_counts_t *out, sl_error_t *err);

#endif
