/* store_internal.h — the store's insides, shared by the db/ files only (store.c,
 * bundle.c). Nothing outside db/ includes it. */
#ifndef STREAMLAB_STORE_INTERNAL_H
#define STREAMLAB_STORE_INTERNAL_H

#include <sqlite3.h>

struct store {
    sqlite3 *db;
};

#endif
