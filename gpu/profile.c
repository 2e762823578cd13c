/* profile.c — machines as data: a machine to and from JSON (the form /api/machines and
 * bundles carry), profiles (a machine's GPUs as measured, with who measured them, when
 * and on which GPU: the profiles folder), and the simulated device every GPU-less user sees,
 * which is the first profile embedded at build time (build/gen/profile.c, from the profiles folder).
 * Nothing here measures: gpu/devices.c and the CUDA calibration do; this file keeps. */
#include "profile.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The calibration's numbers, by their JSON names: machine_to_json writes them and
 * machine_from_json reads them back, one table for both ways. */
static const struct {
    const char *name;
    size_t offset;
} calib_fields[] = {
#define CF(f) {#f, offsetof(calibration_t, f)}
    CF(h2d_gbps), CF(d2h_gbps), CF(bidir_gbps), CF(bidir_gbps_min), CF(pageable_h2d_gbps), CF(pageable_d2h_gbps),
    CF(zero_copy_gbps), CF(compute_base_ns_per_elem), CF(copy_submit_us), CF(kernel_launch_us), CF(copy_setup_us),
    CF(copy_setup_both_us), CF(copy_switch_us), CF(dirty_h2d_us_per_mib), CF(dirty_cache_mib), CF(host_copy_gbps),
    CF(host_h2d_gbps), CF(issue_scale_large), CF(issue_first_large_us), CF(issue_call_large_us), CF(copy_setup_h2d_us),
    CF(copy_setup_d2h_us), CF(issue_reorder_us), CF(bidir_h2d_gbps), CF(bidir_d2h_gbps), CF(dirty_16mib_us),
    CF(dirty_large_us), CF(rep_lead_us),
#undef CF
};

const char *calibration_field(size_t i, const calibration_t *c, double *value) {
    if (i >= sizeof calib_fields / sizeof calib_fields[0])
        return NULL;
    *value = *(const double *)((const char *)c + calib_fields[i].offset);
    return calib_fields[i].name;
}

/* The median of v[0..n), n >= 1 (stats_compute's: the middle two's mean of an even n). */
static double median_of(const double *v, int n) {
    stats_t st;
    stats_compute(v, (size_t)n, &st);
    return st.median;
}

#define CAL_MEDIAN_MAX 16

void calibration_median(const calibration_t *in, int n, calibration_t *out) {
    if (n < 1)
        return;
    if (n > CAL_MEDIAN_MAX)
        n = CAL_MEDIAN_MAX;
    calibration_t m = in[0];
    double v[CAL_MEDIAN_MAX];
    for (size_t f = 0; f < sizeof calib_fields / sizeof calib_fields[0]; f++) {
        for (int i = 0; i < n; i++)
            v[i] = *(const double *)((const char *)&in[i] + calib_fields[f].offset);
        *(double *)((char *)&m + calib_fields[f].offset) = median_of(v, n);
    }
    for (int k = 0; k < KERNEL__COUNT; k++) {
        for (int i = 0; i < n; i++)
            v[i] = in[i].kernel_ns_per_elem[k];
        m.kernel_ns_per_elem[k] = median_of(v, n);
        for (int i = 0; i < n; i++)
            v[i] = in[i].host_ns_per_elem[k];
        m.host_ns_per_elem[k] = median_of(v, n);
    }
    /* the just-written array's price and extent go together (their product is what a whole
     * array pays): both from the calibration whose product is the median (the lower middle one
     * of an even count), not the median of each, which no calibration measured */
    int by_total[CAL_MEDIAN_MAX];
    for (int i = 0; i < n; i++)
        by_total[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && in[by_total[j]].dirty_h2d_us_per_mib * in[by_total[j]].dirty_cache_mib <
                                     in[by_total[j - 1]].dirty_h2d_us_per_mib * in[by_total[j - 1]].dirty_cache_mib;
             j--) {
            int t = by_total[j];
            by_total[j] = by_total[j - 1], by_total[j - 1] = t;
        }
    m.dirty_h2d_us_per_mib = in[by_total[(n - 1) / 2]].dirty_h2d_us_per_mib;
    m.dirty_cache_mib = in[by_total[(n - 1) / 2]].dirty_cache_mib;
    m.samples = 0;
    m.valid = true;
    for (int i = 0; i < n; i++) {
        m.samples += in[i].samples;
        m.valid = m.valid && in[i].valid;
    }
    *out = m;
}

/* A per-kernel table ({"blog": .., "fill": .., "compute": ..}), or NULL out of memory. */
static json_t *per_kernel_json(const double v[KERNEL__COUNT]) {
    json_t *t = json_object();
    for (int k = 0; t && k < KERNEL__COUNT; k++)
        json_object_set_new(t, kernel_names[k], json_real(v[k]));
    return t;
}

static json_t *calibration_to_json(const calibration_t *c) {
    if (!c->valid)
        return json_null();
    json_t *j = json_object(), *kernel_ns = per_kernel_json(c->kernel_ns_per_elem);
    if (!j || !kernel_ns) {
        json_decref(j);
        json_decref(kernel_ns);
        return NULL;
    }
    for (size_t i = 0; i < sizeof calib_fields / sizeof calib_fields[0]; i++)
        json_object_set_new(j, calib_fields[i].name,
                            json_real(*(const double *)((const char *)c + calib_fields[i].offset)));
    json_object_set_new(j, "kernel_ns_per_elem", kernel_ns);
    json_t *host_ns = per_kernel_json(c->host_ns_per_elem);
    json_object_set_new(j, "host_ns_per_elem", host_ns ? host_ns : json_null());
    json_object_set_new(j, "samples", json_integer(c->samples));
    return j;
}

json_t *machine_to_json(const machine_info_t *m) {
    json_t *gpus = json_array();
    for (int i = 0; gpus && i < m->device_count; i++) {
        const device_info_t *d = &m->devices[i];
        json_t *calib = calibration_to_json(&d->calib);
        json_t *g = json_pack("{s:i, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:I, s:s, s:i, s:i, s:i, s:o}",
                              "index", d->index, "name", d->name, "uuid", d->uuid, "compute_capability", "",
                              "sm_count", d->sm_count, "max_threads_per_sm", d->max_threads_per_sm,
                              "max_blocks_per_sm", d->max_blocks_per_sm, "copy_engines", d->async_engines,
                              "memory_bytes", (json_int_t)d->mem_bytes, "driver_model", d->driver_model,
                              "pcie_gen", d->pcie_gen, "pcie_width", d->pcie_width, "concurrent_kernels",
                              d->concurrent_kernels, "calibration", calib ? calib : json_null());
        if (g) {
            char cc[16];
            snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
            json_object_set_new(g, "compute_capability", json_string(cc));
            json_array_append_new(gpus, g);
        }
    }
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:o}", "id", m->id, "hostname",
                     m->hostname, "label", m->label, "cpu", m->cpu, "kernel", m->kernel, "cpu_threads",
                     m->cpu_threads, "backend", backend_names[m->backend], "cuda_runtime", m->cuda_runtime,
                     "cuda_driver", m->cuda_driver, "driver_version", m->driver_version, "device_count",
                     m->device_count, "gpus", gpus ? gpus : json_array());
}

static double num_or(const json_t *o, const char *key, double dflt) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* An integer field: its value where it is a number an int holds exactly enough (a machine
 * from a bundle may say anything: casting 1e30 to int is undefined), else dflt. */
static int int_or(const json_t *o, const char *key, int dflt) {
    double v = num_or(o, key, dflt);
    return v >= -1e9 && v <= 1e9 ? (int)v : dflt;
}

static void text_of(const json_t *o, const char *key, char *out, size_t len) {
    const char *v = json_string_value(json_object_get(o, key));
    if (v)
        snprintf(out, len, "%s", v);
}

/* One GPU of machine_to_json's form; what the model needs must be there and positive. */
static int device_from_json(const json_t *g, int index, device_info_t *d, sl_error_t *err) {
    char at[32];
    snprintf(at, sizeof at, "gpus[%d]", index);
    if (!json_is_object(g))
        return sl_error_set(err, SL_E_INVALID, at, "%s must be an object", at);
    memset(d, 0, sizeof *d);
    d->index = index;
    text_of(g, "name", d->name, sizeof d->name);
    text_of(g, "uuid", d->uuid, sizeof d->uuid);
    text_of(g, "driver_model", d->driver_model, sizeof d->driver_model);
    if (!d->driver_model[0])
        snprintf(d->driver_model, sizeof d->driver_model, "linux");
    const char *cc = json_string_value(json_object_get(g, "compute_capability"));
    if (!cc || sscanf(cc, "%d.%d", &d->cc_major, &d->cc_minor) != 2)
        d->cc_major = d->cc_minor = 0;
    d->sm_count = int_or(g, "sm_count", 0);
    d->max_threads_per_sm = int_or(g, "max_threads_per_sm", 0);
    d->max_blocks_per_sm = int_or(g, "max_blocks_per_sm", 0);
    d->async_engines = int_or(g, "copy_engines", 0);
    d->concurrent_kernels = int_or(g, "concurrent_kernels", 1);
    double mem = num_or(g, "memory_bytes", 0);
    d->mem_bytes = mem > 0 && mem < 1e18 ? (uint64_t)mem : 0;
    d->pcie_gen = int_or(g, "pcie_gen", 0);
    d->pcie_width = int_or(g, "pcie_width", 0);
    if (d->sm_count < 1 || d->sm_count > 100000 || d->max_threads_per_sm < 32 || d->max_blocks_per_sm < 1 ||
        d->async_engines < 1 || d->async_engines > 64)
        return sl_error_set(err, SL_E_INVALID, at,
                            "%s lacks what the model needs: sm_count, max_threads_per_sm, max_blocks_per_sm and "
                            "copy_engines, each positive", at);
    const json_t *c = json_object_get(g, "calibration");
    if (!json_is_object(c))
        return sl_error_set(err, SL_E_INVALID, at, "%s has no calibration: it was never measured", at);
    calibration_t *cal = &d->calib;
    for (size_t i = 0; i < sizeof calib_fields / sizeof calib_fields[0]; i++) {
        double v = num_or(c, calib_fields[i].name, 0);
        *(double *)((char *)cal + calib_fields[i].offset) = isfinite(v) && v > 0 ? v : 0;
    }
    const json_t *kn = json_object_get(c, "kernel_ns_per_elem"), *hn = json_object_get(c, "host_ns_per_elem");
    for (int k = 0; k < KERNEL__COUNT; k++) {
        double v = num_or(kn, kernel_names[k], 0), h = num_or(hn, kernel_names[k], 0);
        cal->kernel_ns_per_elem[k] = isfinite(v) && v > 0 ? v : 0;
        cal->host_ns_per_elem[k] = isfinite(h) && h > 0 ? h : 0; /* older machines: none */
    }
    cal->samples = int_or(c, "samples", 0);
    if (!(cal->h2d_gbps > 0 && cal->d2h_gbps > 0 && cal->bidir_gbps > 0 && cal->kernel_ns_per_elem[KERNEL_BLOG] > 0))
        return sl_error_set(err, SL_E_INVALID, at,
                            "%s.calibration lacks what the model needs: h2d_gbps, d2h_gbps, bidir_gbps and "
                            "kernel_ns_per_elem.blog, each positive", at);
    cal->valid = true;
    return SL_OK;
}

int machine_from_json(const json_t *j, machine_info_t *m, sl_error_t *err) {
    memset(m, 0, sizeof *m);
    if (!json_is_object(j))
        return sl_error_set(err, SL_E_INVALID, "", "a machine must be a JSON object");
    const json_t *gpus = json_object_get(j, "gpus");
    size_t n = json_array_size(gpus);
    if (n < 1 || n > SPEC_MAX_DEVICES)
        return sl_error_set(err, SL_E_INVALID, "gpus", "a machine to simulate needs 1 to %d GPUs; this one has %zu",
                            SPEC_MAX_DEVICES, n);
    text_of(j, "id", m->id, sizeof m->id);
    text_of(j, "hostname", m->hostname, sizeof m->hostname);
    text_of(j, "label", m->label, sizeof m->label);
    text_of(j, "cpu", m->cpu, sizeof m->cpu);
    text_of(j, "kernel", m->kernel, sizeof m->kernel);
    text_of(j, "cuda_runtime", m->cuda_runtime, sizeof m->cuda_runtime);
    text_of(j, "cuda_driver", m->cuda_driver, sizeof m->cuda_driver);
    text_of(j, "driver_version", m->driver_version, sizeof m->driver_version);
    m->cpu_threads = int_or(j, "cpu_threads", 1);
    int be = sl_enum_parse(backend_names, BACKEND__COUNT, json_string_value(json_object_get(j, "backend")));
    m->backend = be == BACKEND_CUDA ? BACKEND_CUDA : BACKEND_SIM;
    m->device_count = (int)n;
    for (size_t i = 0; i < n; i++) {
        int rc = device_from_json(json_array_get(gpus, i), (int)i, &m->devices[i], err);
        if (rc)
            return rc;
    }
    return SL_OK;
}

json_t *profile_to_json(const machine_info_t *m, const char *name, json_t *reference) {
    char when[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const device_info_t *d = &m->devices[0];
    json_t *meta = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "name", name ? name : "", "measured_at", when,
                             "gpu_name", m->device_count ? d->name : "", "gpu_uuid", m->device_count ? d->uuid : "",
                             "driver_version", m->driver_version, "cuda_runtime", m->cuda_runtime, "by",
                             "streamlab's calibration (gpu/cuda_calibrate.cu)");
    json_t *mj = machine_to_json(m);
    json_t *p = json_pack("{s:o, s:o}", "profile", meta ? meta : json_null(), "machine", mj ? mj : json_null());
    if (p && reference)
        json_object_set(p, "reference", reference);
    if (reference)
        json_decref(reference);
    return p;
}

const json_t *profile_reference_point(const json_t *reference, const char *variant, long long size, int streams) {
    size_t i;
    const json_t *pt;
    json_array_foreach(json_object_get(reference, "points"), i, pt) {
        const char *v = json_string_value(json_object_get(pt, "variant"));
        if (v && !strcmp(v, variant) && json_integer_value(json_object_get(pt, "size")) == size &&
            json_integer_value(json_object_get(pt, "streams")) == streams)
            return pt;
    }
    return NULL;
}

/* issue_us of the reference's point (variant, size, streams); 0 where it has none */
static double reference_issue_us(const json_t *reference, const char *variant, json_int_t size, int streams) {
    return json_number_value(json_object_get(profile_reference_point(reference, variant, size, streams), "issue_us"));
}

int profile_fit_large_host(const json_t *reference, double *first_us, double *call_us, int *points) {
    static const int streams[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    double x[sizeof streams / sizeof streams[0]], y[sizeof streams / sizeof streams[0]], head, slope;
    int n = 0;
    for (size_t k = 0; k < sizeof streams / sizeof streams[0]; k++) {
        double small = reference_issue_us(reference, "async_v1", (json_int_t)1 << 22, streams[k]);
        double large = reference_issue_us(reference, "async_v1", (json_int_t)1 << 25, streams[k]);
        if (small > 0 && large > 0) {
            x[n] = 3.0 * streams[k] - 3;
            y[n++] = large - small;
        }
    }
    *points = n;
    if (n < 3 || stats_fit_line(x, y, n, &head, &slope))
        return -1;
    *first_us = fmax(0.001, head);
    *call_us = fmax(0.001, slope);
    return 0;
}

/* A fit of a profile's reference table: fit (taken) under key in the profile's metadata, and
 * the n numbers under their names in every GPU's calibration. 0, or -1 where one could not
 * be set. */
static int put_fit(json_t *meta, json_t *gpus, const char *key, json_t *fit, const char *const *names,
                   const double *values, int n) {
    if (!fit || json_object_set_new(meta, key, fit))
        return -1;
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g) {
        json_t *c = json_object_get(g, "calibration");
        for (int k = 0; json_is_object(c) && k < n; k++)
            if (json_object_set_new(c, names[k], json_real(values[k])))
                return -1;
    }
    return 0;
}

int profile_fit_reorder(const json_t *reference, double *us, int *points) {
    double per[5];
    int n = 0;
    for (int streams = 16; streams <= 256; streams *= 2) {
        double v1 = reference_issue_us(reference, "async_v1", (json_int_t)1 << 22, streams);
        double v2 = reference_issue_us(reference, "async_v2", (json_int_t)1 << 22, streams);
        if (v1 > 0 && v2 > 0)
            per[n++] = (v2 - v1) / (2.0 * streams);
    }
    *points = n;
    if (n < 3)
        return -1;
    stats_t st;
    stats_compute(per, (size_t)n, &st);
    *us = st.median;
    return 0;
}

int profile_refit_reorder(json_t *profile) {
    double us;
    int n;
    json_t *meta = json_object_get(profile, "profile");
    json_t *gpus = json_object_get(json_object_get(profile, "machine"), "gpus");
    if (!json_is_object(meta) || !json_is_array(gpus) ||
        profile_fit_reorder(json_object_get(profile, "reference"), &us, &n))
        return -1;
    us = fmax(0.001, us);
    json_t *fit = json_pack("{s:f, s:i, s:s}", "issue_reorder_us", us, "points", n, "from",
                            "the reference's issue_us at 2^22, async_v2 less async_v1 over its 2 x streams reordered "
                            "calls, the median over 16-256 streams");
    static const char *const names[] = {"issue_reorder_us"};
    return put_fit(meta, gpus, "issue_reorder_fit", fit, names, &us, 1);
}

int profile_refit_large_host(json_t *profile) {
    double first, call;
    int n;
    json_t *meta = json_object_get(profile, "profile");
    json_t *gpus = json_object_get(json_object_get(profile, "machine"), "gpus");
    if (!json_is_object(meta) || !json_is_array(gpus) ||
        profile_fit_large_host(json_object_get(profile, "reference"), &first, &call, &n))
        return -1;
    const json_t *was = json_object_get(json_object_get(meta, "issue_large_fit"), "calibration");
    /* a profile fitted before keeps what its calibration measured, not its own fit */
    const json_t *measured = was ? was : json_object_get(json_array_get(gpus, 0), "calibration");
    double measured_first = json_number_value(json_object_get(measured, "issue_first_large_us"));
    double measured_call = json_number_value(json_object_get(measured, "issue_call_large_us"));
    json_t *fit = json_pack("{s:f, s:f, s:i, s:s, s:{s:f, s:f}}", "issue_first_large_us", first, "issue_call_large_us",
                            call, "points", n, "from",
                            "the reference's async_v1 issue_us at 2^25 less at 2^22, against 3 x streams - 3 calls "
                            "(Theil-Sen); the calibration's own measure under calibration (0: none)",
                            "calibration", "issue_first_large_us", measured_first, "issue_call_large_us", measured_call);
    static const char *const names[] = {"issue_first_large_us", "issue_call_large_us"};
    const double values[] = {first, call};
    return put_fit(meta, gpus, "issue_large_fit", fit, names, values, 2);
}

/* m as the model stands in for it: backend sim, its GPUs renamed after what they stand for */
static void as_simulated(machine_info_t *m, const char *what) {
    m->backend = BACKEND_SIM;
    for (int i = 0; i < m->device_count; i++) {
        device_info_t *d = &m->devices[i];
        char measured[128], uuid[64];
        snprintf(measured, sizeof measured, "%s", d->name);
        snprintf(uuid, sizeof uuid, "%s", d->uuid);
        snprintf(d->name, sizeof d->name, "Simulated %.48s (%.60s)", measured, what);
        snprintf(d->uuid, sizeof d->uuid, "SIM-%.58s", uuid);
    }
}

int profile_machine(const json_t *profile, machine_info_t *m, sl_error_t *err) {
    const json_t *meta = json_object_get(profile, "profile");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *when = json_string_value(json_object_get(meta, "measured_at"));
    if (!json_is_object(meta) || !name || !name[0] || !when)
        return sl_error_set(err, SL_E_INVALID, "profile",
                            "a profile needs \"profile\": {\"name\": ..., \"measured_at\": ...}");
    int rc = machine_from_json(json_object_get(profile, "machine"), m, err);
    if (rc)
        return rc;
    char what[96];
    snprintf(what, sizeof what, "profile %.40s, %.10s", name, when);
    as_simulated(m, what);
    return SL_OK;
}

int profile_sim_of(const json_t *machine, machine_info_t *m, sl_error_t *err) {
    int rc = machine_from_json(machine, m, err);
    if (rc)
        return rc;
    as_simulated(m, m->label[0] ? m->label : m->id);
    return SL_OK;
}

/* The embedded profiles, parsed once for the process: each one's "profile" metadata and
 * its machine as measured; meta NULL where it does not load (said once, on stderr). */
typedef struct embedded {
    json_t *meta;
    json_t *reference; /* its "reference": the seeds' table measured with it; NULL: none */
    json_t *fleet;     /* its "fleet": that table on every lent GPU of its kind (bench/fleet.py); NULL: none */
    machine_info_t machine;
} embedded_t;

static pthread_once_t embedded_once = PTHREAD_ONCE_INIT;
static embedded_t *embedded;
static int nembedded;
static machine_info_t default_machine; /* the first, as the model stands in for it */
static bool default_ok;

static void embedded_load(void) {
    nembedded = profile_count();
    embedded = calloc((size_t)(nembedded > 0 ? nembedded : 1), sizeof *embedded);
    if (!embedded) {
        fprintf(stderr, "streamlab: out of memory loading the machine profiles\n");
        nembedded = 0;
    }
    for (int i = 0; i < nembedded; i++) {
        json_error_t jerr;
        sl_error_t err = {0};
        json_t *p = json_loads(profile_text(i), 0, &jerr);
        const char *why = !p ? jerr.text : NULL;
        machine_info_t sim; /* checks the profile's form too */
        if (!why && profile_machine(p, &sim, &err) != SL_OK)
            why = err.message;
        if (!why && i == 0) { /* the default sim needs no more than that */
            default_machine = sim;
            default_ok = true;
        }
        if (!why && machine_from_json(json_object_get(p, "machine"), &embedded[i].machine, &err) != SL_OK)
            why = err.message;
        if (!why && !embedded[i].machine.id[0])
            why = "its machine has no id";
        if (why)
            fprintf(stderr, "streamlab: embedded profile %d does not load (%s): it cannot be simulated%s\n", i, why,
                    i == 0 && !default_ok ? ", and the default sim has no calibration" : "");
        else {
            embedded[i].meta = json_incref(json_object_get(p, "profile"));
            json_t *ref = json_object_get(p, "reference");
            if (json_is_array(json_object_get(ref, "points")))
                embedded[i].reference = json_incref(ref);
            json_t *fleet = json_object_get(p, "fleet");
            if (json_is_array(json_object_get(fleet, "points")))
                embedded[i].fleet = json_incref(fleet);
        }
        json_decref(p);
    }
}

int profile_embedded(int i, const json_t **meta, const machine_info_t **m) {
    pthread_once(&embedded_once, embedded_load);
    if (i < 0 || i >= nembedded || !embedded[i].meta)
        return -1;
    *meta = embedded[i].meta;
    *m = &embedded[i].machine;
    return 0;
}

/* The embedded profile a simulated device stands for, or -1: the default sim's, or the
 * profile whose GPU the device's SIM- uuid names. */
static int embedded_of(const device_info_t *d) {
    pthread_once(&embedded_once, embedded_load);
    int pick = -1;
    if (strncmp(d->uuid, "SIM-H100-", 9) == 0) /* the default sim: the first profile */
        pick = default_ok ? 0 : -1;
    else if (strncmp(d->uuid, "SIM-", 4) == 0)
        for (int i = 0; i < nembedded && pick < 0; i++)
            for (int k = 0; embedded[i].meta && k < embedded[i].machine.device_count; k++)
                if (strcmp(d->uuid + 4, embedded[i].machine.devices[k].uuid) == 0)
                    pick = i;
    return pick >= 0 && embedded[pick].meta ? pick : -1;
}

const json_t *profile_reference_of(const device_info_t *d, const json_t **meta) {
    int pick = embedded_of(d);
    if (pick < 0 || !embedded[pick].reference)
        return NULL;
    *meta = embedded[pick].meta;
    return embedded[pick].reference;
}

double profile_fleet_rank(const json_t *point, double ms, size_t *tables) {
    const json_t *x;
    size_t i, n = 0;
    double below = 0;
    json_array_foreach(json_object_get(point, "ms"), i, x) {
        if (!json_is_number(x))
            continue; /* a table's entry that is no number counts for nothing */
        double v = json_number_value(x);
        below += v < ms ? 1.0 : v == ms ? 0.5 : 0.0;
        n++;
    }
    if (tables)
        *tables = n;
    return n ? below / (double)n : -1;
}

const json_t *profile_fleet_named(const char *gpu_name, const json_t **meta) {
    pthread_once(&embedded_once, embedded_load);
    for (int i = 0; gpu_name && i < nembedded; i++) {
        const char *name = embedded[i].meta ? json_string_value(json_object_get(embedded[i].meta, "gpu_name")) : NULL;
        if (embedded[i].fleet && name && strcmp(name, gpu_name) == 0) {
            *meta = embedded[i].meta;
            return embedded[i].fleet;
        }
    }
    return NULL;
}

const json_t *profile_fleet_of(const device_info_t *d, const json_t **meta) {
    int pick = embedded_of(d);
    if (pick < 0 || !embedded[pick].fleet)
        return NULL;
    *meta = embedded[pick].meta;
    return embedded[pick].fleet;
}

void profile_default_device(device_info_t *d, int index) {
    pthread_once(&embedded_once, embedded_load);
    if (default_ok) {
        *d = default_machine.devices[0];
    } else {
        memset(d, 0, sizeof *d);
        snprintf(d->name, sizeof d->name, "Simulated device (no profile)");
    }
    d->index = index;
    /* the id of a sim machine hashes its GPUs' uuids: the same as before profiles */
    snprintf(d->uuid, sizeof d->uuid, "SIM-H100-%d", index);
}

void sim_device_info(device_info_t *d, int index) {
    profile_default_device(d, index);
}
