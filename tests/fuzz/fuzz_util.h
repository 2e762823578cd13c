/* fuzz_util.h — what the harnesses share: a finding is reported on stderr with what was
 * expected and what came back, then abort() so that libFuzzer keeps the input; and the
 * checks every error must pass to reach a client, through the server's reply_error(). */
#ifndef STREAMLAB_FUZZ_UTIL_H
#define STREAMLAB_FUZZ_UTIL_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/http.h"

#define FUZZ_FAIL(...)                                                              \
    do {                                                                            \
        fprintf(stderr, "fuzz: FINDING at %s:%d: ", __FILE__, __LINE__);            \
        fprintf(stderr, __VA_ARGS__);                                               \
        fprintf(stderr, "\n");                                                      \
        abort();                                                                    \
    } while (0)

/* An error as the HTTP layer will send it: a code, a message, and the client's view of
 * it through the server's own reply_error() (server/http.c): {"error": {"code": string,
 * "message": non-empty string, "field": string where err->field is set}}. jansson makes
 * no string of invalid UTF-8, and messages quote what clients sent, cut at byte limits. */
static inline void fuzz_check_error(const sl_error_t *err, int rc, const char *what) {
    if (rc != (int)err->code)
        FUZZ_FAIL("%s: returned %d but err.code is %d", what, rc, (int)err->code);
    if (err->code == SL_OK)
        FUZZ_FAIL("%s: failed with code SL_OK", what);
    if (!err->message[0])
        FUZZ_FAIL("%s: error %s without a message", what, sl_code_name(err->code));
    request_t req;
    memset(&req, 0, sizeof req);
    reply_error(&req, err);
    json_t *e = json_object_get(req.reply, "error");
    json_t *code = json_object_get(e, "code"), *message = json_object_get(e, "message");
    if (!json_is_string(code) || !json_is_string(message) || !json_string_length(message))
        FUZZ_FAIL("%s: reply_error() sends %s for the error \"%s\" (field \"%s\"): no code or message (invalid UTF-8?)",
                  what, req.reply ? "an error without them" : "nothing", err->message, err->field);
    if (err->field[0] && !json_is_string(json_object_get(e, "field")))
        FUZZ_FAIL("%s: reply_error() drops the field \"%s\" (invalid UTF-8?)", what, err->field);
    json_decref(req.reply);
}

/* The machine a harness runs against: one simulated GPU, calibrated (the server's
 * start-up without CUDA). For LLVMFuzzerInitialize. */
static inline void fuzz_sim_machine(machine_info_t *m) {
    setenv("STREAMLAB_SIM_DEVICES", "1", 1);
    machine_discover(m, true, "fuzz");
    sl_error_t err = {0};
    machine_calibrate(m, &err);
}

/* http.c's request_json(): the same flags and the same retry for too-big integers. */
static inline json_t *fuzz_load_like_server(const uint8_t *data, size_t size) {
    json_error_t jerr;
    size_t flags = JSON_REJECT_DUPLICATES | JSON_DECODE_ANY;
    json_t *j = json_loadb((const char *)data, size, flags, &jerr);
    if (!j && strstr(jerr.text, "too big integer"))
        j = json_loadb((const char *)data, size, flags | JSON_DECODE_INT_AS_REAL, &jerr);
    return j;
}

#endif
