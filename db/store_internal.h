/* store_internal.h — the store's insides, shared by the db/ files only (store.c,
 * bundle.c). Nothing outside db/ includes it. */
#ifndef STREAMLAB_STORE_INTERNAL_H
#define STREAMLAB_STORE_INTERNAL_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>

#define STORE_STMT_CACHE 48

/* A prepared statement kept for the connection's life, keyed by its SQL text: parsing
 * the SQL was most of a cached read's time. */
typedef struct store_stmt {
    char *sql;
    sqlite3_stmt *st;
} store_stmt_t;

/* now as ISO 8601 UTC with milliseconds: 2026-11-23T04:12:33.123Z */
void store_now_iso(char out[32]);

/* An op_events row as GET .../timeline answers it, from the statement's columns col.. col+8
 * (device, stream, chunk, op, start_us, end_us, bytes, call_start_us, call_end_us): its op
 * (NULL: out of memory); *call its host call where the row holds one, else NULL, and
 * *has_call (may be NULL) whether it does (a call NULL where it does: out of memory). */
json_t *store_event_json(sqlite3_stmt *st, int col, json_t **call, bool *has_call);

struct store {
    sqlite3 *db;
    store_stmt_t stmts[STORE_STMT_CACHE];
    int nstmts;
};

#endif
