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
 * spec: one entry per phrase of the MATCH expression, in order, separated by
 * spaces: a group number then 'e' (exact) or 'v' (variant), e.g. "0e 0v 1e".
 * Phrases without an entry (or with an unreadable one) form groups of their
 * own. A spec starting with '!' says the IDF is not needed (one term: the
 * same factor for every row, so the order does not change): the phrases'
 * whole doclists are then not read to count their documents, and every
 * group's IDF is 1. Returns minus the score, like bm25(): lower is better.
 *
 * Adapted from SQLite's fts5Bm25Function (fts5_aux.c, public domain).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int nPhrase;
  int nGroup;
  double avgdl;
  int *group;      /* group of each phrase */
  double *weight;  /* 1 for exact phrases, the variant weight for variants */
  double *idf;     /* per group */
  double *freq;    /* per group, scratch for one row */
} SiRank;

static int si_count_cb(const Fts5ExtensionApi *api, Fts5Context *fts, void *user) {
  (void)api;
  (void)fts;
  (*(sqlite3_int64 *)user)++;
  return SQLITE_OK;
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
      if (*p == 'e' || *p == 'v') kind = *p++;
      else g = -1;
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
    r->weight[i] = kind == 'v' ? variantWeight : 1.0;
  }
  sqlite3_free(seen);
  sqlite3_free(map);
  return next;
}

static void si_rank_free(void *p) { sqlite3_free(p); }

static SiRank *si_rank_data(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_value **apVal, int nVal,
                            int *rc) {
  SiRank *r = (SiRank *)api->xGetAuxdata(fts, 0);
  if (r) return r;
  int nPhrase = api->xPhraseCount(fts);
  if (nPhrase < 0) nPhrase = 0;
  sqlite3_uint64 n = (sqlite3_uint64)nPhrase + 1;
  sqlite3_uint64 bytes = sizeof(SiRank) + n * (sizeof(int) + 3 * sizeof(double));
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
  r->group = (int *)(r->freq + n);

  const char *spec = nVal > 0 ? (const char *)sqlite3_value_text(apVal[0]) : NULL;
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
  if (*rc == SQLITE_OK) *rc = api->xColumnTotalSize(fts, -1, &nToken);
  if (*rc == SQLITE_OK) {
    r->avgdl = nRow > 0 ? (double)nToken / (double)nRow : 1.0;
    if (r->avgdl <= 0.0) r->avgdl = 1.0;
    /* documents per group: the sum over its phrases (a message holding two forms counts twice, a slight
     * overestimate that only lowers the group's IDF) */
    for (int g = 0; g < r->nGroup; g++) r->freq[g] = 0.0;
    for (int i = 0; needIDF && *rc == SQLITE_OK && i < nPhrase; i++) {
      sqlite3_int64 hits = 0;
      *rc = api->xQueryPhrase(fts, i, (void *)&hits, si_count_cb);
      r->freq[r->group[i]] += (double)hits;
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
  SiRank *r = si_rank_data(api, fts, apVal, nVal, &rc);
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
    if (rc != SQLITE_OK || ip < 0 || ip >= r->nPhrase) continue;
    double w = (ic >= 0 && nVal > ic + 2) ? sqlite3_value_double(apVal[ic + 2]) : 1.0;
    r->freq[r->group[ip]] += w * r->weight[ip];
  }
  int nTok = 0;
  if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &nTok);
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

int si_register_rank(fts5_api *api) {
  return api->xCreateFunction(api, "slackindex_rank", NULL, si_rank, NULL);
}
