/* support.c — what server/main.c gives the binary and the unit tests need without
 * main(): each thread's store connection and new ids. Weak, so a test may define its own. */
#include <pthread.h>
#include <stdio.h>
#include <sys/random.h>

#include "../../server/app.h"

__attribute__((weak)) store_t *app_store(app_t *app, sl_error_t *err) {
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

__attribute__((weak)) void app_new_id(const char *prefix, char out[40]) {
    unsigned char r[8] = {0};
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        r[0] = 1;
    snprintf(out, 40, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
}
