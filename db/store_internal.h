/* store_internal.h — the store's insides, shared by the db/ files only (store.c,
 * bundle.c). Nothing outside db/ includes it. */
#ifndef STREAMLAB_STORE_INTERNAL_H
#define STREAMLAB_STORE_INTERNAL_H

#include <sqlite3.h>

#define STORE_STMT_CACHE 48

/* A prepared statement kept for the connection's life, keyed by its SQL text: parsing
 * the SQL was most of a cached read's time. */
typedef struct store_stmt {
    char *sql;
    sqlite3_stmt *st;
} store_stmt_t;

/* now as ISO 8601 UTC with milliseconds: 2026-11-23T04:12:33.123Z */
void store_now_iso(char out[32]);

struct store {
    sqlite3 *db;
    store_stmt_t stmts[STORE_STMT_CACHE];
    int nstmts;
};

#endif
