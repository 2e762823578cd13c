/* bundle_files.c — result bundles as files on disk (see bundle_files.h): which files a path
 * names, reading one within a size limit, importing a file or a folder of them, and the
 * listing of the example bundles. It holds no SQL and speaks no HTTP: the store's import
 * (db/bundle.c) does the checking and writing, the handlers and main.c the answering. */
#include "bundle_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spec.h"

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void bundle_files_free(char **paths, size_t n) {
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}

static bool is_bundle_name(const char *name) {
    size_t len = strlen(name);
    return name[0] != '.' && len > 5 && strcmp(name + len - 5, ".json") == 0;
}

int bundle_files_list(const char *path, bool missing_ok, char ***out, size_t *n, sl_error_t *err) {
    struct stat st;
    char **paths = NULL;
    size_t count = 0, cap = 0;
    DIR *d = NULL;
    *out = NULL;
    *n = 0;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && missing_ok)
            return SL_OK;
        return sl_error_set(err, errno == ENOENT ? SL_E_NOTFOUND : SL_E_INTERNAL, "", "%s: %s", path, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        if (!(paths = malloc(sizeof *paths)) || !(paths[0] = strdup(path))) {
            free(paths);
            return sl_error_set(err, SL_E_NOMEM, "", "out of memory listing %s", path);
        }
        *out = paths;
        *n = 1;
        return SL_OK;
    }
    if (!(d = opendir(path)))
        return sl_error_set(err, SL_E_INTERNAL, "", "%s: %s", path, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_bundle_name(de->d_name))
            continue;
        size_t len = strlen(path) + strlen(de->d_name) + 2;
        char *full = malloc(len);
        if (!full)
            goto nomem;
        snprintf(full, len, "%s/%s", path, de->d_name);
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) { /* a folder or dangling link named *.json */
            free(full);
            continue;
        }
        if (count == cap) {
            size_t want = cap ? 2 * cap : 16;
            char **more = realloc(paths, want * sizeof *paths);
            if (!more) {
                free(full);
                goto nomem;
            }
            paths = more;
            cap = want;
        }
        paths[count++] = full;
    }
    closedir(d);
    if (count > 1) /* one folder: the paths sort as the names */
        qsort(paths, count, sizeof *paths, compare_names);
    *out = paths;
    *n = count;
    return SL_OK;
nomem:
    closedir(d);
    bundle_files_free(paths, count);
    return sl_error_set(err, SL_E_NOMEM, "", "out of memory listing %s", path);
}

/* One file as JSON; its size in *bytes. SL_E_TOOLARGE past max_bytes (0: no limit), SL_E_PARSE
 * when it is not JSON. */
static json_t *load(const char *file, size_t max_bytes, long long *bytes, sl_error_t *err) {
    FILE *f = fopen(file, "rb");
    struct stat st;
    json_t *j = NULL;
    *bytes = 0;
    if (!f || fstat(fileno(f), &st) != 0) {
        sl_error_set(err, errno == ENOENT ? SL_E_NOTFOUND : SL_E_INTERNAL, "", "%s: %s", file, strerror(errno));
        goto done;
    }
    *bytes = (long long)st.st_size;
    if (max_bytes && (size_t)st.st_size > max_bytes) {
        sl_error_set(err, SL_E_TOOLARGE, "", "%s: %lld bytes, more than the import limit of %zu", file,
                     (long long)st.st_size, max_bytes);
        goto done;
    }
    json_error_t jerr;
    if (!(j = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr)))
        sl_error_set(err, SL_E_PARSE, "", "%s: malformed JSON at line %d, column %d: %s", file, jerr.line, jerr.column,
                     jerr.text);
done:
    if (f)
        fclose(f);
    return j;
}

/* Put the file's name before an error's message. */
static int in_file(sl_error_t *err, const char *file, int rc) {
    if (err && rc && strncmp(err->message, file, strlen(file)) != 0) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        snprintf(err->message, sizeof err->message, "%.200s: %.*s", file, (int)sizeof err->message - 210, msg);
    }
    return rc;
}

int bundle_files_import(store_t *s, const char *path, const char *this_machine_id, size_t max_bytes,
                        bundle_counts_t *sum, sl_error_t *err) {
    char **files = NULL;
    size_t n = 0;
    long long bytes;
    int rc = bundle_files_list(path, false, &files, &n, err);
    for (size_t i = 0; rc == SL_OK && n > 1 && i < n; i++) { /* a folder: every file checked first */
        json_t *b = load(files[i], max_bytes, &bytes, err);
        rc = in_file(err, files[i], b ? bundle_check(b, spec_check_json, err) : (int)err->code);
        json_decref(b);
    }
    for (size_t i = 0; rc == SL_OK && i < n; i++) {
        bundle_counts_t c = {0};
        json_t *b = load(files[i], max_bytes, &bytes, err);
        rc = in_file(err, files[i],
                     b ? store_import_bundle(s, b, this_machine_id, spec_check_json, &c, err) : (int)err->code);
        json_decref(b);
        sum->imported += c.imported;
        sum->unchanged += c.unchanged;
        sum->machines += c.machines;
        sum->sweeps += c.sweeps;
    }
    bundle_files_free(files, n);
    return rc;
}

/* The part of a file's path after the last '/'. */
static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

json_t *bundle_files_describe(const char *dir, size_t max_bytes, sl_error_t *err) {
    char **files = NULL;
    size_t n = 0;
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        sl_error_set(err, SL_E_INTERNAL, "", "the examples folder %s is not a folder", dir);
        return NULL;
    }
    if (bundle_files_list(dir, true, &files, &n, err))
        return NULL;
    json_t *items = json_array();
    for (size_t i = 0; items && i < n; i++) {
        sl_error_t e = {0};
        long long bytes;
        json_t *b = load(files[i], max_bytes, &bytes, &e);
        json_t *item = b ? bundle_describe(b, &e) : NULL;
        json_decref(b);
        if (!item) /* listed with what is wrong with it: the other files stay usable */
            item = json_pack("{s:s}", "error", e.message);
        if (!item || json_array_append_new(items, item) ||
            json_object_set_new(item, "file", json_string(base_name(files[i]))) ||
            json_object_set_new(item, "bytes", json_integer(bytes))) {
            json_decref(items);
            items = NULL;
        }
    }
    bundle_files_free(files, n);
    json_t *out = items ? json_pack("{s:o, s:s}", "items", items, "dir", dir) : NULL;
    if (!out)
        sl_error_set(err, SL_E_NOMEM, "", "out of memory listing %s", dir);
    return out;
}

json_t *bundle_counts_json(const bundle_counts_t *c) {
    return json_pack("{s:I, s:I, s:I, s:I}", "imported", (json_int_t)c->imported, "unchanged",
                     (json_int_t)c->unchanged, "machines", (json_int_t)c->machines, "sweeps", (json_int_t)c->sweeps);
}
