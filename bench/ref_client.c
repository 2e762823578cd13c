/* ref_client.c — the reference program as a child answering over a pipe (ref_client.h). */
#include "ref_client.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int ref_start(ref_proc_t *rp, const char *path, int cpu) {
    int in[2], out[2];
    memset(rp, 0, sizeof *rp);
    if (pipe(in) != 0)
        return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    rp->pid = fork();
    if (rp->pid < 0)
        return -1;
    if (rp->pid == 0) {
        if (cpu >= 0) { /* the reference issues from the same CPU as streamlab */
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof one, &one);
        }
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execl(path, path, "--serve", (char *)NULL);
        fprintf(stderr, "bench: cannot run %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    /* a second reference (bench_gpu --aa), forked later, must not inherit this one's
     * ends: its stdin would never see EOF */
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    rp->to = fdopen(in[1], "w");
    rp->from = fdopen(out[0], "r");
    return rp->to && rp->from ? 0 : -1;
}

void ref_stop(ref_proc_t *rp) {
    if (rp->to)
        fclose(rp->to); /* EOF: the reference exits */
    if (rp->from)
        fclose(rp->from);
    if (rp->pid > 0)
        waitpid(rp->pid, NULL, 0);
    memset(rp, 0, sizeof *rp);
}

double ref_case(ref_proc_t *rp, const char *variant, uint64_t size, int streams, int reps, int warmup) {
    char line[512];
    double med = -1, mn = 0, mx = 0;
    rp->last_issue_us = 0;
    fprintf(rp->to, "%s %llu %d %d %d\n", variant, (unsigned long long)size, streams, reps, warmup);
    fflush(rp->to);
    if (!fgets(line, sizeof line, rp->from)) {
        fprintf(stderr, "bench: the reference stopped answering\n");
        return -1;
    }
    if (sscanf(line, "ok %lf %lf %lf %lf", &med, &mn, &mx, &rp->last_issue_us) < 3) {
        fprintf(stderr, "bench: reference %s %llu x%d: %s", variant, (unsigned long long)size, streams, line);
        return -1;
    }
    return med;
}

int ref_settle(ref_proc_t *rp, double max_s, double *seconds, int *steady, double *first_ms, double *last_ms) {
    char line[512];
    fprintf(rp->to, "settle %g\n", max_s);
    fflush(rp->to);
    if (!fgets(line, sizeof line, rp->from)) {
        fprintf(stderr, "bench: the reference stopped answering\n");
        return -1;
    }
    if (sscanf(line, "ok %lf %d %lf %lf", seconds, steady, first_ms, last_ms) != 4) {
        fprintf(stderr, "bench: reference settle: %s", line);
        return -1;
    }
    return 0;
}
