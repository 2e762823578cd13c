/* profile.h — machine profiles: what the model needs to stand in for a machine (its
 * GPUs' properties and calibration), measured on that machine and kept as data
 * (the profiles folder), with who measured it, when, and on which GPU. The simulated
 * device every GPU-less user sees is a profile embedded in the binary. */
#ifndef STREAMLAB_PROFILE_H
#define STREAMLAB_PROFILE_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

struct json_t;

/* The machine's identity and properties as JSON (API.md machines; calibration included). */
struct json_t *machine_to_json(const machine_info_t *m);
/* The inverse, for a machine the model stands in for (a profile, or one the store
 * knows): every GPU with the properties and calibration the model needs. Fills *m with
 * the machine as it was measured (backend cuda where it had GPUs); 0 or SL_E_INVALID
 * with the field at fault. */
int machine_from_json(const struct json_t *j, machine_info_t *m, sl_error_t *err);
/* The simulated device's properties: the default profile's GPU (profile_default_device). */
void sim_device_info(device_info_t *d, int index);

/* A profile of machine m's GPUs as measured now: {"profile": {name, measured_at,
 * gpu_uuid, gpu_name, driver_version, cuda_runtime, by}, "machine": machine_to_json(m)}.
 * reference (may be NULL) is kept under "reference" (its reference is taken). */
struct json_t *profile_to_json(const machine_info_t *m, const char *name, struct json_t *reference);
/* The machine a profile describes, ready for the model: backend sim, each GPU named
 * "Simulated <its name> (profile <name>, <date>)" and its uuid SIM-<uuid>; 0 or
 * SL_E_INVALID with the field at fault. */
int profile_machine(const struct json_t *profile, machine_info_t *m, sl_error_t *err);
/* The median of n calibrations of one GPU, field by field, so that a spell one of them caught
 * stays out of a profile (a lent H100's calibration drew a copy's set-up both ways at 15.7 us
 * where the next, three minutes later, drew 3.9: its profile missed its own table by 72%,
 * GPU-a3eb1f87, 2026-11-27). The just-written array's price and extent come together from the
 * calibration whose product is the median. samples adds up; valid where all are. out may be in. */
void calibration_median(const calibration_t *in, int n, calibration_t *out);
/* The calibration's numbers as machine_to_json names them, one at a time: the i-th one's
 * name, its value in c into *value; NULL past the last. */
const char *calibration_field(size_t i, const calibration_t *c, double *value);
/* The default simulated GPU (the embedded profile's first), as device `index`. */
void profile_default_device(device_info_t *d, int index);
/* The embedded profiles (the profiles folder at build time, the default first): how many,
 * and the i-th's text (NULL past the last). */
int profile_count(void);
const char *profile_text(int i);
/* Embedded profile i, parsed once for the process: its "profile" metadata and its machine
 * as measured (not renamed as simulated: the store keeps it so). 0, or -1 where i is past
 * the last or that profile does not load (said once on stderr). */
int profile_embedded(int i, const struct json_t **meta, const machine_info_t **m);
/* The seeds' table measured by a plain CUDA program on the GPU a simulated device stands
 * for (the default sim's: the first profile's; "SIM-<uuid>": the embedded profile whose GPU
 * that is), its "reference" object ({program, reps, warmup, rounds, cpu, points: [{variant,
 * size, streams, median_ms, rounds_ms, issue_us}], ...}), and that profile's metadata in
 * *meta; NULL where the device stands for no embedded profile with a table. */
const struct json_t *profile_reference_of(const device_info_t *d, const struct json_t **meta);
/* The same table on every lent GPU of that profile's kind kept in bench/data, the profile's
 * "fleet" (bench/fleet.py: {tables, gpus, from, to, points: [{variant, size, streams, tables,
 * min_ms, p25_ms, median_ms, p75_ms, max_ms, ms: [sorted], and where they fall in two groups,
 * groups: [low, high]}]}), and the profile's metadata in
 * *meta; NULL where the device stands for no embedded profile with a fleet. */
const struct json_t *profile_fleet_of(const device_info_t *d, const struct json_t **meta);
/* The fleet of the first embedded profile measured on a GPU of this name ("NVIDIA H100 80GB
 * HBM3"), and that profile's metadata; NULL where none is: how a measured machine's table
 * compares with the lent GPUs of its kind (bench_sim). */
const struct json_t *profile_fleet_named(const char *gpu_name, const struct json_t **meta);
/* The share of a fleet point's tables (its "ms") quicker than ms, ties counted half, and in
 * *tables (or NULL) how many it counted: an entry that is no number counts for nothing; -1
 * where none is left. The sim's extra.fleet and bench_sim's fleet column both rank so. */
double profile_fleet_rank(const struct json_t *point, double ms, size_t *tables);
/* The point (variant, size, streams) of a profile's reference table ({"points": [...]}), NULL
 * where it has none. */
const struct json_t *profile_reference_point(const struct json_t *reference, const char *variant, long long size,
                                             int streams);
/* The host's extra over the seeds' 2^25 array, as the plain program on the profile's machine
 * paid it: the reference table's async_v1 points, each one's issue time (issue_us) at 2^25
 * less at 2^22, against the calls past each kind's first (3 x streams - 3), fitted robustly
 * (Theil-Sen: the median of the pairwise slopes, then the median intercept). The intercept
 * is the rep's head (its start event and first H2D, kernel and D2H), the slope each later
 * call: the calibration's issue_first_large_us and issue_call_large_us, measured over the
 * plain program's own reps. 0 and *points, or -1 where fewer than 3 points have both
 * sizes' issue times. Each is at least 0.001 (0 reads as not measured). */
int profile_fit_large_host(const struct json_t *reference, double *first_us, double *call_us, int *points);
/* Sets every GPU's issue_first_large_us and issue_call_large_us in the profile's machine to
 * that fit of its reference, and says so in the profile's metadata ("issue_large_fit": the
 * two numbers, the points, how, and under "calibration" what the calibration had measured
 * there, 0 where it had not). 0, or -1 (profile unchanged) where the fit has too few points. */
int profile_refit_large_host(struct json_t *profile);
/* What the reference table says a breadth-first call costs the host (issue_reorder_us): at
 * 2^22 over 16-256 streams, where the host sets the pace, async_v2's issue time less
 * async_v1's over its 2 x streams reordered calls; the median over the stream counts into
 * *us, how many had both into *points. 0, or -1 where fewer than 3 had both. */
int profile_fit_reorder(const struct json_t *reference, double *us, int *points);
/* Sets every GPU's issue_reorder_us in the profile's machine to that fit of its reference
 * (at least 0.001: 0 reads as none), and says so in the profile's metadata
 * ("issue_reorder_fit": the number, the points, how). 0, or -1 (profile unchanged) where
 * the fit has too few points. */
int profile_refit_reorder(struct json_t *profile);

/* A machine the store knows (machine_to_json's form, imported or pushed from a GPU host)
 * as the model stands in for it: backend sim, each GPU named "Simulated <its name>
 * (<label or id>)", uuid SIM-<uuid>; 0 or SL_E_INVALID where it lacks what the model
 * needs (the field at fault). */
int profile_sim_of(const struct json_t *machine, machine_info_t *m, sl_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
