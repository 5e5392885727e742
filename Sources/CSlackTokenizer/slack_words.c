/*
 * How many messages hold each word of the index, counted while the index is written (`message_word`).
 *
 * A prefix search (`clas*`) expands into the index's words with the prefix, most frequent first, with their
 * message counts for ranking. FTS5's vocabulary table answers that by walking every such word's whole doclist:
 * `clas*` read 1.46M entries of the 10M archive for 6 words, 44-47 ms of a 50 ms search. The counts kept in a table
 * make it a range read.
 *
 * They are counted by the tokenizer itself, so a message is tokenized once: around each FTS5 insert or delete of
 * a message, the writer starts counting on its thread (`slackindex_words_start`, sign +1 or -1); the tokenizer,
 * while it tokenizes a document on that thread, adds each distinct word of the message once. The writer flushes
 * the counts to the table before its transaction commits (`slackindex_words_each`). Stem and pair tokens (first
 * byte below 3) are not counted: no prefix or word lookup reads them.
 */
#include "slack_tokenizer.h"

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

typedef struct SiWordEntry {
  uint32_t hash;
  uint32_t len;   /* 0: empty slot */
  uint64_t at;    /* offset of the word's bytes in keys */
  int64_t delta;  /* messages added minus messages removed */
  uint64_t serial; /* the last message that counted this word */
} SiWordEntry;

struct slackindex_words {
  SiWordEntry *slots;
  uint64_t capacity; /* a power of two */
  uint64_t used;
  char *keys;
  uint64_t keysLen, keysCap;
  uint64_t serial; /* the message being counted */
  int sign;
  int failed; /* out of memory: the counts are incomplete */
};

/* The counter the tokenizer adds to on this thread (set around one FTS5 statement), or NULL. */
static _Thread_local slackindex_words *si_words_active = NULL;

slackindex_words *slackindex_words_new(void) {
  slackindex_words *w = (slackindex_words *)sqlite3_malloc64(sizeof(slackindex_words));
  if (!w) return NULL;
  memset(w, 0, sizeof(*w));
  return w;
}

void slackindex_words_free(slackindex_words *w) {
  if (!w) return;
  if (si_words_active == w) si_words_active = NULL;
  sqlite3_free(w->slots);
  sqlite3_free(w->keys);
  sqlite3_free(w);
}

/* Past this many slots (1 MB) a cleared counter gives its memory back: a large import's table would otherwise be
 * cleared whole (and walked by each flush) at every small transaction after it. */
#define SI_WORDS_KEPT_SLOTS 32768

void slackindex_words_clear(slackindex_words *w) {
  if (!w) return;
  if (w->capacity > SI_WORDS_KEPT_SLOTS) {
    sqlite3_free(w->slots);
    sqlite3_free(w->keys);
    w->slots = NULL;
    w->capacity = 0;
    w->keys = NULL;
    w->keysCap = 0;
  } else if (w->used > 0) {
    memset(w->slots, 0, sizeof(SiWordEntry) * (size_t)w->capacity);
  }
  w->used = 0;
  w->keysLen = 0;
  w->failed = 0;
}

int slackindex_words_failed(const slackindex_words *w) { return w ? w->failed : 1; }

void slackindex_words_start(slackindex_words *w, int sign) {
  if (!w) return;
  w->serial++;
  w->sign = sign < 0 ? -1 : 1;
  si_words_active = w;
}

void slackindex_words_stop(void) { si_words_active = NULL; }

static uint32_t si_word_hash(const char *p, int n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (int i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
  return h;
}

/* Whether two words of n bytes are the same: 8 bytes at a time (most words are shorter than 16), not a call to
 * memcmp per token. */
static inline int si_same(const char *a, const char *b, int n) {
  while (n >= 8) {
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    if (x != y) return 0;
    a += 8;
    b += 8;
    n -= 8;
  }
  while (n-- > 0)
    if (*a++ != *b++) return 0;
  return 1;
}

static int si_words_grow(slackindex_words *w) {
  uint64_t capacity = w->capacity ? w->capacity * 2 : 4096;
  SiWordEntry *slots = (SiWordEntry *)sqlite3_malloc64(sizeof(SiWordEntry) * capacity);
  if (!slots) return 0;
  memset(slots, 0, sizeof(SiWordEntry) * (size_t)capacity);
  for (uint64_t i = 0; i < w->capacity; i++) {
    SiWordEntry *e = &w->slots[i];
    if (!e->len) continue;
    uint64_t j = e->hash & (capacity - 1);
    while (slots[j].len) j = (j + 1) & (capacity - 1);
    slots[j] = *e;
  }
  sqlite3_free(w->slots);
  w->slots = slots;
  w->capacity = capacity;
  return 1;
}

/* Counts `token` for the message being counted, once however often the message holds it. */
static void si_words_add(slackindex_words *w, const char *token, int n) {
  if (n <= 0 || (unsigned char)token[0] < 3 || w->failed) return;
  if ((w->used + 1) * 2 > w->capacity && !si_words_grow(w)) {
    w->failed = 1;
    return;
  }
  uint32_t h = si_word_hash(token, n);
  uint64_t j = h & (w->capacity - 1);
  for (;;) {
    SiWordEntry *e = &w->slots[j];
    if (!e->len) break;
    if (e->hash == h && e->len == (uint32_t)n && si_same(w->keys + e->at, token, n)) {
      if (e->serial != w->serial) {
        e->serial = w->serial;
        e->delta += w->sign;
      }
      return;
    }
    j = (j + 1) & (w->capacity - 1);
  }
  if (w->keysLen + (uint64_t)n > w->keysCap) {
    uint64_t cap = w->keysCap ? w->keysCap * 2 : 65536;
    while (cap < w->keysLen + (uint64_t)n) cap *= 2;
    char *keys = (char *)sqlite3_realloc64(w->keys, cap);
    if (!keys) {
      w->failed = 1;
      return;
    }
    w->keys = keys;
    w->keysCap = cap;
  }
  memcpy(w->keys + w->keysLen, token, (size_t)n);
  SiWordEntry *e = &w->slots[j];
  e->hash = h;
  e->len = (uint32_t)n;
  e->at = w->keysLen;
  e->delta = w->sign;
  e->serial = w->serial;
  w->keysLen += (uint64_t)n;
  w->used++;
}

int slackindex_words_each(slackindex_words *w, void *ctx, slackindex_word_callback fn) {
  if (!w) return 0;
  for (uint64_t i = 0; i < w->capacity; i++) {
    SiWordEntry *e = &w->slots[i];
    if (!e->len || e->delta == 0) continue;
    int rc = fn(ctx, w->keys + e->at, (int)e->len, (long long)e->delta);
    if (rc) return rc;
  }
  return 0;
}

/* The tokenizer's side (slack_tokenizer.c): the counter to add a document's tokens to, or NULL. */
slackindex_words *si_words_counting(void) { return si_words_active; }

void si_words_count(slackindex_words *w, const char *token, int n) { si_words_add(w, token, n); }
