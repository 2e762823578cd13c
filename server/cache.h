/* cache.h — the serialised JSON of what never changes once written: finished
 * experiments and their timelines. Reads of those skip SQLite and jansson (the list,
 * experiment and timeline endpoints under load). Bounded in bytes, oldest out first,
 * one mutex; callers get their own copy of a hit. */
#ifndef STREAMLAB_CACHE_H
#define STREAMLAB_CACHE_H

#include <stddef.h>

#define CACHE_MAX_BYTES_DEFAULT ((size_t)128 << 20)

void cache_set_limit(size_t max_bytes); /* 0 turns the cache off */
/* A malloc'd copy of the text under key (NUL-terminated), its length in *len; or NULL. */
char *cache_get(const char *key, size_t *len);
/* Keep a copy of text under key (an existing entry stays: entries never change). */
void cache_put(const char *key, const char *text, size_t len);
/* What the cache holds now: its entries' bytes (texts and keys), how many, and its bound. */
void cache_stats(size_t *bytes_held, size_t *entries, size_t *max_bytes);

#endif
