/* ref_client.h — the reference program (bench/ref_overlap --serve) as a child process
 * answering one case a line: what bench_gpu and bench_sim compare streamlab with. */
#ifndef STREAMLAB_REF_CLIENT_H
#define STREAMLAB_REF_CLIENT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct ref_proc {
    pid_t pid;
    FILE *to, *from;
    double last_issue_us; /* the last case's median host issue time */
} ref_proc_t;

/* Start `path --serve`, pinned to cpu (-1: not pinned); 0 or -1. */
int ref_start(ref_proc_t *rp, const char *path, int cpu);
/* Close its input (it exits) and reap it. */
void ref_stop(ref_proc_t *rp);
/* Settle the machine (the reference's `settle MAX_S`): the seconds it took and whether the
 * host-bound points came steady in them (*steady), the first and last 5 s windows' 2^22
 * v1 x128 medians (ms); 0, or -1 with the message printed. */
int ref_settle(ref_proc_t *rp, double max_s, double *seconds, int *steady, double *first_ms, double *last_ms);
/* One case (variant seq|v1|v2|k): its median in ms, or < 0 with the message printed. */
double ref_case(ref_proc_t *rp, const char *variant, uint64_t size, int streams, int reps, int warmup);

#endif
