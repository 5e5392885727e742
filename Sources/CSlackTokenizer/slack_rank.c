/*
 * slack_rank.c - FTS5 auxiliary function slackindex_rank(): bm25 over groups
 * of phrases, so that a word and its variants count as one term.
 *
 * A query word `deploy` is searched as ("deploy" OR <stem token of deploy>):
 * two FTS5 phrases. Plain bm25 would score them as two terms, each with its
 * own IDF, so a message holding only a rare variant ("deployed") could
 * outrank one with the exact, commoner word. Here the phrases of a group pool
 * their hits (the variant ones weighted by `variantWeight` < 1) and share one
 * IDF, computed from the group's summed document count. With every phrase in
 * a group of its own and weight 1 this is exactly SQLite's bm25() (same
 * k1 = 1.2, b = 0.75, same formula; checked by a test).
 *
 *   slackindex_rank(message_fts, spec, variantWeight, colWeight0, colWeight1, ...)
 *
 * Columns past the last weight given are not ranked: their hits score nothing and their tokens count in no
 * document's length nor in the average length. So the index's third column, `search_scope` (a message's
 * conversation and author as tokens, SLACKINDEX_SCOPE_MARKER), ranked with two weights, leaves every score as it was
 * with two columns. With no weight given every column is ranked, each weighing 1.
 *
 * spec: one entry per phrase of the MATCH expression, in order, separated by
 * spaces: a group number then 'e' (exact), 'v' (variant) or 'x' (excluded: the
 * phrase of a NOT, which no hit holds; it scores nothing and its documents are
 * not counted), e.g. "0e 0v 1e 2x"; an entry may end in '@' and the number of
 * documents holding the phrase, when the caller knows it (a prefix's words,
 * from the vocabulary), so that they are not counted by reading its doclist.
 * Phrases without an entry (or with an unreadable one) form groups of their
 * own. A spec starting with '!' says the IDF is not needed (one term: the
 * same factor for every row, so the order does not change): the phrases'
 * whole doclists are then not read to count their documents, and every
 * group's IDF is 1. Returns minus the score, like bm25(): lower is better.
 *
 * A spec may start with "~CAP " (before any '!'): a phrase's documents are
 * counted oldest first up to CAP only. A phrase found CAP times is estimated
 * from the share of the documents it holds among those up to its CAP-th:
 * CAP x (all documents) / (documents with a rowid up to the CAP-th's), the
 * latter counted in the %_docsize table, at most SI_SHARE_ROWS rows; a phrase
 * rarer than that (its CAP-th further in) is counted whole, as without "~".
 * So the estimate is by position among the messages, not by time (an archive
 * whose first years hold few messages does not skew it), and right where a
 * word is spread evenly over the archive. Counting a common word's whole
 * doclist was most of a two-word query's time: `success the` on the generated
 * 1M archive 17.5 ms, `the` in 538,007 messages (see SQLiteArchive.idfCountCap).
 *
 * Adapted from SQLite's fts5Bm25Function (fts5_aux.c, public domain).
 *
 * A document's length (FTS5's xColumnSize) is one lookup in the %_docsize table per ranked row, a statement run
 * through the VDBE and a B-tree descent: measured on the generated 1M archive at ~35% of a medium word's search
 * (`bench search --queries` of 60 medium words: p50 2.0 ms with it, 1.25 ms without). Lengths are therefore kept in
 * a process-wide cache (`si_lengths`), keyed by the connection, the database's data version and the row id, so a
 * length is never used after any connection changed the database (SQLITE_FCNTL_DATA_VERSION moves on every commit,
 * this connection's included): a long-lived process (`serve`, `mcp`, `bench`) asks each length once per change.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- document lengths, cached ------------------------------------------------------------------------------- */

/* 2^17 slots of 16 bytes (2 MB, allocated at the first ranked row): the candidate windows of a 200-query workload on
 * 1M messages (up to 100,000 rows) mostly fit, and a single search touches a few hundred of its pages. */
#define SI_LENGTH_SLOTS (1u << 17)

/* One slot: `check` is the key XOR the length, `length` the length; a slot torn by two threads writing at once reads
 * as a miss (the lockless hashing of chess programs' transposition tables). */
typedef struct {
  _Atomic uint64_t check;
  _Atomic uint64_t length;
} SiLengthSlot;

static SiLengthSlot *_Atomic si_lengths = NULL;
/* Every connection gets its own serial when the function is registered on it: a key never matches a row of another
 * connection, even one opened at the same address after this one closed. */
static _Atomic uint64_t si_next_connection = 1;

typedef struct {
  uint64_t serial;
} SiConnection;

static uint64_t si_mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

static SiLengthSlot *si_length_table(void) {
  SiLengthSlot *table = atomic_load_explicit(&si_lengths, memory_order_acquire);
  if (table) return table;
  SiLengthSlot *fresh = (SiLengthSlot *)calloc(SI_LENGTH_SLOTS, sizeof(SiLengthSlot));
  if (!fresh) return NULL;
  SiLengthSlot *expected = NULL;
  if (atomic_compare_exchange_strong(&si_lengths, &expected, fresh)) return fresh;
  free(fresh);
  return expected;
}

/* The row's length in tokens over its first `ranked` columns of `columns`. */
static int si_ranked_size(const Fts5ExtensionApi *api, Fts5Context *fts, int ranked, int columns, int *length) {
  if (ranked >= columns) return api->xColumnSize(fts, -1, length);
  *length = 0;
  for (int c = 0; c < ranked; c++) {
    int n = 0;
    int rc = api->xColumnSize(fts, c, &n); /* FTS5 reads the row's sizes once and keeps them for the others */
    if (rc != SQLITE_OK) return rc;
    *length += n;
  }
  return SQLITE_OK;
}

/* The row's length in tokens (its ranked columns), from the cache or from FTS5 (then cached). `generation` is the
 * connection and data version of this query (`SiRank.generation`); 0 turns the cache off. */
static int si_row_length(const Fts5ExtensionApi *api, Fts5Context *fts, uint64_t generation, int ranked, int columns,
                         int *length) {
  SiLengthSlot *table = generation ? si_length_table() : NULL;
  uint64_t key = 0;
  SiLengthSlot *slot = NULL;
  if (table) {
    key = si_mix(generation ^ si_mix((uint64_t)api->xRowid(fts)));
    slot = &table[key & (SI_LENGTH_SLOTS - 1)];
    uint64_t check = atomic_load_explicit(&slot->check, memory_order_relaxed);
    uint64_t stored = atomic_load_explicit(&slot->length, memory_order_relaxed);
    if ((check ^ stored) == key && stored <= INT32_MAX) {
      *length = (int)stored;
      return SQLITE_OK;
    }
  }
  int rc = si_ranked_size(api, fts, ranked, columns, length);
  if (rc == SQLITE_OK && slot && *length >= 0) {
    uint64_t stored = (uint64_t)*length;
    atomic_store_explicit(&slot->length, stored, memory_order_relaxed);
    atomic_store_explicit(&slot->check, key ^ stored, memory_order_relaxed);
  }
  return rc;
}

/* This query's cache generation: the connection's serial and the database's data version, or 0 (no cache) when
 * either is unknown or the connection is writing (what it has written but not committed may yet be rolled back). */
static uint64_t si_generation(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx) {
  SiConnection *connection = (SiConnection *)api->xUserData(fts);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  unsigned int version = 0;
  if (!connection || !db || sqlite3_txn_state(db, "main") == SQLITE_TXN_WRITE ||
      sqlite3_file_control(db, "main", SQLITE_FCNTL_DATA_VERSION, &version) != SQLITE_OK) {
    return 0;
  }
  uint64_t generation = si_mix(connection->serial * 0x9E3779B97F4A7C15ULL + version);
  return generation ? generation : 1;
}

typedef struct {
  int nPhrase;
  int nGroup;
  double avgdl;
  int *group;      /* group of each phrase */
  double *weight;  /* 1 for exact phrases, the variant weight for variants */
  double *idf;     /* per group */
  double *freq;    /* per group, scratch for one row */
  double *known;   /* per phrase: the documents holding it when the spec gave them, else -1; -2 for 'x' */
  uint64_t generation; /* the document-length cache's key part for this query (si_generation) */
  int nRanked;         /* the columns ranked: the first ones, one per weight given (all when none is) */
  int nColumn;         /* the table's columns */
} SiRank;

/* A phrase's documents counted by xQueryPhrase (oldest first), stopping at `cap` (0: no cap) with the rowid there. */
typedef struct {
  sqlite3_int64 hits;
  sqlite3_int64 cap;
  sqlite3_int64 last;
} SiCount;

static int si_count_cb(const Fts5ExtensionApi *api, Fts5Context *fts, void *user) {
  SiCount *count = (SiCount *)user;
  count->hits++;
  if (count->cap > 0 && count->hits >= count->cap) {
    count->last = api->xRowid(fts);
    return SQLITE_DONE; /* xQueryPhrase then stops and returns SQLITE_OK */
  }
  return SQLITE_OK;
}

/* Reads "~CAP " at the start of `*spec` (see the top of this file) into `cap` (0 when absent or unreadable) and
 * moves `*spec` past it, up to the next entry, whatever it held. */
static void si_parse_cap(const char **spec, sqlite3_int64 *cap) {
  const char *p = *spec;
  if (!p || *p != '~') return;
  p++;
  sqlite3_int64 v = 0;
  int digits = 0;
  while (*p >= '0' && *p <= '9') {
    if (v < (sqlite3_int64)1 << 40) v = v * 10 + (*p - '0');
    p++;
    digits++;
  }
  *cap = (digits > 0 && (*p == ' ' || *p == 0)) ? v : 0;
  while (*p && *p != ' ') p++;
  while (*p == ' ') p++;
  *spec = p;
}

/* At most this many rows of %_docsize are counted to place a phrase's CAP-th document among all documents; past
 * it the phrase is counted whole (a phrase in under CAP / SI_SHARE_ROWS of the documents, whose whole doclist is
 * short enough). 20,000 rows of %_docsize are a few hundred microseconds. */
#define SI_SHARE_ROWS 20000

/* The documents with a rowid up to `last` (at most SI_SHARE_ROWS + 1), or -1 when they cannot be counted. */
static sqlite3_int64 si_documents_up_to(sqlite3_context *ctx, sqlite3_int64 last) {
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *statement = NULL;
  if (!db || sqlite3_prepare_v2(db,
                                "SELECT count(*) FROM (SELECT 1 FROM message_fts_docsize WHERE id <= ?1 LIMIT ?2)",
                                -1, &statement, NULL) != SQLITE_OK) {
    sqlite3_finalize(statement);
    return -1;
  }
  sqlite3_bind_int64(statement, 1, last);
  sqlite3_bind_int64(statement, 2, SI_SHARE_ROWS + 1);
  sqlite3_int64 documents = sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : -1;
  sqlite3_finalize(statement);
  return documents;
}

/* Parses spec into r->group / r->weight; returns the number of groups. */
static int si_parse_spec(SiRank *r, const char *spec, double variantWeight) {
  int next = 0; /* group numbers are renumbered densely in order of appearance */
  int *seen = (int *)sqlite3_malloc64(sizeof(int) * (sqlite3_uint64)(r->nPhrase + 1));
  int *map = (int *)sqlite3_malloc64(sizeof(int) * (sqlite3_uint64)(r->nPhrase + 1));
  if (!seen || !map) {
    sqlite3_free(seen);
    sqlite3_free(map);
    return -1;
  }
  int nSeen = 0;
  const char *p = spec ? spec : "";
  for (int i = 0; i < r->nPhrase; i++) {
    while (*p == ' ') p++;
    long g = -1;
    char kind = 'e';
    if (*p >= '0' && *p <= '9') {
      g = 0;
      while (*p >= '0' && *p <= '9') {
        if (g < 1000000) g = g * 10 + (*p - '0');
        p++;
      }
      if (*p == 'e' || *p == 'v' || *p == 'x') kind = *p++;
      else g = -1;
    }
    double documents = -1.0;
    if (g >= 0 && *p == '@' && p[1] >= '0' && p[1] <= '9') {
      p++;
      documents = 0.0;
      while (*p >= '0' && *p <= '9') documents = documents * 10.0 + (double)(*p++ - '0');
    }
    while (*p && *p != ' ') p++; /* skip anything unreadable */
    int dense = -1;
    if (g >= 0) {
      for (int k = 0; k < nSeen; k++)
        if (seen[k] == (int)g) dense = map[k];
      if (dense < 0) {
        seen[nSeen] = (int)g;
        map[nSeen++] = dense = next++;
      }
    } else {
      dense = next++;
    }
    r->group[i] = dense;
    r->weight[i] = kind == 'x' ? 0.0 : kind == 'v' ? variantWeight : 1.0;
    r->known[i] = kind == 'x' ? -2.0 : documents;
  }
  sqlite3_free(seen);
  sqlite3_free(map);
  return next;
}

static void si_rank_free(void *p) { sqlite3_free(p); }

static SiRank *si_rank_data(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx,
                            sqlite3_value **apVal, int nVal, int *rc) {
  SiRank *r = (SiRank *)api->xGetAuxdata(fts, 0);
  if (r) return r;
  int nPhrase = api->xPhraseCount(fts);
  if (nPhrase < 0) nPhrase = 0;
  sqlite3_uint64 n = (sqlite3_uint64)nPhrase + 1;
  sqlite3_uint64 bytes = sizeof(SiRank) + n * (sizeof(int) + 4 * sizeof(double));
  r = (SiRank *)sqlite3_malloc64(bytes);
  if (!r) {
    *rc = SQLITE_NOMEM;
    return NULL;
  }
  memset(r, 0, (size_t)bytes);
  r->nPhrase = nPhrase;
  r->weight = (double *)&r[1];
  r->idf = r->weight + n;
  r->freq = r->idf + n;
  r->known = r->freq + n;
  r->group = (int *)(r->known + n);
  r->generation = si_generation(api, fts, ctx);
  r->nColumn = api->xColumnCount(fts);
  r->nRanked = nVal > 2 && nVal - 2 < r->nColumn ? nVal - 2 : r->nColumn;
  if (r->generation) { /* lengths over other columns are other lengths: cached apart */
    r->generation = si_mix(r->generation ^ ((uint64_t)r->nRanked << 48));
    if (!r->generation) r->generation = 1;
  }

  const char *spec = nVal > 0 ? (const char *)sqlite3_value_text(apVal[0]) : NULL;
  sqlite3_int64 cap = 0;
  si_parse_cap(&spec, &cap);
  int needIDF = 1;
  if (spec && spec[0] == '!') {
    needIDF = 0;
    spec++;
  }
  double variantWeight = nVal > 1 ? sqlite3_value_double(apVal[1]) : 1.0;
  if (!(variantWeight >= 0.0 && variantWeight <= 1.0)) variantWeight = 1.0;
  r->nGroup = si_parse_spec(r, spec, variantWeight);
  if (r->nGroup < 0) {
    sqlite3_free(r);
    *rc = SQLITE_NOMEM;
    return NULL;
  }

  sqlite3_int64 nRow = 0, nToken = 0;
  *rc = api->xRowCount(fts, &nRow);
  for (int c = 0; *rc == SQLITE_OK && c < r->nRanked; c++) {
    sqlite3_int64 n = 0;
    *rc = api->xColumnTotalSize(fts, r->nRanked < r->nColumn ? c : -1, &n);
    nToken += n;
    if (r->nRanked == r->nColumn) break; /* -1: every column at once */
  }
  if (*rc == SQLITE_OK) {
    r->avgdl = nRow > 0 ? (double)nToken / (double)nRow : 1.0;
    if (r->avgdl <= 0.0) r->avgdl = 1.0;
    /* documents per group: the sum over its phrases (a message holding two forms counts twice, a slight
     * overestimate that only lowers the group's IDF) */
    for (int g = 0; g < r->nGroup; g++) r->freq[g] = 0.0;
    for (int i = 0; needIDF && *rc == SQLITE_OK && i < nPhrase; i++) {
      if (r->known[i] == -2.0) continue;
      if (r->known[i] >= 0.0) {
        r->freq[r->group[i]] += r->known[i];
        continue;
      }
      SiCount count = {0, cap, 0};
      *rc = api->xQueryPhrase(fts, i, (void *)&count, si_count_cb);
      double hits = (double)count.hits;
      if (*rc == SQLITE_OK && cap > 0 && count.hits >= cap) {
        sqlite3_int64 before = si_documents_up_to(ctx, count.last);
        if (before >= count.hits && before <= SI_SHARE_ROWS) {
          hits = hits * (double)nRow / (double)before;
          if (hits > (double)nRow) hits = (double)nRow;
        } else {
          /* too rare for the share to be read cheaply (or unreadable): counted whole */
          SiCount whole = {0, 0, 0};
          *rc = api->xQueryPhrase(fts, i, (void *)&whole, si_count_cb);
          hits = (double)whole.hits;
        }
      }
      r->freq[r->group[i]] += hits;
    }
  }
  if (*rc == SQLITE_OK) {
    for (int g = 0; g < r->nGroup; g++) {
      double hits = r->freq[g] < (double)nRow ? r->freq[g] : (double)nRow;
      double idf = log(((double)nRow - hits + 0.5) / (hits + 0.5));
      r->idf[g] = !needIDF ? 1.0 : idf <= 0.0 ? 1e-6 : idf;
    }
    *rc = api->xSetAuxdata(fts, r, si_rank_free);
  }
  if (*rc != SQLITE_OK) {
    sqlite3_free(r);
    return NULL;
  }
  return r;
}

static void si_rank(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nVal,
                    sqlite3_value **apVal) {
  const double k1 = 1.2, b = 0.75;
  int rc = SQLITE_OK;
  SiRank *r = si_rank_data(api, fts, ctx, apVal, nVal, &rc);
  if (!r) {
    sqlite3_result_error_code(ctx, rc == SQLITE_OK ? SQLITE_ERROR : rc);
    return;
  }
  for (int g = 0; g < r->nGroup; g++) r->freq[g] = 0.0;
  int nInst = 0;
  rc = api->xInstCount(fts, &nInst);
  for (int i = 0; rc == SQLITE_OK && i < nInst; i++) {
    int ip = 0, ic = 0, io = 0;
    rc = api->xInst(fts, i, &ip, &ic, &io);
    if (rc != SQLITE_OK || ip < 0 || ip >= r->nPhrase || ic >= r->nRanked) continue;
    double w = (ic >= 0 && nVal > ic + 2) ? sqlite3_value_double(apVal[ic + 2]) : 1.0;
    r->freq[r->group[ip]] += w * r->weight[ip];
  }
  int nTok = 0;
  if (rc == SQLITE_OK) rc = si_row_length(api, fts, r->generation, r->nRanked, r->nColumn, &nTok);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  double D = (double)nTok, score = 0.0;
  for (int g = 0; g < r->nGroup; g++) {
    double f = r->freq[g];
    score += r->idf[g] * (f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * D / r->avgdl));
  }
  sqlite3_result_double(ctx, -1.0 * score);
}

static void si_connection_free(void *p) { sqlite3_free(p); }

int si_register_rank(fts5_api *api) {
  SiConnection *connection = (SiConnection *)sqlite3_malloc64(sizeof(SiConnection));
  if (!connection) return SQLITE_NOMEM;
  connection->serial = atomic_fetch_add(&si_next_connection, 1);
  return api->xCreateFunction(api, "slackindex_rank", connection, si_rank, si_connection_free);
}
