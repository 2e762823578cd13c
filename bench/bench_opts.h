/* bench_opts.h — what the C benchmarks (bench_gpu, bench_sim, bench_wide) share besides the
 * reference client: their command-line options, from one table per program instead of a
 * chain of strcmp()s in each; pinning the issuing thread to a CPU; reading a JSON file. */
#ifndef STREAMLAB_BENCH_OPTS_H
#define STREAMLAB_BENCH_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/core.h"

typedef enum { OPT_FLAG, OPT_INT, OPT_STR } bench_opt_kind_t;

typedef struct bench_opt {
    const char *name;       /* "--reps" */
    bench_opt_kind_t kind;
    void *dst;              /* bool *, int * or const char ** */
} bench_opt_t;

/* Fills each option's dst from argv; arguments that are not options go to pos (at most
 * maxpos; *npos counts them), or are an error where pos is NULL. An unknown option, a
 * missing value, a value that is not a whole number, or too many positional arguments:
 * prints usage to stderr and returns -1. */
int bench_options(int argc, char **argv, const bench_opt_t *opts, int nopts, const char **pos, int maxpos,
                  int *npos, const char *usage);

/* Pin the calling thread (and the threads it starts after) to CPU cpu: cpu, or -1 (said on
 * stderr, naming prog) where it cannot be pinned; -1 for a cpu below 0 (unpinned). */
int bench_pin_cpu(int cpu, const char *prog);

struct json_t;
/* The JSON file at path, or NULL (said on stderr with the line at fault, naming prog). */
struct json_t *bench_load_json(const char *path, const char *prog);

/* A point of the seeds' table as a spec, as bench/ref_overlap runs it: variant over size
 * elements in `streams` chunks, one a stream, the blog kernel, block 256, pinned; the rest
 * spec_defaults' (reps, warm-ups and backend are the caller's). */
void bench_seed_spec(spec_t *s, variant_t variant, uint64_t size, int streams);

#endif
