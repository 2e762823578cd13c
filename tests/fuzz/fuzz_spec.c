/* fuzz_spec.c — libFuzzer harness of the spec parser (server/spec.c).
 *
 * bytes -> json_loadb (as the server reads a body) -> spec_from_json. A refused spec must
 * carry an error the HTTP layer can send (code, message, field; valid UTF-8). An accepted
 * one must round-trip: spec_to_json -> spec_from_json accepts it again and gives the same
 * JSON, also through text (as the store keeps it: json_dumps, then json_loads). */
#include <stdint.h>

#include "../../server/spec.h"
#include "fuzz_util.h"

static void check_round_trip(const spec_t *s1) {
    json_t *j1 = spec_to_json(s1);
    if (!j1)
        FUZZ_FAIL("spec_to_json gave NULL for an accepted spec");
    spec_t s2;
    sl_error_t err = {0};
    int rc = spec_from_json(j1, &s2, &err);
    if (rc) {
        char *t = json_dumps(j1, JSON_COMPACT);
        FUZZ_FAIL("spec_to_json's output is refused by spec_from_json: %s (field %s)\n  spec: %s", err.message,
                  err.field, t ? t : "?");
    }
    json_t *j2 = spec_to_json(&s2);
    if (!j2 || !json_equal(j1, j2)) {
        char *a = json_dumps(j1, JSON_COMPACT | JSON_SORT_KEYS), *b = j2 ? json_dumps(j2, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        FUZZ_FAIL("round trip differs\n  expected: %s\n  actual:   %s", a ? a : "?", b ? b : "NULL");
    }
    /* through text, as stored */
    char *text = json_dumps(j1, JSON_COMPACT);
    if (!text)
        FUZZ_FAIL("json_dumps of an accepted spec failed");
    json_error_t jerr;
    json_t *j3 = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!j3)
        FUZZ_FAIL("the stored spec text does not parse: %s\n  text: %s", jerr.text, text);
    spec_t s3;
    if (spec_from_json(j3, &s3, &err))
        FUZZ_FAIL("the stored spec text is refused: %s\n  text: %s", err.message, text);
    json_t *j4 = spec_to_json(&s3);
    if (!j4 || !json_equal(j1, j4)) {
        char *b = j4 ? json_dumps(j4, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        FUZZ_FAIL("round trip through text differs\n  expected: %s\n  actual:   %s", text, b ? b : "NULL");
    }
    free(text);
    json_decref(j1);
    json_decref(j2);
    json_decref(j3);
    json_decref(j4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_t *j = fuzz_load_like_server(data, size);
    if (!j)
        return 0;
    spec_t spec;
    sl_error_t err = {0};
    int rc = spec_from_json(j, &spec, &err);
    if (rc) {
        fuzz_check_error(&err, rc, "spec_from_json");
        if (err.code != SL_E_INVALID)
            FUZZ_FAIL("spec_from_json refused a well-formed document with %s (want invalid, 422): %s",
                      sl_code_name(err.code), err.message);
    } else {
        check_round_trip(&spec);
    }
    json_decref(j);
    return 0;
}
