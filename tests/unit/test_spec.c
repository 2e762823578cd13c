/* test_spec.c — unit tests of server/spec.c: defaults for a minimal spec, every field's
 * good and bad values (type, range both sides, enums, "2^k" sizes, cross-field rules),
 * each bad value refused with SL_E_INVALID and the right field named, unknown fields,
 * and the spec_to_json -> spec_from_json round trip. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/spec.h"
#include "check.h"

/* Parse text (a JSON document) as a spec. Returns spec_from_json's status, or -100 when
 * the test's own JSON does not parse. */
static int parse(const char *text, spec_t *out, sl_error_t *err) {
    json_error_t je;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!j) {
        fprintf(stderr, "  test JSON does not parse: %s: %s\n", text, je.text);
        return -100;
    }
    memset(err, 0, sizeof *err);
    int rc = spec_from_json(j, out, err);
    json_decref(j);
    return rc;
}

/* The spec must be refused with SL_E_INVALID naming field; nothing may be filled. */
static bool refused(const char *text, const char *field, const char *file, int line) {
    spec_t s, untouched;
    memset(&s, 0xA5, sizeof s);
    memcpy(&untouched, &s, sizeof s);
    sl_error_t err;
    int rc = parse(text, &s, &err);
    bool ok = rc == SL_E_INVALID && err.code == SL_E_INVALID && strcmp(err.field, field) == 0 &&
              err.message[0] != 0 && memcmp(&s, &untouched, sizeof s) == 0;
    if (!ok)
        fprintf(stderr,
                "  FAIL %s (%s:%d): %s: expected invalid with field \"%s\", got rc %d code %d field \"%s\" "
                "message \"%s\"%s\n",
                check_current_test, file, line, text, field, rc, (int)err.code, err.field, err.message,
                memcmp(&s, &untouched, sizeof s) ? " (and the output spec was written)" : "");
    return ok;
}

static bool accepted(const char *text, spec_t *out, const char *file, int line) {
    sl_error_t err;
    int rc = parse(text, out, &err);
    if (rc != SL_OK)
        fprintf(stderr, "  FAIL %s (%s:%d): %s: expected accepted, got rc %d field \"%s\" message \"%s\"\n",
                check_current_test, file, line, text, rc, err.field, err.message);
    return rc == SL_OK;
}

#define BAD(text, field)                                         \
    do {                                                         \
        if (!refused(text, field, __FILE__, __LINE__))           \
            check_failures_in_test++;                            \
    } while (0)

/* GOOD(text, s) parses into spec_t s (declared by the caller) and fails the test if refused. */
#define GOOD(text, s)                                            \
    do {                                                         \
        if (!accepted(text, &(s), __FILE__, __LINE__))           \
            check_failures_in_test++;                            \
    } while (0)

#define V "{\"variant\":\"async_v1\","

/* Every field of the spec (API.md "Experiment spec", plus predict and trace_ops). */
static const char *const spec_fields[] = {
    "variant", "size", "streams", "chunks", "kernel", "kernel_iters", "block_size", "launch", "host_memory",
    "default_stream", "stream_flags", "flush", "driver_mode", "timing", "trace_ops", "reps", "warmup", "devices",
    "backend", "label", "sync", "host_share", "predict"};
#define SPEC_FIELD_COUNT (sizeof spec_fields / sizeof spec_fields[0])

/* ---- defaults ---- */

TEST(defaults_minimal_async_v1_fills_every_field) {
    spec_t s, d;
    GOOD("{\"variant\":\"async_v1\"}", s);
    spec_defaults(&d, VARIANT_ASYNC_V1);
    CHECK_INT(VARIANT_ASYNC_V1, s.variant);
    CHECK_INT(d.size, s.size);
    CHECK_INT(d.streams, s.streams);
    CHECK_INT(s.streams, s.chunks); /* chunks defaults to streams */
    CHECK_INT(d.kernel, s.kernel);
    CHECK_INT(d.kernel_iters, s.kernel_iters);
    CHECK_INT(d.block_size, s.block_size);
    CHECK_INT(d.launch, s.launch);
    CHECK_INT(d.host_memory, s.host_memory);
    CHECK_INT(d.default_stream, s.default_stream);
    CHECK_INT(d.stream_flags, s.stream_flags);
    CHECK_INT(d.flush, s.flush);
    CHECK_INT(d.driver_mode, s.driver_mode);
    CHECK_INT(d.timing, s.timing);
    CHECK_INT(d.reps, s.reps);
    CHECK(!s.reps_auto);
    CHECK_INT(d.warmup, s.warmup);
    CHECK_INT(1, s.device_count);
    CHECK_INT(0, s.devices[0]);
    CHECK_INT(d.backend, s.backend);
    CHECK(!s.sync);
    CHECK_NEAR(d.host_share, s.host_share, 0);
    CHECK(!s.predict);
    CHECK_STR("", s.label);
}

/* The defaults are API.md's example spec ("Every field but variant has a default"). */
TEST(defaults_are_the_documented_values) {
    spec_t s;
    GOOD("{\"variant\":\"async_v1\"}", s);
    CHECK_INT(33554432, s.size);
    CHECK_INT(8, s.streams);
    CHECK_INT(8, s.chunks);
    CHECK_INT(KERNEL_BLOG, s.kernel);
    CHECK_INT(1, s.kernel_iters);
    CHECK_INT(256, s.block_size);
    CHECK_INT(LAUNCH_CHUNK, s.launch);
    CHECK_INT(HOSTMEM_PINNED, s.host_memory);
    CHECK_INT(DEFSTREAM_PER_THREAD, s.default_stream);
    CHECK_INT(SFLAGS_DEFAULT, s.stream_flags);
    CHECK_INT(FLUSH_NONE, s.flush);
    CHECK_INT(DRIVER_AUTO, s.driver_mode);
    CHECK_INT(TIMING_EVENTS, s.timing);
    CHECK_INT(TRACE_SAMPLED, s.trace_ops);
    CHECK_INT(10, s.reps);
    CHECK_INT(2, s.warmup);
    CHECK_INT(BACKEND_AUTO, s.backend);
}

TEST(defaults_chunks_follow_given_streams) {
    spec_t s;
    GOOD(V "\"streams\":8}", s);
    CHECK_INT(8, s.streams);
    CHECK_INT(8, s.chunks);
    GOOD(V "\"streams\":8,\"chunks\":32}", s);
    CHECK_INT(8, s.streams);
    CHECK_INT(32, s.chunks);
    GOOD("{\"variant\":\"round_robin\",\"streams\":2,\"chunks\":16}", s);
    CHECK_INT(2, s.streams);
    CHECK_INT(16, s.chunks);
}

TEST(defaults_multi_gpu_uses_devices_0_and_1) {
    spec_t s;
    GOOD("{\"variant\":\"multi_gpu\"}", s);
    CHECK_INT(VARIANT_MULTI_GPU, s.variant);
    CHECK_INT(2, s.device_count);
    CHECK_INT(0, s.devices[0]);
    CHECK_INT(1, s.devices[1]);
    GOOD("{\"variant\":\"multi_gpu\",\"devices\":[3,1,2]}", s);
    CHECK_INT(3, s.device_count);
    CHECK_INT(3, s.devices[0]);
    CHECK_INT(1, s.devices[1]);
    CHECK_INT(2, s.devices[2]);
}

TEST(defaults_engine_streams_forces_three_streams) {
    spec_t s;
    spec_t d;
    spec_defaults(&d, VARIANT_ENGINE_STREAMS);
    GOOD("{\"variant\":\"engine_streams\"}", s);
    CHECK_INT(3, s.streams);
    CHECK_INT(d.streams, s.chunks); /* chunks default to the requested (default) streams, before the forcing */
    GOOD("{\"variant\":\"engine_streams\",\"streams\":16}", s);
    CHECK_INT(3, s.streams);
    CHECK_INT(16, s.chunks);
    GOOD("{\"variant\":\"engine_streams\",\"streams\":1,\"chunks\":8}", s);
    CHECK_INT(3, s.streams);
    CHECK_INT(8, s.chunks);
}

TEST(defaults_sequential_forces_one_chunk) {
    spec_t s;
    GOOD("{\"variant\":\"sequential\"}", s);
    CHECK_INT(1, s.chunks);
    GOOD("{\"variant\":\"sequential\",\"streams\":8,\"chunks\":64}", s);
    CHECK_INT(1, s.chunks);
    CHECK_INT(8, s.streams);
    /* one chunk fits a one-element array */
    GOOD("{\"variant\":\"sequential\",\"size\":1}", s);
    CHECK_INT(1, s.size);
    CHECK_INT(1, s.chunks);
}

TEST(every_variant_name_is_accepted) {
    for (int v = 0; v < VARIANT__COUNT; v++) {
        char text[128];
        snprintf(text, sizeof text, "{\"variant\":\"%s\"}", variant_names[v]);
        spec_t s;
        GOOD(text, s);
        CHECK_INT(v, s.variant);
    }
}

/* ---- the document itself ---- */

TEST(not_an_object_is_refused) {
    const char *docs[] = {"[]", "[{\"variant\":\"async_v1\"}]", "\"async_v1\"", "42", "null", "true"};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        spec_t s;
        sl_error_t err;
        int rc = parse(docs[i], &s, &err);
        CHECK_INT(SL_E_INVALID, rc);
        CHECK_INT(SL_E_INVALID, err.code);
        CHECK(err.message[0] != 0);
    }
    sl_error_t err = {0};
    spec_t s;
    CHECK_INT(SL_E_INVALID, spec_from_json(NULL, &s, &err));
}

TEST(missing_variant_is_refused) {
    BAD("{}", "variant");
    BAD("{\"size\":1024}", "variant");
    BAD("{\"streams\":4,\"label\":\"x\"}", "variant");
}

TEST(unknown_fields_are_refused_by_name) {
    BAD(V "\"colour\":\"red\"}", "colour");
    BAD(V "\"Streams\":4}", "Streams");
    BAD(V "\"size\":1024,\"stream\":4}", "stream");
    BAD("{\"variant\":\"async_v1\",\"\":1}", "");
    BAD("{\"varient\":\"async_v1\"}", "varient");
    /* an unknown field is reported even when its value would be fine elsewhere */
    BAD(V "\"prediction\":true}", "prediction");
    BAD(V "\"id\":\"e-1\"}", "id");
}

TEST(spec_is_field_knows_every_field) {
    for (size_t i = 0; i < SPEC_FIELD_COUNT; i++)
        CHECK(spec_is_field(spec_fields[i]));
    CHECK(!spec_is_field(""));
    CHECK(!spec_is_field("colour"));
    CHECK(!spec_is_field("Variant"));
    CHECK(!spec_is_field("variant "));
    CHECK(!spec_is_field("prediction"));
    CHECK(!spec_is_field("id"));
}

/* ---- fields one by one ---- */

TEST(variant_bad_values) {
    BAD("{\"variant\":\"async_v3\"}", "variant");
    BAD("{\"variant\":\"ASYNC_V1\"}", "variant");
    BAD("{\"variant\":\"\"}", "variant");
    BAD("{\"variant\":1}", "variant");
    BAD("{\"variant\":null}", "variant");
    BAD("{\"variant\":[\"async_v1\"]}", "variant");
    BAD("{\"variant\":true}", "variant");
}

TEST(size_good_values) {
    spec_t s;
    GOOD(V "\"size\":1,\"streams\":1}", s);
    CHECK_INT(1, s.size);
    GOOD(V "\"size\":33554432}", s);
    CHECK_INT(33554432, s.size);
    GOOD(V "\"size\":4294967296}", s);
    CHECK_INT(1ull << 32, s.size);
    GOOD(V "\"size\":\"2^0\",\"streams\":1}", s);
    CHECK_INT(1, s.size);
    GOOD(V "\"size\":\"2^1\",\"streams\":1}", s);
    CHECK_INT(2, s.size);
    GOOD(V "\"size\":\"2^25\"}", s);
    CHECK_INT(1ull << 25, s.size);
    GOOD(V "\"size\":\"2^32\"}", s);
    CHECK_INT(1ull << 32, s.size);
    GOOD(V "\"size\":1000}", s); /* not a power of two is fine */
    CHECK_INT(1000, s.size);
}

TEST(size_bad_values) {
    BAD(V "\"size\":0}", "size");
    BAD(V "\"size\":-1}", "size");
    BAD(V "\"size\":-4294967296}", "size");
    BAD(V "\"size\":4294967297}", "size");
    BAD(V "\"size\":9223372036854775807}", "size");
    BAD(V "\"size\":8.0}", "size");
    BAD(V "\"size\":1024.5}", "size");
    BAD(V "\"size\":1e6}", "size");
    BAD(V "\"size\":true}", "size");
    BAD(V "\"size\":null}", "size");
    BAD(V "\"size\":[1024]}", "size");
    BAD(V "\"size\":{}}", "size");
    BAD(V "\"size\":\"2^33\"}", "size");
    BAD(V "\"size\":\"2^99\"}", "size");
    BAD(V "\"size\":\"2^100\"}", "size");
    BAD(V "\"size\":\"2^\"}", "size");
    BAD(V "\"size\":\"3^4\"}", "size");
    BAD(V "\"size\":\"2^x\"}", "size");
    BAD(V "\"size\":\"2^-1\"}", "size");
    BAD(V "\"size\":\"\"}", "size");
    BAD(V "\"size\":\"2\"}", "size");
    BAD(V "\"size\":\"1024\"}", "size");
    BAD(V "\"size\":\" 2^4\"}", "size");
    BAD(V "\"size\":\"2^4 \"}", "size");
    BAD(V "\"size\":\"2^4x\"}", "size");
    BAD(V "\"size\":\"2**4\"}", "size");
}

TEST(streams_good_and_bad) {
    spec_t s;
    GOOD(V "\"streams\":1}", s);
    CHECK_INT(1, s.streams);
    GOOD(V "\"streams\":1024}", s);
    CHECK_INT(1024, s.streams);
    BAD(V "\"streams\":0}", "streams");
    BAD(V "\"streams\":-1}", "streams");
    BAD(V "\"streams\":1025}", "streams");
    BAD(V "\"streams\":4294967297}", "streams"); /* would wrap to 1 as an int */
    BAD(V "\"streams\":8.0}", "streams");
    BAD(V "\"streams\":\"8\"}", "streams");
    BAD(V "\"streams\":true}", "streams");
    BAD(V "\"streams\":null}", "streams");
    BAD(V "\"streams\":[8]}", "streams");
}

TEST(chunks_good_and_bad) {
    spec_t s;
    GOOD(V "\"chunks\":1}", s);
    CHECK_INT(1, s.chunks);
    GOOD(V "\"chunks\":65536}", s);
    CHECK_INT(65536, s.chunks);
    GOOD(V "\"size\":16,\"chunks\":16}", s); /* chunks == size: one element each */
    CHECK_INT(16, s.chunks);
    BAD(V "\"chunks\":0}", "chunks");
    BAD(V "\"chunks\":-3}", "chunks");
    BAD(V "\"chunks\":65537}", "chunks");
    BAD(V "\"chunks\":4.0}", "chunks");
    BAD(V "\"chunks\":\"4\"}", "chunks");
    BAD(V "\"chunks\":false}", "chunks");
    BAD(V "\"size\":16,\"chunks\":17}", "chunks");
    BAD(V "\"size\":\"2^0\",\"chunks\":2}", "chunks");
    GOOD(V "\"size\":2,\"streams\":4}", s); /* the default chunks (= streams) never exceeds size */
    CHECK_INT(2, s.chunks);
}

TEST(kernel_good_and_bad) {
    spec_t s;
    GOOD(V "\"kernel\":\"blog\"}", s);
    CHECK_INT(KERNEL_BLOG, s.kernel);
    GOOD(V "\"kernel\":\"fill\"}", s);
    CHECK_INT(KERNEL_FILL, s.kernel);
    GOOD(V "\"kernel\":\"compute\"}", s);
    CHECK_INT(KERNEL_COMPUTE, s.kernel);
    BAD(V "\"kernel\":\"gemm\"}", "kernel");
    BAD(V "\"kernel\":\"Blog\"}", "kernel");
    BAD(V "\"kernel\":\"\"}", "kernel");
    BAD(V "\"kernel\":0}", "kernel");
    BAD(V "\"kernel\":null}", "kernel");
}

TEST(kernel_iters_good_and_bad) {
    spec_t s;
    GOOD(V "\"kernel_iters\":1}", s);
    CHECK_INT(1, s.kernel_iters);
    GOOD(V "\"kernel_iters\":100000}", s);
    CHECK_INT(100000, s.kernel_iters);
    BAD(V "\"kernel_iters\":0}", "kernel_iters");
    BAD(V "\"kernel_iters\":-1}", "kernel_iters");
    BAD(V "\"kernel_iters\":100001}", "kernel_iters");
    BAD(V "\"kernel_iters\":2.0}", "kernel_iters");
    BAD(V "\"kernel_iters\":\"2\"}", "kernel_iters");
}

TEST(block_size_good_and_bad) {
    spec_t s;
    GOOD(V "\"block_size\":32}", s);
    CHECK_INT(32, s.block_size);
    GOOD(V "\"block_size\":1024}", s);
    CHECK_INT(1024, s.block_size);
    GOOD(V "\"block_size\":96}", s); /* a multiple of 32 that is not a power of two */
    CHECK_INT(96, s.block_size);
    BAD(V "\"block_size\":0}", "block_size");
    BAD(V "\"block_size\":31}", "block_size");
    BAD(V "\"block_size\":33}", "block_size");
    BAD(V "\"block_size\":100}", "block_size");
    BAD(V "\"block_size\":1023}", "block_size");
    BAD(V "\"block_size\":1056}", "block_size");
    BAD(V "\"block_size\":2048}", "block_size");
    BAD(V "\"block_size\":-32}", "block_size");
    BAD(V "\"block_size\":256.0}", "block_size");
    BAD(V "\"block_size\":\"256\"}", "block_size");
}

/* An enum field: every name accepted, an unknown name, a wrong case, a number refused. */
static void enum_field(const char *field, const char *const *names, int n, size_t offset) {
    for (int i = 0; i < n; i++) {
        char text[256];
        snprintf(text, sizeof text, V "\"%s\":\"%s\"}", field, names[i]);
        spec_t s;
        GOOD(text, s);
        int got;
        memcpy(&got, (const char *)&s + offset, sizeof got);
        if (got != i) {
            fprintf(stderr, "  FAIL %s: %s: expected value %d, got %d\n", check_current_test, text, i, got);
            check_failures_in_test++;
        }
    }
    char text[256];
    snprintf(text, sizeof text, V "\"%s\":\"no_such_value\"}", field);
    BAD(text, field);
    snprintf(text, sizeof text, V "\"%s\":\"\"}", field);
    BAD(text, field);
    snprintf(text, sizeof text, V "\"%s\":\"%s \"}", field, names[0]);
    BAD(text, field);
    snprintf(text, sizeof text, V "\"%s\":0}", field);
    BAD(text, field);
    snprintf(text, sizeof text, V "\"%s\":null}", field);
    BAD(text, field);
    snprintf(text, sizeof text, V "\"%s\":[\"%s\"]}", field, names[0]);
    BAD(text, field);
}

TEST(enum_fields_good_and_bad) {
    enum_field("launch", launch_names, LAUNCH__COUNT, offsetof(spec_t, launch));
    enum_field("host_memory", host_memory_names, HOSTMEM__COUNT, offsetof(spec_t, host_memory));
    enum_field("default_stream", default_stream_names, DEFSTREAM__COUNT, offsetof(spec_t, default_stream));
    enum_field("stream_flags", stream_flags_names, SFLAGS__COUNT, offsetof(spec_t, stream_flags));
    enum_field("flush", flush_names, FLUSH__COUNT, offsetof(spec_t, flush));
    enum_field("driver_mode", driver_mode_names, DRIVER__COUNT, offsetof(spec_t, driver_mode));
    enum_field("timing", timing_names, TIMING__COUNT, offsetof(spec_t, timing));
    enum_field("trace_ops", trace_ops_names, TRACE__COUNT, offsetof(spec_t, trace_ops));
    BAD(V "\"launch\":\"grid_stride\"}", "launch");
    BAD(V "\"host_memory\":\"managed\"}", "host_memory");
    BAD(V "\"driver_mode\":\"mps\"}", "driver_mode");
    BAD(V "\"timing\":\"nvtx\"}", "timing");
    BAD(V "\"trace_ops\":\"some\"}", "trace_ops");
}

TEST(reps_good_and_bad) {
    spec_t s;
    GOOD(V "\"reps\":1}", s);
    CHECK_INT(1, s.reps);
    CHECK(!s.reps_auto);
    GOOD(V "\"reps\":1000}", s);
    CHECK_INT(1000, s.reps);
    GOOD(V "\"reps\":\"auto\"}", s);
    CHECK(s.reps_auto);
    CHECK_INT(REPS_AUTO_MAX, s.reps);
    BAD(V "\"reps\":\"fast\"}", "reps");
    BAD(V "\"reps\":\"Auto\"}", "reps");
    BAD(V "\"reps\":\"10\"}", "reps");
    BAD(V "\"reps\":\"\"}", "reps");
    BAD(V "\"reps\":0}", "reps");
    BAD(V "\"reps\":-1}", "reps");
    BAD(V "\"reps\":1001}", "reps");
    BAD(V "\"reps\":10.0}", "reps");
    BAD(V "\"reps\":true}", "reps");
    BAD(V "\"reps\":null}", "reps");
}

TEST(warmup_good_and_bad) {
    spec_t s;
    GOOD(V "\"warmup\":0}", s);
    CHECK_INT(0, s.warmup);
    GOOD(V "\"warmup\":100}", s);
    CHECK_INT(100, s.warmup);
    BAD(V "\"warmup\":-1}", "warmup");
    BAD(V "\"warmup\":101}", "warmup");
    BAD(V "\"warmup\":2.0}", "warmup");
    BAD(V "\"warmup\":\"2\"}", "warmup");
}

TEST(devices_good_and_bad) {
    spec_t s;
    GOOD(V "\"devices\":[0]}", s);
    CHECK_INT(1, s.device_count);
    CHECK_INT(0, s.devices[0]);
    GOOD(V "\"devices\":[15]}", s); /* one device, not the first */
    CHECK_INT(1, s.device_count);
    CHECK_INT(15, s.devices[0]);
    GOOD("{\"variant\":\"multi_gpu\",\"devices\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}", s);
    CHECK_INT(16, s.device_count);
    CHECK_INT(15, s.devices[15]);
    BAD(V "\"devices\":[]}", "devices");
    BAD(V "\"devices\":0}", "devices");
    BAD(V "\"devices\":\"0\"}", "devices");
    BAD(V "\"devices\":{\"0\":0}}", "devices");
    BAD(V "\"devices\":null}", "devices");
    BAD(V "\"devices\":[-1]}", "devices");
    BAD(V "\"devices\":[16]}", "devices");
    BAD(V "\"devices\":[0.0]}", "devices");
    BAD(V "\"devices\":[\"0\"]}", "devices");
    BAD(V "\"devices\":[null]}", "devices");
    BAD("{\"variant\":\"multi_gpu\",\"devices\":[0,0]}", "devices");
    BAD("{\"variant\":\"multi_gpu\",\"devices\":[1,2,1]}", "devices");
    BAD("{\"variant\":\"multi_gpu\",\"devices\":[0,-1]}", "devices");
    BAD("{\"variant\":\"multi_gpu\",\"devices\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}", "devices");
    BAD("{\"variant\":\"multi_gpu\",\"devices\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,0]}", "devices");
}

TEST(devices_count_must_match_the_variant) {
    BAD("{\"variant\":\"multi_gpu\",\"devices\":[0]}", "devices");
    BAD("{\"variant\":\"multi_gpu\",\"devices\":[1]}", "devices");
    BAD(V "\"devices\":[0,1]}", "devices");
    BAD("{\"variant\":\"sequential\",\"devices\":[0,1]}", "devices");
    BAD("{\"variant\":\"tuned\",\"devices\":[2,3]}", "devices");
}

/* multi_gpu splits the array over its devices and each device's share into `chunks`
 * (gpu/plan.c build_multi_gpu), so every share needs `chunks` elements. A spec that breaks
 * this can never run anywhere: it must be refused here (422), not queued and then fail. */
TEST(multi_gpu_chunks_must_fit_each_devices_share) {
    spec_t s;
    GOOD("{\"variant\":\"multi_gpu\",\"size\":4,\"streams\":2}", s); /* shares 2 and 2 */
    CHECK_INT(2, s.chunks);
    GOOD("{\"variant\":\"multi_gpu\",\"devices\":[0,1,2],\"size\":9,\"chunks\":3}", s);
    BAD("{\"variant\":\"multi_gpu\",\"size\":2,\"streams\":2}", "chunks");               /* shares 1 and 1 */
    BAD("{\"variant\":\"multi_gpu\",\"size\":1,\"streams\":1}", "chunks");               /* shares 1 and 0 */
    BAD("{\"variant\":\"multi_gpu\",\"size\":3,\"streams\":2,\"chunks\":2}", "chunks");  /* shares 2 and 1 */
    BAD("{\"variant\":\"multi_gpu\",\"devices\":[0,1,2],\"size\":8,\"chunks\":3}", "chunks"); /* 3, 3, 2 */
}

/* host_overlap gives the GPU size - floor(size * host_share) elements in `chunks` chunks
 * (gpu/plan.c build_host_overlap); the same rule: refused at parse time, not at run time. */
TEST(host_overlap_gpu_share_must_hold_the_chunks) {
    spec_t s;
    GOOD("{\"variant\":\"host_overlap\",\"size\":4,\"streams\":2,\"host_share\":0.5}", s);  /* GPU 2 */
    GOOD("{\"variant\":\"host_overlap\",\"size\":8,\"streams\":1,\"host_share\":0.95}", s); /* GPU 1 */
    BAD("{\"variant\":\"host_overlap\",\"size\":2,\"streams\":2,\"host_share\":0.5}", "host_share");  /* GPU 1 */
    BAD("{\"variant\":\"host_overlap\",\"size\":8,\"streams\":4,\"host_share\":0.95}", "host_share"); /* GPU 1 */
    BAD("{\"variant\":\"host_overlap\",\"size\":5,\"streams\":4,\"host_share\":0.5}", "host_share");  /* GPU 3 */
}

/* zero_copy: one grid-stride kernel by default; the kernels map the host array, so it
 * must be pinned, and the device's memory does not bound the size */
TEST(zero_copy_defaults_and_pinned_memory) {
    spec_t s;
    GOOD("{\"variant\":\"zero_copy\"}", s);
    CHECK_INT(1, s.streams);
    CHECK_INT(1, s.chunks);
    CHECK_INT(LAUNCH_MAX_OCCUPANCY, s.launch);
    CHECK_INT(HOSTMEM_PINNED, s.host_memory);
    GOOD("{\"variant\":\"zero_copy\",\"streams\":4,\"launch\":\"chunk\"}", s);
    CHECK_INT(4, s.streams);
    CHECK_INT(4, s.chunks);
    CHECK_INT(LAUNCH_CHUNK, s.launch);
    GOOD("{\"variant\":\"zero_copy\",\"streams\":2,\"chunks\":7,\"size\":1000003}", s);
    CHECK_INT(7, s.chunks);
    BAD("{\"variant\":\"zero_copy\",\"host_memory\":\"pageable\"}", "host_memory");
}

TEST(backend_good_and_bad) {
    spec_t s;
    GOOD(V "\"backend\":\"auto\"}", s);
    CHECK_INT(BACKEND_AUTO, s.backend);
    GOOD(V "\"backend\":\"cuda\"}", s);
    CHECK_INT(BACKEND_CUDA, s.backend);
    GOOD(V "\"backend\":\"sim\"}", s);
    CHECK_INT(BACKEND_SIM, s.backend);
    GOOD("{\"variant\":\"cpu\",\"backend\":\"cpu\"}", s);
    CHECK_INT(BACKEND_CPU, s.backend);
    GOOD("{\"variant\":\"cpu\",\"backend\":\"auto\"}", s);
    CHECK_INT(BACKEND_AUTO, s.backend);
    BAD(V "\"backend\":\"opencl\"}", "backend");
    BAD(V "\"backend\":\"\"}", "backend");
    BAD(V "\"backend\":2}", "backend");
    BAD(V "\"backend\":\"cpu\"}", "backend");
    BAD("{\"variant\":\"multi_gpu\",\"backend\":\"cpu\"}", "backend");
    BAD("{\"variant\":\"cpu\",\"backend\":\"sim\"}", "backend");
    BAD("{\"variant\":\"cpu\",\"backend\":\"cuda\"}", "backend");
}

TEST(label_good_and_bad) {
    spec_t s;
    GOOD(V "\"label\":\"\"}", s);
    CHECK_STR("", s.label);
    GOOD(V "\"label\":\"run 7: h100 \\u00e9\"}", s);
    CHECK_STR("run 7: h100 \xc3\xa9", s.label);
    char longest[SPEC_LABEL_MAX];
    memset(longest, 'x', sizeof longest - 1);
    longest[sizeof longest - 1] = 0;
    json_t *o = json_pack("{s:s, s:s}", "variant", "async_v1", "label", longest);
    sl_error_t err = {0};
    CHECK_INT(SL_OK, spec_from_json(o, &s, &err));
    CHECK_STR(longest, s.label);
    json_decref(o);
    char too_long[SPEC_LABEL_MAX + 1];
    memset(too_long, 'x', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = 0;
    o = json_pack("{s:s, s:s}", "variant", "async_v1", "label", too_long);
    memset(&err, 0, sizeof err);
    CHECK_INT(SL_E_INVALID, spec_from_json(o, &s, &err));
    CHECK_STR("label", err.field);
    json_decref(o);
    BAD(V "\"label\":\"a\\u0000b\"}", "label");
    BAD(V "\"label\":5}", "label");
    BAD(V "\"label\":null}", "label");
    BAD(V "\"label\":[\"x\"]}", "label");
    BAD(V "\"label\":true}", "label");
}

TEST(sync_good_and_bad) {
    spec_t s;
    GOOD("{\"variant\":\"host_overlap\",\"sync\":true}", s);
    CHECK(s.sync);
    GOOD("{\"variant\":\"host_overlap\",\"sync\":false}", s);
    CHECK(!s.sync);
    BAD("{\"variant\":\"host_overlap\",\"sync\":1}", "sync");
    BAD("{\"variant\":\"host_overlap\",\"sync\":0}", "sync");
    BAD("{\"variant\":\"host_overlap\",\"sync\":\"true\"}", "sync");
    BAD("{\"variant\":\"host_overlap\",\"sync\":null}", "sync");
}

TEST(host_share_good_and_bad) {
    spec_t s;
    GOOD("{\"variant\":\"host_overlap\",\"host_share\":0}", s);
    CHECK_NEAR(0.0, s.host_share, 0);
    GOOD("{\"variant\":\"host_overlap\",\"host_share\":0.0}", s);
    CHECK_NEAR(0.0, s.host_share, 0);
    GOOD("{\"variant\":\"host_overlap\",\"host_share\":0.25}", s);
    CHECK_NEAR(0.25, s.host_share, 0);
    GOOD("{\"variant\":\"host_overlap\",\"host_share\":0.95}", s);
    CHECK_NEAR(0.95, s.host_share, 0);
    BAD("{\"variant\":\"host_overlap\",\"host_share\":-0.01}", "host_share");
    BAD("{\"variant\":\"host_overlap\",\"host_share\":-1}", "host_share");
    BAD("{\"variant\":\"host_overlap\",\"host_share\":0.9501}", "host_share");
    BAD("{\"variant\":\"host_overlap\",\"host_share\":1}", "host_share");
    BAD("{\"variant\":\"host_overlap\",\"host_share\":1e300}", "host_share");
    BAD("{\"variant\":\"host_overlap\",\"host_share\":\"0.5\"}", "host_share");
    BAD("{\"variant\":\"host_overlap\",\"host_share\":true}", "host_share");
    BAD("{\"variant\":\"host_overlap\",\"host_share\":null}", "host_share");
}

TEST(predict_good_and_bad) {
    spec_t s;
    GOOD(V "\"predict\":true}", s);
    CHECK(s.predict);
    GOOD(V "\"predict\":false}", s);
    CHECK(!s.predict);
    BAD(V "\"predict\":1}", "predict");
    BAD(V "\"predict\":\"true\"}", "predict");
    BAD(V "\"predict\":null}", "predict");
}

TEST(the_first_bad_field_is_named_and_output_untouched) {
    /* a good spec with one bad field: the error names that field, not a neighbour */
    BAD("{\"variant\":\"async_v2\",\"size\":\"2^20\",\"streams\":8,\"chunks\":16,\"kernel\":\"fill\","
        "\"block_size\":128,\"reps\":5,\"warmup\":\"x\",\"label\":\"a\"}",
        "warmup");
    BAD("{\"variant\":\"async_v2\",\"size\":\"2^20\",\"streams\":8,\"chunks\":16,\"kernel\":\"fill\","
        "\"block_size\":128,\"reps\":5,\"warmup\":1,\"label\":\"a\",\"timing\":\"gpu\"}",
        "timing");
}

/* ---- round trip ---- */

static bool spec_equal(const spec_t *a, const spec_t *b) {
    bool eq = a->variant == b->variant && a->size == b->size && a->streams == b->streams &&
              a->chunks == b->chunks && a->kernel == b->kernel && a->kernel_iters == b->kernel_iters &&
              a->block_size == b->block_size && a->launch == b->launch && a->host_memory == b->host_memory &&
              a->default_stream == b->default_stream && a->stream_flags == b->stream_flags &&
              a->flush == b->flush && a->driver_mode == b->driver_mode && a->timing == b->timing &&
              a->trace_ops == b->trace_ops && a->reps == b->reps && a->reps_auto == b->reps_auto &&
              a->warmup == b->warmup &&
              a->device_count == b->device_count && a->backend == b->backend && a->sync == b->sync &&
              a->host_share == b->host_share && a->predict == b->predict && strcmp(a->label, b->label) == 0;
    for (int i = 0; eq && i < a->device_count; i++)
        eq = a->devices[i] == b->devices[i];
    return eq;
}

static void round_trip(const char *text) {
    spec_t a, b;
    sl_error_t err;
    if (parse(text, &a, &err) != SL_OK) {
        fprintf(stderr, "  FAIL %s: %s does not parse: %s\n", check_current_test, text, err.message);
        check_failures_in_test++;
        return;
    }
    json_t *j = spec_to_json(&a);
    CHECK(j != NULL);
    if (!j)
        return;
    /* the full spec: every field, nothing else */
    CHECK_INT(SPEC_FIELD_COUNT, json_object_size(j));
    for (size_t i = 0; i < SPEC_FIELD_COUNT; i++)
        if (!json_object_get(j, spec_fields[i])) {
            fprintf(stderr, "  FAIL %s: spec_to_json left out %s\n", check_current_test, spec_fields[i]);
            check_failures_in_test++;
        }
    const char *key;
    json_t *val;
    json_object_foreach(j, key, val) {
        if (!spec_is_field(key)) {
            fprintf(stderr, "  FAIL %s: spec_to_json wrote an unknown field %s\n", check_current_test, key);
            check_failures_in_test++;
        }
    }
    /* through text, as the store keeps it */
    char *dumped = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    CHECK(dumped != NULL);
    if (!dumped)
        return;
    memset(&err, 0, sizeof err);
    int rc = parse(dumped, &b, &err);
    if (rc != SL_OK || !spec_equal(&a, &b)) {
        fprintf(stderr, "  FAIL %s: round trip of %s via %s: rc %d (%s)%s\n", check_current_test, text, dumped, rc,
                err.message, rc == SL_OK ? ", specs differ" : "");
        check_failures_in_test++;
    }
    free(dumped);
}

TEST(round_trip_gives_an_identical_spec) {
    for (int v = 0; v < VARIANT__COUNT; v++) {
        char text[128];
        snprintf(text, sizeof text, "{\"variant\":\"%s\"}", variant_names[v]);
        round_trip(text);
    }
    round_trip("{\"variant\":\"async_v2\",\"size\":\"2^32\",\"streams\":1024,\"chunks\":65536,\"kernel\":\"compute\","
               "\"kernel_iters\":100000,\"block_size\":1024,\"launch\":\"max_occupancy\",\"host_memory\":\"pageable\","
               "\"default_stream\":\"legacy\",\"stream_flags\":\"non_blocking\",\"flush\":\"stream_query\","
               "\"driver_mode\":\"wddm\",\"timing\":\"cupti\",\"reps\":1000,\"warmup\":100,\"devices\":[7],"
               "\"backend\":\"sim\",\"label\":\"every field \\\"quoted\\\" \\u00e9\",\"sync\":true,"
               "\"host_share\":0.95,\"predict\":true}");
    round_trip("{\"variant\":\"host_overlap\",\"reps\":\"auto\",\"host_share\":0.1,\"sync\":true,\"size\":12345}");
    round_trip("{\"variant\":\"multi_gpu\",\"devices\":[5,2,9],\"size\":3,\"streams\":1}");
    round_trip("{\"variant\":\"engine_streams\",\"streams\":9}");
    round_trip("{\"variant\":\"sequential\",\"chunks\":99,\"size\":1}");
    round_trip("{\"variant\":\"cpu\",\"backend\":\"cpu\",\"warmup\":0,\"reps\":1}");
    round_trip("{\"variant\":\"round_robin\",\"streams\":3,\"chunks\":17,\"host_share\":0.3333333333333333}");
}

TEST(spec_to_json_writes_reps_auto_and_sizes_as_numbers) {
    spec_t s;
    GOOD(V "\"reps\":\"auto\",\"size\":\"2^25\"}", s);
    json_t *j = spec_to_json(&s);
    CHECK(j != NULL);
    if (!j)
        return;
    CHECK_STR("auto", json_string_value(json_object_get(j, "reps")));
    CHECK(json_is_integer(json_object_get(j, "size")));
    CHECK_INT(1 << 25, json_integer_value(json_object_get(j, "size")));
    CHECK_INT(s.streams, json_integer_value(json_object_get(j, "chunks")));
    CHECK_STR("async_v1", json_string_value(json_object_get(j, "variant")));
    CHECK(json_is_array(json_object_get(j, "devices")));
    CHECK(json_is_false(json_object_get(j, "sync")));
    json_decref(j);
}

static const check_test_t tests[] = {
    TEST_ENTRY(defaults_minimal_async_v1_fills_every_field),
    TEST_ENTRY(defaults_are_the_documented_values),
    TEST_ENTRY(defaults_chunks_follow_given_streams),
    TEST_ENTRY(defaults_multi_gpu_uses_devices_0_and_1),
    TEST_ENTRY(defaults_engine_streams_forces_three_streams),
    TEST_ENTRY(defaults_sequential_forces_one_chunk),
    TEST_ENTRY(every_variant_name_is_accepted),
    TEST_ENTRY(not_an_object_is_refused),
    TEST_ENTRY(missing_variant_is_refused),
    TEST_ENTRY(unknown_fields_are_refused_by_name),
    TEST_ENTRY(spec_is_field_knows_every_field),
    TEST_ENTRY(variant_bad_values),
    TEST_ENTRY(size_good_values),
    TEST_ENTRY(size_bad_values),
    TEST_ENTRY(streams_good_and_bad),
    TEST_ENTRY(chunks_good_and_bad),
    TEST_ENTRY(kernel_good_and_bad),
    TEST_ENTRY(kernel_iters_good_and_bad),
    TEST_ENTRY(block_size_good_and_bad),
    TEST_ENTRY(enum_fields_good_and_bad),
    TEST_ENTRY(reps_good_and_bad),
    TEST_ENTRY(warmup_good_and_bad),
    TEST_ENTRY(devices_good_and_bad),
    TEST_ENTRY(devices_count_must_match_the_variant),
    TEST_ENTRY(multi_gpu_chunks_must_fit_each_devices_share),
    TEST_ENTRY(host_overlap_gpu_share_must_hold_the_chunks),
    TEST_ENTRY(zero_copy_defaults_and_pinned_memory),
    TEST_ENTRY(backend_good_and_bad),
    TEST_ENTRY(label_good_and_bad),
    TEST_ENTRY(sync_good_and_bad),
    TEST_ENTRY(host_share_good_and_bad),
    TEST_ENTRY(predict_good_and_bad),
    TEST_ENTRY(the_first_bad_field_is_named_and_output_untouched),
    TEST_ENTRY(round_trip_gives_an_identical_spec),
    TEST_ENTRY(spec_to_json_writes_reps_auto_and_sizes_as_numbers),
};

CHECK_MAIN("unit-spec", tests)
