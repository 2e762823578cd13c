/* app.c — what every part of the server asks of the app (see app.h): each thread's own
 * store connection and new random ids. It holds no app of its own: main.c owns the one
 * app_t and fills it; handlers, the queue and the push thread are handed a pointer.
 * Nothing here may call back into main.c, the queue or the HTTP layer. */
#include "app.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

store_t *app_store(app_t *app, sl_error_t *err) {
    store_t *s = pthread_getspecific(app->store_key);
    if (s)
        return s;
    if (store_open(app->cfg.db_path, &s, err))
        return NULL;
    if (pthread_setspecific(app->store_key, s)) {
        store_close(s);
        sl_error_set(err, SL_E_INTERNAL, "", "cannot keep the store for this thread");
        return NULL;
    }
    return s;
}

void app_new_id(const char *prefix, char out[40]) {
    unsigned char r[8];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) { /* never expected; fall back to time and pid */
        unsigned long long t = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
        static unsigned long long counter;
        t ^= __atomic_add_fetch(&counter, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
        memcpy(r, &t, sizeof r);
    }
    snprintf(out, 40, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
}

int app_pin_thread(int cpu, char *why, size_t len) {
    cpu_set_t one;
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
        snprintf(why, len, "no CPU %d", cpu);
        return -1;
    }
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    if (rc) {
        snprintf(why, len, "cannot pin a thread to CPU %d (one this process may not run on?): %s", cpu,
                 strerror(rc));
        return -1;
    }
    return 0;
}

int app_keep_off_cpus(int first, int n, char *why, size_t len) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(why, len, "cannot read this thread's CPUs: %s", strerror(errno));
        return -1;
    }
    for (int c = first; c < first + n && c < CPU_SETSIZE; c++)
        CPU_CLR(c, &set);
    if (CPU_COUNT(&set) == 0) {
        snprintf(why, len, "no CPU left besides the workers' (%d from CPU %d)", n, first);
        return -1;
    }
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc) {
        snprintf(why, len, "cannot move a thread off CPU %d: %s", first, strerror(rc));
        return -1;
    }
    return 0;
}
