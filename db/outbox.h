/* outbox.h — the push outbox (migrations/002_outbox.sql): finished experiments waiting to
 * be delivered to a central streamlab. An entry is removed only when the central server
 * accepted the experiment's bundle, so a result is never lost while it is unreachable; an
 * entry the central server refused for good (a 4xx other than 409/429) stays, with its
 * error, and is not tried again. Times are the store's ISO 8601 UTC strings. */
#ifndef STREAMLAB_OUTBOX_H
#define STREAMLAB_OUTBOX_H

#include "store.h"

/* Add a done or failed experiment (anything else is left out: 0 changes); a second add of
 * the same experiment keeps the first entry. */
int store_outbox_add(store_t *s, const char *experiment_id, sl_error_t *err);
/* The entry still to be tried whose next attempt is the earliest (due_only: and due now):
 * new entries in the order they came, one that failed behind those that have not, so that
 * one entry the central server keeps failing never holds back the others. Returns 1 with
 * id_out filled, 0 when there is none, -1 on error. */
int store_outbox_next(store_t *s, bool due_only, char id_out[64], sl_error_t *err);
/* Delivered: the entry goes. */
int store_outbox_remove(store_t *s, const char *experiment_id, sl_error_t *err);
/* Not delivered this time: one more attempt, the next one not before delay_s from now. */
int store_outbox_defer(store_t *s, const char *experiment_id, double delay_s, const char *error, sl_error_t *err);
/* Refused for good: keep the entry with its error; it is not tried again. */
int store_outbox_give_up(store_t *s, const char *experiment_id, const char *error, sl_error_t *err);

typedef struct outbox_entry {
    bool present;        /* the experiment has an entry */
    bool given_up;       /* ... that is not tried again */
    int attempts;
    char last_error[512];
} outbox_entry_t;
int store_outbox_get(store_t *s, const char *experiment_id, outbox_entry_t *out, sl_error_t *err);
/* Entries still to be tried, and entries given up. */
int store_outbox_count(store_t *s, long long *pending, long long *given_up, sl_error_t *err);

#endif
