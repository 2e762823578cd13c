/* fuzz_bundle.c — libFuzzer harness of the bundle importer (db/bundle.c), with the
 * server's spec check as POST /api/import uses it (server/handlers_bundles.c).
 *
 * bytes -> json (as the server reads a body) -> store_import_bundle into a fresh
 * in-memory store holding this (sim) machine. A refused bundle must carry a sendable
 * error and leave the store as it was (no experiment written). An accepted one must:
 *   - pass PRAGMA integrity_check;
 *   - export again (store_export_bundle of its experiments), and that export must
 *     import into the same store as all "unchanged" (idempotent by id, no conflict);
 *   - import into a second fresh store, whose export of the same ids has the same
 *     experiments and timelines (a bundle survives export -> import -> export). */
#include <stdint.h>

#include "../../db/bundle.h"
#include "../../server/spec.h"
#include "fuzz_util.h"

static machine_info_t machine;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_sim_machine(&machine);
    return 0;
}

static int check_spec(json_t *spec, sl_error_t *err) {
    spec_t parsed;
    return spec_from_json(spec, &parsed, err);
}

static store_t *fresh_store(void) {
    store_t *s = NULL;
    sl_error_t err = {0};
    if (store_open(":memory:", &s, &err) || store_migrate(s, &err) || store_upsert_machine(s, &machine, &err))
        FUZZ_FAIL("cannot make an in-memory store: %s", err.message);
    return s;
}

static long long experiment_count(store_t *s) {
    store_counts_t c;
    sl_error_t err = {0};
    if (store_count_by_status(s, &c, &err))
        FUZZ_FAIL("store_count_by_status: %s", err.message);
    return c.queued + c.running + c.done + c.failed + c.cancelled;
}

static char *dump(json_t *j) {
    char *t = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (t && strlen(t) > 2000)
        strcpy(t + 1990, "...");
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_t *bundle = fuzz_load_like_server(data, size);
    if (!bundle)
        return 0;
    store_t *a = fresh_store(), *b = NULL;
    json_t *out1 = NULL, *out2 = NULL;
    const char **ids = NULL;
    bundle_counts_t counts = {0};
    sl_error_t err = {0};
    int rc = store_import_bundle(a, bundle, machine.id, check_spec, &counts, &err);
    if (rc) {
        fuzz_check_error(&err, rc, "store_import_bundle");
        if (err.code == SL_E_DB || err.code == SL_E_INTERNAL)
            FUZZ_FAIL("a bad bundle ended in a %s error (a 500, not a 4xx): %s (field %s)", sl_code_name(err.code),
                      err.message, err.field);
        if (experiment_count(a) != 0)
            FUZZ_FAIL("a refused import left %lld experiments in the store", experiment_count(a));
        goto done;
    }
    if (store_integrity_check(a, &err))
        FUZZ_FAIL("integrity_check after an import: %s", err.message);
    json_t *exps = json_object_get(bundle, "experiments");
    size_t n = json_array_size(exps);
    if ((long long)n != counts.imported + counts.unchanged)
        FUZZ_FAIL("import counted %lld imported + %lld unchanged of %zu experiments", counts.imported,
                  counts.unchanged, n);
    if (n == 0)
        goto done;
    ids = calloc(n, sizeof *ids);
    if (!ids)
        FUZZ_FAIL("out of memory");
    for (size_t i = 0; i < n; i++)
        ids[i] = json_string_value(json_object_get(json_array_get(exps, i), "id"));
    out1 = store_export_bundle(a, ids, n, NULL, &err);
    if (!out1)
        FUZZ_FAIL("export of just-imported experiments failed: %s", err.message);
    bundle_counts_t again = {0};
    if ((rc = store_import_bundle(a, out1, machine.id, check_spec, &again, &err))) {
        char *t = dump(out1);
        FUZZ_FAIL("re-importing the store's own export failed: %s: %s (field %s)\n  export: %s", sl_code_name(err.code),
                  err.message, err.field, t ? t : "?");
    }
    if (again.imported != 0 || again.unchanged != (long long)n)
        FUZZ_FAIL("re-import of the store's own export: expected 0 imported, %zu unchanged; got %lld, %lld", n,
                  again.imported, again.unchanged);
    b = fresh_store();
    if ((rc = store_import_bundle(b, out1, machine.id, check_spec, &again, &err)))
        FUZZ_FAIL("the export does not import into a fresh store: %s (field %s)", err.message, err.field);
    out2 = store_export_bundle(b, ids, n, NULL, &err);
    if (!out2)
        FUZZ_FAIL("export from the second store failed: %s", err.message);
    static const char *const parts[] = {"experiments", "timelines"};
    for (size_t p = 0; p < 2; p++) {
        json_t *x = json_object_get(out1, parts[p]), *y = json_object_get(out2, parts[p]);
        if (!json_equal(x, y)) {
            char *tx = dump(x), *ty = dump(y);
            FUZZ_FAIL("export -> import -> export changed \"%s\"\n  expected: %s\n  actual:   %s", parts[p],
                      tx ? tx : "?", ty ? ty : "?");
        }
    }
done:
    free(ids);
    json_decref(out1);
    json_decref(out2);
    store_close(a);
    store_close(b);
    json_decref(bundle);
    return 0;
}
