/* bundle_files.h — result bundles as files on disk: `streamlab import FILE|DIR` and the
 * example bundles the server ships (GET/POST /api/examples, the --examples folder). A path
 * is one bundle file, or a folder whose *.json files are bundles, taken in name order. The
 * checking and the one-transaction import of each bundle are db/bundle.c's. */
#ifndef STREAMLAB_BUNDLE_FILES_H
#define STREAMLAB_BUNDLE_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "../db/bundle.h"

/* The bundle files of path: path itself when it is a file; else the folder's *.json files
 * (not hidden ones) in name order, as "path/name". A folder that does not exist has none when
 * missing_ok, else SL_E_NOTFOUND. *out is malloc'd (bundle_files_free). */
int bundle_files_list(const char *path, bool missing_ok, char ***out, size_t *n, sl_error_t *err);
void bundle_files_free(char **paths, size_t n);

/* Import path (a file or a folder, as above) into s, summing every file's counts into *sum.
 * Every file is read and checked before the first is imported, so that a bad one stores
 * nothing; then each is imported in its own transaction, in name order (a 409 on a later
 * file keeps the earlier ones). max_bytes: a larger file is SL_E_TOOLARGE (0: no limit).
 * Errors name the file in the message. */
int bundle_files_import(store_t *s, const char *path, const char *this_machine_id, size_t max_bytes,
                        bundle_counts_t *sum, sl_error_t *err);

/* {"items": [{"file", "bytes", "machines", "experiments", "measured", "ops"} or, for a file
 * that is not a readable bundle, {"file", "bytes", "error"}], "dir": dir} for the bundle
 * files of the folder dir (none when it is missing). */
json_t *bundle_files_describe(const char *dir, size_t max_bytes, sl_error_t *err);

/* {"imported", "unchanged", "machines", "sweeps"}: the answer of POST /api/import. */
json_t *bundle_counts_json(const bundle_counts_t *c);

#endif
