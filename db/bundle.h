/* bundle.h — result bundles: experiments with their machines, sweeps, results and every
 * repetition's op timeline as one JSON document (API.md "Bundles"), so that results move
 * between stores (export from a GPU host, import into a central streamlab).
 *
 * The document:
 *   {"format": "streamlab-bundle", "version": 1,
 *    "machines":    [machine as GET /api/machines/{id}],
 *    "sweeps":      [{"id", "created_at", "request"}],
 *    "experiments": [experiment as GET /api/experiments/{id}, result included],
 *    "timelines":   {experiment id: [{"rep": K, "ops": [op as in the timeline]}, ...every rep]},
 *    "ops":         "median" | "none" (absent: "all")}
 * A compact bundle ("ops": "median" or "none") holds the median rep's ops alone, or none: the
 * results keep every rep's total either way.
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

/* Which repetitions' ops a bundle's timelines hold. */
typedef enum { BUNDLE_OPS_ALL, BUNDLE_OPS_MEDIAN, BUNDLE_OPS_NONE, BUNDLE_OPS__COUNT } bundle_ops_t;
extern const char *const bundle_ops_names[]; /* "all", "median", "none" */

/* The bundle of the named experiments (ids[0..n), duplicates once, in that order), or of
 * every experiment of a sweep (sweep_id, in sweep order; then ids is ignored). Read in one
 * transaction, so the document is one moment of the store. SL_E_NOTFOUND names the first
 * id (or the sweep) that is not in the store. */
json_t *store_export_bundle(store_t *s, const char *const *ids, size_t n, const char *sweep_id, sl_error_t *err);
/* The same with only some repetitions' ops (ops; a compact bundle records it as "ops"). */
json_t *store_export_bundle_ops(store_t *s, const char *const *ids, size_t n, const char *sweep_id, bundle_ops_t ops,
                                sl_error_t *err);

/* What a bundle holds, from its top-level fields alone, without checking it all (a listing
 * of bundle files): {"machines": ["label (GPU name)", ...], "experiments": N,
 * "measured": "YYYY-MM-DD" (the day its last experiment finished) or null, "ops": "all" |
 * "median" | "none"}. NULL with SL_E_INVALID when the document is not a bundle. */
json_t *bundle_describe(json_t *bundle, sl_error_t *err);

typedef struct bundle_counts {
    long long imported;  /* experiments new to this store */
    long long unchanged; /* experiments already here, identical */
    long long machines;  /* machines inserted or updated */
    long long sweeps;    /* sweeps inserted */
} bundle_counts_t;

/* Checks one experiment's spec (the server's spec parser); 0 or an error naming the field. */
typedef int (*store_spec_check_fn)(json_t *spec, sl_error_t *err);

/* The checks store_import_bundle makes before it writes, without a store (0, or SL_E_INVALID
 * naming the field); what only the store can say (a machine or sweep it lacks, a conflict)
 * is left to the import. */
int bundle_check(json_t *bundle, store_spec_check_fn check_spec, sl_error_t *err);

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
