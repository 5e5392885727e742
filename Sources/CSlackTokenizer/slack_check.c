/*
 * slack_check.c - SQL functions that let `slackindex check` compare the search index with the text it should hold,
 * on a read-only connection.
 *
 * SQLite's own comparison, INSERT INTO message_fts(message_fts, rank) VALUES('integrity-check', 1), is a write
 * statement: refused on a read-only archive ("attempt to write a readonly database", checked with 3.40.1), and with
 * rank = 1 it reads the external content table, whose deleted messages are not indexed (and before migration v22,
 * when it was `message` itself, whose search_text is elided where it equals the text). So the check computes FTS5's own kind of checksum on both sides instead:
 *
 *   slackindex_index_hash(doc, col, term, offset)  one entry of the index (an fts5vocab 'instance' row)
 *   slackindex_text_hash(doc, col, text[, pairs])  the sum of the entries the text gives when indexed as document
 *                                                  `doc`, column `col`: the slackindex tokenizer run as FTS5 runs it
 *                                                  (FTS5_TOKENIZE_DOCUMENT; a colocated token shares the previous
 *                                                  token's position, as fts5StorageInsertCallback numbers them)
 *   slackindex_text_size(text)                     the document's token count, as message_fts_docsize stores it
 *
 * Each entry's hash is 31 bits, so sum() over tens of millions of entries cannot overflow; the sums of a healthy
 * archive are equal, and any entry missing, extra or moved changes one side.
 */
#include "slack_tokenizer.h"

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

/* FNV-1a over one index entry. */
static int64_t si_entry_hash(int64_t doc, const unsigned char *col, int nCol, const char *term, int nTerm,
                             int64_t offset) {
  uint64_t h = 14695981039346656037ull;
  for (int i = 0; i < 8; i++) h = (h ^ (uint8_t)(doc >> (8 * i))) * 1099511628211ull;
  for (int i = 0; i < nCol; i++) h = (h ^ col[i]) * 1099511628211ull;
  h = (h ^ 0xFFu) * 1099511628211ull;
  for (int i = 0; i < nTerm; i++) h = (h ^ (uint8_t)term[i]) * 1099511628211ull;
  h = (h ^ 0xFEu) * 1099511628211ull;
  for (int i = 0; i < 8; i++) h = (h ^ (uint8_t)(offset >> (8 * i))) * 1099511628211ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (int64_t)(h & 0x7FFFFFFFu);
}

static void si_index_hash(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  const unsigned char *col = sqlite3_value_text(argv[1]);
  int nCol = sqlite3_value_bytes(argv[1]);
  const char *term = (const char *)sqlite3_value_blob(argv[2]);
  int nTerm = sqlite3_value_bytes(argv[2]);
  sqlite3_result_int64(ctx, si_entry_hash(sqlite3_value_int64(argv[0]), col ? col : (const unsigned char *)"",
                                          col ? nCol : 0, term, term ? nTerm : 0, sqlite3_value_int64(argv[3])));
}

/* The tokenizer, found through FTS5 as FTS5 finds it, and one instance of it per connection. */
typedef struct SiCheck {
  fts5_tokenizer tokenizer;
  Fts5Tokenizer *instance;
  Fts5Tokenizer *paired; /* created with "pairs", as an index of tokenize = 'slackindex pairs' runs it */
} SiCheck;

typedef struct SiTally {
  int64_t doc;
  const unsigned char *col;
  int nCol;
  int64_t size; /* tokens at distinct positions so far (FTS5's szCol) */
  int64_t sum;
} SiTally;

static int si_tally(void *p, int flags, const char *token, int nToken, int start, int end) {
  (void)start;
  (void)end;
  SiTally *t = (SiTally *)p;
  if ((flags & FTS5_TOKEN_COLOCATED) == 0 || t->size == 0) t->size++;
  t->sum += si_entry_hash(t->doc, t->col, t->nCol, token, nToken, t->size - 1);
  return SQLITE_OK;
}

static int si_tokenize_value(sqlite3_context *ctx, sqlite3_value *text, SiTally *tally, int pairs) {
  SiCheck *check = (SiCheck *)sqlite3_user_data(ctx);
  const char *bytes = (const char *)sqlite3_value_text(text);
  int n = sqlite3_value_bytes(text);
  if (!bytes || n == 0) return SQLITE_OK;
  Fts5Tokenizer **instance = pairs ? &check->paired : &check->instance;
  if (!*instance) {
    const char *args[] = {"pairs"};
    int rc = check->tokenizer.xCreate(NULL, pairs ? args : NULL, pairs ? 1 : 0, instance);
    if (rc != SQLITE_OK) return rc;
  }
  return check->tokenizer.xTokenize(*instance, tally, FTS5_TOKENIZE_DOCUMENT, bytes, n, si_tally);
}

static void si_text_hash(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  SiTally tally = {sqlite3_value_int64(argv[0]), sqlite3_value_text(argv[1]), sqlite3_value_bytes(argv[1]), 0, 0};
  if (!tally.col) tally.col = (const unsigned char *)"";
  int rc = si_tokenize_value(ctx, argv[2], &tally, argc > 3 && sqlite3_value_int(argv[3]) != 0);
  if (rc != SQLITE_OK) return sqlite3_result_error_code(ctx, rc);
  sqlite3_result_int64(ctx, tally.sum);
}

static void si_text_size(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  SiTally tally = {0, (const unsigned char *)"", 0, 0, 0};
  int rc = si_tokenize_value(ctx, argv[0], &tally, 0);
  if (rc != SQLITE_OK) return sqlite3_result_error_code(ctx, rc);
  sqlite3_result_int64(ctx, tally.size);
}

static void si_check_free(void *p) {
  SiCheck *check = (SiCheck *)p;
  if (check->instance) check->tokenizer.xDelete(check->instance);
  if (check->paired) check->tokenizer.xDelete(check->paired);
  sqlite3_free(check);
}

/* Registers the three functions on the connection of `api`, which must know the slackindex tokenizer already. */
int si_register_check(sqlite3 *db, fts5_api *api) {
  SiCheck *check = (SiCheck *)sqlite3_malloc64(sizeof(SiCheck));
  if (!check) return SQLITE_NOMEM;
  memset(check, 0, sizeof(*check));
  void *userData = NULL;
  int rc = api->xFindTokenizer(api, SLACKINDEX_TOKENIZER_NAME, &userData, &check->tokenizer);
  if (rc != SQLITE_OK) {
    sqlite3_free(check);
    return rc;
  }
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  /* The first registration owns `check` and frees it when the connection closes (or at once, should it fail): a
   * later one that fails leaves no function holding a freed pointer. */
  rc = sqlite3_create_function_v2(db, "slackindex_text_hash", 3, flags, check, si_text_hash, NULL, NULL,
                                  si_check_free);
  if (rc == SQLITE_OK) /* the fourth argument: 1 for an index of word pairs */
    rc = sqlite3_create_function_v2(db, "slackindex_text_hash", 4, flags, check, si_text_hash, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "slackindex_text_size", 1, flags, check, si_text_size, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "slackindex_index_hash", 4, flags, NULL, si_index_hash, NULL, NULL, NULL);
  return rc;
}
