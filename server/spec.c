/* spec.c — the experiment spec parser (API.md "Experiment spec"). A table of fields
 * drives both the unknown-field check and the sweep axes check; each field's parser
 * checks its JSON type and range and says which field failed. */
#include "spec.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fields[] = {
    "variant", "size", "streams", "chunks", "kernel", "kernel_iters", "block_size", "launch", "host_memory",
    "default_stream", "stream_flags", "flush", "driver_mode", "timing", "trace_ops", "reps", "warmup", "devices", "backend",
    "label", "sync", "host_share", "predict", "sim_of",
};

int spec_check_json(json_t *obj, sl_error_t *err) {
    spec_t parsed;
    return spec_from_json(obj, &parsed, err);
}

bool spec_is_field(const char *name) {
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(fields[i], name) == 0)
            return true;
    return false;
}

static int get_int(json_t *obj, const char *field, long long lo, long long hi, int *out, sl_error_t *err) {
    json_t *v = json_object_get(obj, field);
    if (!v)
        return SL_OK;
    if (!json_is_integer(v))
        return sl_error_set(err, SL_E_INVALID, field, "%s must be an integer", field);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return sl_error_set(err, SL_E_INVALID, field, "%s must be between %lld and %lld (got %lld)", field, lo, hi,
                            (long long)x);
    *out = (int)x;
    return SL_OK;
}

static int get_enum(json_t *obj, const char *field, const char *const *names, int n, int *out, sl_error_t *err) {
    json_t *v = json_object_get(obj, field);
    if (!v)
        return SL_OK;
    char allowed[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(allowed, names[i], sizeof allowed - strlen(allowed) - 1);
        if (i + 1 < n)
            strncat(allowed, " | ", sizeof allowed - strlen(allowed) - 1);
    }
    if (!json_is_string(v))
        return sl_error_set(err, SL_E_INVALID, field, "%s must be a string: %s", field, allowed);
    int idx = sl_enum_parse(names, n, json_string_value(v));
    if (idx < 0)
        return sl_error_set(err, SL_E_INVALID, field, "%s: unknown value \"%.64s\"; allowed: %s", field,
                            json_string_value(v), allowed);
    *out = idx;
    return SL_OK;
}

/* sim_of: a machine id, 1..63 of [A-Za-z0-9_-] */
static int parse_sim_of(json_t *v, char out[64], sl_error_t *err) {
    const char *s = json_string_value(v);
    size_t len = s ? json_string_length(v) : 0;
    bool ok = s && len >= 1 && len <= 63;
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-';
    if (!ok)
        return sl_error_set(err, SL_E_INVALID, "sim_of",
                            "sim_of must be the id of a machine this store knows (1 to 63 of A-Z, a-z, 0-9, _ and -; "
                            "GET /api/machines lists them)");
    snprintf(out, 64, "%s", s);
    return SL_OK;
}

static int parse_size(json_t *v, uint64_t *out, sl_error_t *err) {
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 1 || (uint64_t)x > SPEC_MAX_SIZE)
            return sl_error_set(err, SL_E_INVALID, "size", "size must be between 1 and 2^32 elements (got %lld)",
                                (long long)x);
        *out = (uint64_t)x;
        return SL_OK;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (s[0] == '2' && s[1] == '^' && isdigit((unsigned char)s[2]) &&
            (s[3] == 0 || (isdigit((unsigned char)s[3]) && s[4] == 0))) {
            int k = atoi(s + 2);
            if (k > 32)
                return sl_error_set(err, SL_E_INVALID, "size", "size must be at most 2^32 elements (got %s)", s);
            *out = 1ull << k;
            return SL_OK;
        }
        return sl_error_set(err, SL_E_INVALID, "size", "a string size must be \"2^k\" with k from 0 to 32 (got \"%.32s\")", s);
    }
    return sl_error_set(err, SL_E_INVALID, "size", "size must be an integer or a string \"2^k\"");
}

int spec_from_json(json_t *obj, spec_t *out, sl_error_t *err) {
    if (!json_is_object(obj))
        return sl_error_set(err, SL_E_INVALID, "", "the spec must be a JSON object");
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        if (!spec_is_field(key))
            return sl_error_set(err, SL_E_INVALID, key, "unknown field \"%.64s\"", key);
    }
    json_t *variant = json_object_get(obj, "variant");
    if (!variant)
        return sl_error_set(err, SL_E_INVALID, "variant", "variant is required");
    int iv = 0;
    int rc = get_enum(obj, "variant", variant_names, VARIANT__COUNT, &iv, err);
    if (rc)
        return rc;
    spec_t s;
    spec_defaults(&s, (variant_t)iv);
    if (s.variant == VARIANT_MULTI_GPU) { /* the default for a split is the first two devices */
        s.devices[1] = 1;
        s.device_count = 2;
    }
    json_t *v;
    if ((v = json_object_get(obj, "size")) && (rc = parse_size(v, &s.size, err)))
        return rc;
    int e;
#define ENUM(field, names, count, dst)                                            \
    do {                                                                          \
        e = (int)(dst);                                                           \
        if ((rc = get_enum(obj, field, names, count, &e, err)))                   \
            return rc;                                                            \
        dst = e;                                                                  \
    } while (0)
    if ((rc = get_int(obj, "streams", 1, SPEC_MAX_STREAMS, &s.streams, err)) ||
        (rc = get_int(obj, "chunks", 1, SPEC_MAX_CHUNKS, &s.chunks, err)) ||
        (rc = get_int(obj, "kernel_iters", 1, 100000, &s.kernel_iters, err)) ||
        (rc = get_int(obj, "block_size", 32, 1024, &s.block_size, err)) ||
        (rc = get_int(obj, "warmup", 0, 100, &s.warmup, err)))
        return rc;
    if (s.block_size % 32)
        return sl_error_set(err, SL_E_INVALID, "block_size", "block_size must be a multiple of 32 (got %d)", s.block_size);
    ENUM("kernel", kernel_names, KERNEL__COUNT, s.kernel);
    ENUM("launch", launch_names, LAUNCH__COUNT, s.launch);
    ENUM("host_memory", host_memory_names, HOSTMEM__COUNT, s.host_memory);
    ENUM("default_stream", default_stream_names, DEFSTREAM__COUNT, s.default_stream);
    ENUM("stream_flags", stream_flags_names, SFLAGS__COUNT, s.stream_flags);
    ENUM("flush", flush_names, FLUSH__COUNT, s.flush);
    ENUM("driver_mode", driver_mode_names, DRIVER__COUNT, s.driver_mode);
    ENUM("timing", timing_names, TIMING__COUNT, s.timing);
    ENUM("trace_ops", trace_ops_names, TRACE__COUNT, s.trace_ops);
    ENUM("backend", backend_names, BACKEND__COUNT, s.backend);
#undef ENUM
    if ((v = json_object_get(obj, "reps"))) {
        if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
            s.reps_auto = true;
            s.reps = REPS_AUTO_MAX;
        } else if ((rc = get_int(obj, "reps", 1, SPEC_MAX_REPS, &s.reps, err))) {
            if (!json_is_integer(v))
                sl_error_set(err, SL_E_INVALID, "reps", "reps must be an integer from 1 to %d or \"auto\"", SPEC_MAX_REPS);
            return rc;
        }
    }
    if ((v = json_object_get(obj, "devices"))) {
        if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > SPEC_MAX_DEVICES)
            return sl_error_set(err, SL_E_INVALID, "devices", "devices must be an array of 1 to %d device indices",
                                SPEC_MAX_DEVICES);
        s.device_count = (int)json_array_size(v);
        for (int i = 0; i < s.device_count; i++) {
            json_t *d = json_array_get(v, (size_t)i);
            if (!json_is_integer(d) || json_integer_value(d) < 0 || json_integer_value(d) >= SPEC_MAX_DEVICES)
                return sl_error_set(err, SL_E_INVALID, "devices", "devices[%d] must be an integer from 0 to %d", i,
                                    SPEC_MAX_DEVICES - 1);
            s.devices[i] = (int)json_integer_value(d);
            for (int j = 0; j < i; j++)
                if (s.devices[j] == s.devices[i])
                    return sl_error_set(err, SL_E_INVALID, "devices", "device %d is listed twice", s.devices[i]);
        }
    }
    if ((v = json_object_get(obj, "label"))) {
        if (!json_is_string(v))
            return sl_error_set(err, SL_E_INVALID, "label", "label must be a string");
        if (json_string_length(v) >= SPEC_LABEL_MAX)
            return sl_error_set(err, SL_E_INVALID, "label", "label must be shorter than %d bytes", SPEC_LABEL_MAX);
        if (memchr(json_string_value(v), 0, json_string_length(v)))
            return sl_error_set(err, SL_E_INVALID, "label", "label must not contain NUL characters");
        snprintf(s.label, sizeof s.label, "%s", json_string_value(v));
    }
    if ((v = json_object_get(obj, "sync"))) {
        if (!json_is_boolean(v))
            return sl_error_set(err, SL_E_INVALID, "sync", "sync must be true or false");
        s.sync = json_is_true(v);
    }
    if ((v = json_object_get(obj, "predict"))) {
        if (!json_is_boolean(v))
            return sl_error_set(err, SL_E_INVALID, "predict", "predict must be true or false");
        s.predict = json_is_true(v);
    }
    if ((v = json_object_get(obj, "host_share"))) {
        if (!json_is_number(v) || !(json_number_value(v) >= 0.0 && json_number_value(v) <= 0.95))
            return sl_error_set(err, SL_E_INVALID, "host_share", "host_share must be a number from 0 to 0.95");
        s.host_share = json_number_value(v);
    }
    if ((v = json_object_get(obj, "sim_of")) && (rc = parse_sim_of(v, s.sim_of, err)))
        return rc;
    /* cross-field rules */
    if (!json_object_get(obj, "chunks")) /* one chunk per stream, but never more chunks than elements */
        s.chunks = (uint64_t)s.streams < s.size ? s.streams : (int)s.size;
    if (s.variant == VARIANT_ENGINE_STREAMS)
        s.streams = 3; /* one per engine: H2D, compute, D2H */
    if (s.variant == VARIANT_SEQUENTIAL)
        s.chunks = 1; /* one copy, one kernel, one copy */
    if ((uint64_t)s.chunks > s.size)
        return sl_error_set(err, SL_E_INVALID, "chunks", "chunks (%d) must not exceed size (%llu): every chunk needs an element",
                            s.chunks, (unsigned long long)s.size);
    if (s.sim_of[0] && s.variant == VARIANT_CPU)
        return sl_error_set(err, SL_E_INVALID, "variant",
                            "the cpu variant runs on this machine's CPU; it cannot simulate machine %s (sim_of)",
                            s.sim_of);
    if (s.sim_of[0] && s.backend != BACKEND_AUTO && s.backend != BACKEND_SIM)
        return sl_error_set(err, SL_E_INVALID, "backend",
                            "sim_of runs the simulator on machine %s's calibration: backend must be \"sim\" or "
                            "\"auto\" (got \"%s\")", s.sim_of, backend_names[s.backend]);
    if (s.variant == VARIANT_CPU && s.backend != BACKEND_AUTO && s.backend != BACKEND_CPU)
        return sl_error_set(err, SL_E_INVALID, "backend", "the cpu variant runs on backend \"cpu\" (or \"auto\")");
    if (s.variant != VARIANT_CPU && s.backend == BACKEND_CPU)
        return sl_error_set(err, SL_E_INVALID, "backend", "backend \"cpu\" runs only the cpu variant");
    if (s.variant == VARIANT_MULTI_GPU && s.device_count >= 2 && s.size / (uint64_t)s.device_count < (uint64_t)s.chunks)
        return sl_error_set(err, SL_E_INVALID, "chunks",
                            "each of the %d devices gets %llu elements, fewer than chunks (%d)", s.device_count,
                            (unsigned long long)(s.size / (uint64_t)s.device_count), s.chunks);
    if (s.variant == VARIANT_HOST_OVERLAP &&
        s.size - (uint64_t)((double)s.size * s.host_share) < (uint64_t)s.chunks)
        return sl_error_set(err, SL_E_INVALID, "host_share",
                            "host_share %.3f leaves %llu elements for the GPU's %d chunks", s.host_share,
                            (unsigned long long)(s.size - (uint64_t)((double)s.size * s.host_share)), s.chunks);
    if (s.variant == VARIANT_ZERO_COPY && s.host_memory != HOSTMEM_PINNED)
        return sl_error_set(err, SL_E_INVALID, "host_memory",
                            "zero_copy's kernels read and write the host array through its device mapping, "
                            "which needs pinned memory (host_memory \"pinned\")");
    if (s.variant == VARIANT_MULTI_GPU && s.device_count < 2)
        return sl_error_set(err, SL_E_INVALID, "devices", "multi_gpu needs at least 2 devices");
    if (s.variant != VARIANT_MULTI_GPU && s.device_count > 1)
        return sl_error_set(err, SL_E_INVALID, "devices", "only multi_gpu runs on several devices");
    *out = s;
    return SL_OK;
}

json_t *spec_to_json(const spec_t *s) {
    json_t *devices = json_array();
    for (int i = 0; devices && i < s->device_count; i++)
        json_array_append_new(devices, json_integer(s->devices[i]));
    json_t *o = json_pack(
        "{s:s, s:I, s:i, s:i, s:s, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:o, s:s, s:s, s:b, s:f}",
        "variant", variant_names[s->variant], "size", (json_int_t)s->size, "streams", s->streams, "chunks", s->chunks,
        "kernel", kernel_names[s->kernel], "kernel_iters", s->kernel_iters, "block_size", s->block_size, "launch",
        launch_names[s->launch], "host_memory", host_memory_names[s->host_memory], "default_stream",
        default_stream_names[s->default_stream], "stream_flags", stream_flags_names[s->stream_flags], "flush",
        flush_names[s->flush], "driver_mode", driver_mode_names[s->driver_mode], "timing", timing_names[s->timing],
        "warmup", s->warmup, "devices", devices ? devices : json_array(), "backend", backend_names[s->backend], "label",
        s->label, "sync", s->sync, "host_share", s->host_share);
    if (o) {
        json_object_set_new(o, "reps", s->reps_auto ? json_string("auto") : json_integer(s->reps));
        json_object_set_new(o, "predict", json_boolean(s->predict));
        json_object_set_new(o, "trace_ops", json_string(trace_ops_names[s->trace_ops]));
        if (s->sim_of[0]) /* only where set: specs stored before sim_of read back unchanged */
            json_object_set_new(o, "sim_of", json_string(s->sim_of));
    }
    return o;
}
