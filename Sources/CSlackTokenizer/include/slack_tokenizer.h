/*
 * slack_tokenizer.h - FTS5 tokenizer "slackindex" for the slackindex archive.
 *
 * Public header. Deliberately does NOT include ICU headers and does NOT
 * include <sqlite3.h>: the sqlite3 connection type is only forward-declared,
 * so this module never re-exports SQLite declarations and cannot clash with
 * whatever module (system library target, SQLite3 module map, ...) the Swift
 * side uses for SQLite. In Swift the function imports as
 *     func slackindex_register_tokenizer(_ db: OpaquePointer!) -> Int32
 * which accepts the same OpaquePointer that sqlite3_open_v2 hands out.
 */
#ifndef SLACK_TOKENIZER_H
#define SLACK_TOKENIZER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sqlite3 sqlite3;

/* Name under which the tokenizer is registered: tokenize='slackindex' */
#define SLACKINDEX_TOKENIZER_NAME "slackindex"

/* Maximum length in bytes of an emitted (folded) token; longer tokens are
 * truncated at a UTF-8 character boundary. The token's offsets still cover
 * the whole original word, so highlight()/snippet() mark all of it. */
#define SLACKINDEX_MAX_TOKEN_BYTES 64

/*
 * Registers the FTS5 tokenizer "slackindex" on this connection (must be
 * called once per connection, before any FTS5 table using it is accessed).
 * Usable as:
 *   CREATE VIRTUAL TABLE t USING fts5(body, extra, tokenize='slackindex');
 * Tokenizer arguments are accepted and ignored.
 * Also registers the auxiliary function slackindex_rank() (slack_rank.c):
 * bm25 where a word and its stem token count as one term; and the functions
 * `slackindex check` compares the index with the text through
 * (slackindex_index_hash, slackindex_text_hash, slackindex_text_size:
 * slack_check.c).
 * Returns SQLITE_OK (0) or an SQLite error code.
 */
int slackindex_register_tokenizer(sqlite3 *db);

/*
 * Turns off SQLite's memory statistics for the process (SQLITE_CONFIG_MEMSTATUS): every sqlite3_malloc and
 * sqlite3_free then skips a global mutex and a counter update (~4% of an import's writer thread). Only takes effect
 * before SQLite is first used (then it returns SQLITE_MISUSE and changes nothing); call it before any other thread
 * can use SQLite, as sqlite3_config is not thread-safe. Returns SQLITE_OK (0) or an SQLite error code.
 */
int slackindex_disable_sqlite_memory_statistics(void);

/* First byte of a stem token (a byte no word can hold: it separates words). */
#define SLACKINDEX_STEM_MARKER '\x01'

/* First byte of a word-pair token, and the byte between its two words (tokenize = 'slackindex pairs'). */
#define SLACKINDEX_PAIR_MARKER '\x02'

/*
 * First byte of a scope token: the conversation or author of a message as a word of the index's third column,
 * `search_scope` ("\x03c31 \x03uU0XRBUTTPAY", `IndexScope` in Swift), so that `in:` and `from:` are matched inside
 * the index instead of by reading every match's message row. A text (document or query) made only of scope tokens
 * separated by single spaces is a scope text, and they are its tokens, verbatim: each is the marker, a lowercase
 * ASCII letter, then 1..62 bytes of printable ASCII other than '"'. No stems, pairs or word counts. In any other text
 * the marker separates words, as every control character does.
 */
#define SLACKINDEX_SCOPE_MARKER '\x03'

/*
 * Writes the inflectional stem of word[0..n) (Porter2's exceptions and steps
 * 0-1c: plurals, -ed, -ing, final y; not its derivational steps 2-5) to out (at least
 * n bytes; not NUL-terminated) and returns its length (1..n). Only words of
 * lowercase ASCII letters are stemmed; anything else (and words of 1-2
 * letters) is copied unchanged. n is capped at SLACKINDEX_MAX_TOKEN_BYTES.
 * Pure and thread-safe. (english_stemmer.c)
 */
int slackindex_stem(const char *word, int n, char *out);

/* Flag of a token at the same position as the one before it (FTS5_TOKEN_COLOCATED): a word's stem token. */
#define SLACKINDEX_TOKEN_COLOCATED 1

/* Receives one token: flags (0 or SLACKINDEX_TOKEN_COLOCATED), the folded token (not NUL-terminated) and the byte
 * range of the word in the input. Returns 0 to go on, anything else to stop (slackindex_tokenize returns it). */
typedef int (*slackindex_token_callback)(void *ctx, int flags, const char *token, int n, int start, int end);

/*
 * The tokenizer without SQLite: the same tokens the FTS5 index holds for text[0..n) (documents 1: with the
 * colocated stem tokens, as a stored message, without word pairs; 0: as a query word; 2: what a phrase query asks an
 * index of tokenize = 'slackindex pairs' for, its words turned into pairs), handed to fn in order. Feeds other
 * indexes the same words (PostgreSQL's tsvector). Thread-safe: every call has its own tokenizer state.
 * Returns 0, 7 (SQLITE_NOMEM) when the state cannot be allocated, or what fn returned to stop.
 */
int slackindex_tokenize(const char *text, int n, int documents, void *ctx, slackindex_token_callback fn);

/*
 * Identifies the token stream this build produces, e.g. "slackindex-1 icu-72.1".
 * The tokens are baked into the FTS5 index: if this string changes (new
 * tokenizer rules, or a different ICU whose word-break dictionaries segment
 * CJK/Thai differently), rebuild the index:
 *   INSERT INTO t(t) VALUES('rebuild');
 * Store it next to the index (e.g. in a meta table) and compare at startup.
 * Returns a static string; thread-safe.
 */
const char *slackindex_tokenizer_version(void);

/* Counts of the messages holding each word, kept while the index is written (Sources/CSlackTokenizer/slack_words.c):
 * between slackindex_words_start and slackindex_words_stop, each message the index tokenizes as a document on this
 * thread (an FTS5 insert: sign 1, or delete: sign -1) adds sign once for each distinct word it holds. */
typedef struct slackindex_words slackindex_words;
slackindex_words *slackindex_words_new(void);
void slackindex_words_free(slackindex_words *w);
/* Forgets every count (a rolled-back transaction's). */
void slackindex_words_clear(slackindex_words *w);
/* Nonzero when memory ran out while counting: the counts are incomplete and must not be stored. */
int slackindex_words_failed(const slackindex_words *w);
/* The next message tokenized on this thread counts with `sign`; call it before each message's statement. */
void slackindex_words_start(slackindex_words *w, int sign);
void slackindex_words_stop(void);
/* Receives one word (not NUL-terminated) and its count's change; returns 0 to go on. */
typedef int (*slackindex_word_callback)(void *ctx, const char *word, int n, long long delta);
/* Each word whose count changed, in an order fixed by the words and the order they came in. */
int slackindex_words_each(slackindex_words *w, void *ctx, slackindex_word_callback fn);

#ifdef __cplusplus
}
#endif

#endif /* SLACK_TOKENIZER_H */
