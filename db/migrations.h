/* migrations.h — the migrations embedded at build time (build/gen/migrations.c). */
#ifndef STREAMLAB_MIGRATIONS_H
#define STREAMLAB_MIGRATIONS_H

typedef struct migration {
    int version;       /* NNN of migrations/NNN_name.sql */
    const char *name;
    const char *sql;
} migration_t;

extern const migration_t migrations[];
extern const int migration_count;

#endif
