/* bench_opts.c — see bench_opts.h. */
#include "bench_opts.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_seed_spec(spec_t *s, variant_t variant, uint64_t size, int streams) {
    spec_defaults(s, variant);
    s->size = size;
    s->streams = s->chunks = streams;
    s->kernel = KERNEL_BLOG;
    s->block_size = 256;
    s->host_memory = HOSTMEM_PINNED;
}

static int parse_int(const char *s, int *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

int bench_options(int argc, char **argv, const bench_opt_t *opts, int nopts, const char **pos, int maxpos,
                  int *npos, const char *usage) {
    if (npos)
        *npos = 0;
    for (int i = 1; i < argc; i++) {
        const bench_opt_t *o = NULL;
        for (int k = 0; k < nopts && !o; k++)
            if (strcmp(argv[i], opts[k].name) == 0)
                o = &opts[k];
        bool ok = true;
        if (!o) {
            ok = argv[i][0] != '-' && pos && npos && *npos < maxpos;
            if (ok)
                pos[(*npos)++] = argv[i];
        } else if (o->kind == OPT_FLAG) {
            *(bool *)o->dst = true;
        } else if (i + 1 >= argc) {
            ok = false;
        } else if (o->kind == OPT_INT) {
            ok = parse_int(argv[++i], (int *)o->dst) == 0;
        } else {
            *(const char **)o->dst = argv[++i];
        }
        if (!ok) {
            fprintf(stderr, "%s\n", usage);
            return -1;
        }
    }
    return 0;
}

int bench_pin_cpu(int cpu, const char *prog) {
    if (cpu < 0)
        return -1;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) {
        fprintf(stderr, "%s: cannot pin to CPU %d: running unpinned\n", prog, cpu);
        return -1;
    }
    return cpu;
}

json_t *bench_load_json(const char *path, const char *prog) {
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (!j)
        fprintf(stderr, "%s: %s: line %d: %s\n", prog, path, jerr.line, jerr.text);
    return j;
}
