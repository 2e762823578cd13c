/* count_calls.c — `make bench-calls`' injection library (loaded by the CUDA driver through
 * CUDA_INJECTION64_PATH): counts every runtime and driver API call the process makes, by name,
 * with CUPTI's callback API, and appends them at exit to $COUNT_CALLS_OUT under the heading
 * $COUNT_CALLS_TAG. bench/bench_calls.py runs streamlab and the reference with it (issue 19:
 * what one rep costs in calls, streamlab against a plain CUDA program). */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned long long rt[4096], drv[4096];
static void CUPTIAPI cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data) {
    (void)ud;
    const CUpti_CallbackData *d = (const CUpti_CallbackData *)data;
    if (d->callbackSite != CUPTI_API_ENTER || id >= 4096)
        return;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
        __atomic_add_fetch(&rt[id], 1, __ATOMIC_RELAXED);
    else if (dom == CUPTI_CB_DOMAIN_DRIVER_API)
        __atomic_add_fetch(&drv[id], 1, __ATOMIC_RELAXED);
}
static void dump(void) {
    const char *path = getenv("COUNT_CALLS_OUT");
    FILE *f = path ? fopen(path, "a") : stderr;
    if (!f) return;
    fprintf(f, "== %s\n", getenv("COUNT_CALLS_TAG") ? getenv("COUNT_CALLS_TAG") : "?");
    for (int dom = 0; dom < 2; dom++)
        for (int i = 0; i < 4096; i++) {
            unsigned long long n = dom ? drv[i] : rt[i];
            if (!n) continue;
            const char *name = NULL;
            cuptiGetCallbackName(dom ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, (uint32_t)i, &name);
            fprintf(f, "%s %s %llu\n", dom ? "drv" : "rt", name ? name : "?", n);
        }
    if (f != stderr) fclose(f);
}
int InitializeInjection(void) {
    CUpti_SubscriberHandle s;
    if (cuptiSubscribe(&s, cb, NULL) != CUPTI_SUCCESS) { fprintf(stderr, "count_calls: subscribe failed\n"); return 0; }
    cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_DRIVER_API);
    atexit(dump);
    return 1;
}
