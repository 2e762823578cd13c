/* cache.c — a chained hash table with a FIFO of entries for eviction (see cache.h). */
#include "cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 8192

typedef struct entry {
    struct entry *next_in_bucket;
    struct entry *newer; /* FIFO: oldest at head */
    char *key;
    char *text;
    size_t len;
} entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *buckets[BUCKETS];
static entry_t *oldest, *newest;
static size_t bytes, count, limit = CACHE_MAX_BYTES_DEFAULT;

static uint32_t hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % BUCKETS;
}

static entry_t **find(const char *key) {
    entry_t **p = &buckets[hash(key)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next_in_bucket;
    return p;
}

static void evict_oldest(void) {
    entry_t *e = oldest;
    if (!e)
        return;
    oldest = e->newer;
    if (!oldest)
        newest = NULL;
    entry_t **p = find(e->key);
    if (*p == e)
        *p = e->next_in_bucket;
    bytes -= e->len + strlen(e->key);
    count--;
    free(e->key);
    free(e->text);
    free(e);
}

void cache_set_limit(size_t max_bytes) {
    pthread_mutex_lock(&lock);
    limit = max_bytes;
    while (bytes > limit && oldest)
        evict_oldest();
    pthread_mutex_unlock(&lock);
}

char *cache_get(const char *key, size_t *len) {
    char *copy = NULL;
    pthread_mutex_lock(&lock);
    entry_t *e = *find(key);
    if (e && (copy = malloc(e->len + 1))) {
        memcpy(copy, e->text, e->len + 1);
        *len = e->len;
    }
    pthread_mutex_unlock(&lock);
    return copy;
}

void cache_put(const char *key, const char *text, size_t len) {
    size_t cost = len + strlen(key);
    pthread_mutex_lock(&lock);
    if (cost > limit / 4 || *find(key)) { /* too big to keep, or already there */
        pthread_mutex_unlock(&lock);
        return;
    }
    entry_t *e = calloc(1, sizeof *e);
    char *k = strdup(key), *t = malloc(len + 1);
    if (!e || !k || !t) {
        free(e);
        free(k);
        free(t);
        pthread_mutex_unlock(&lock);
        return;
    }
    memcpy(t, text, len);
    t[len] = 0;
    e->key = k;
    e->text = t;
    e->len = len;
    while (bytes + cost > limit && oldest)
        evict_oldest();
    entry_t **p = find(key);
    *p = e;
    if (newest)
        newest->newer = e;
    else
        oldest = e;
    newest = e;
    bytes += cost;
    count++;
    pthread_mutex_unlock(&lock);
}

void cache_stats(size_t *bytes_held, size_t *entries, size_t *max_bytes) {
    pthread_mutex_lock(&lock);
    *bytes_held = bytes;
    *entries = count;
    *max_bytes = limit;
    pthread_mutex_unlock(&lock);
}
