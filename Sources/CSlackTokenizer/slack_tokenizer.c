/*
 * slack_tokenizer.c - FTS5 tokenizer "slackindex".
 *
 * Token = maximal run of letters/digits (L*, N*) plus attached marks (M*) and
 * in-word joiners (ZWJ, ZWNJ, soft hyphen, word joiner). Everything else
 * (including invalid UTF-8 bytes and NUL) separates.
 *
 *  - ASCII-only tokens: table-driven lowercase, no ICU calls at all.
 *  - Tokens with non-ASCII: NFKC_Casefold (ICU), then NFD, drop combining
 *    marks of script "Inherited" (U+0300.., Arabic harakat, VS, ...), NFC.
 *    => cafe/café/cafe+U+0301 -> "cafe", İ -> "i", ß -> "ss", Ａ -> "a".
 *  - Runs of Han/Hiragana/Katakana/Thai/Lao/Khmer/Myanmar (+ Common/Inherited
 *    letters and marks inside them, e.g. the prolonged sound mark) are split
 *    with ICU's UBRK_WORD dictionary break iterator; each word is folded with
 *    NFKC_Casefold only (no mark removal: dakuten / Thai tone marks matter).
 *
 *  - Words of 3+ plain ASCII letters (no digit, no accent) whose inflectional
 *    English stem differs from the word also emit, at the same position
 *    (FTS5_TOKEN_COLOCATED), SLACKINDEX_STEM_MARKER + stem: "deployed" ->
 *    "deployed" and "\x01deploy". The marker byte is a separator in any text,
 *    so a stem token can never equal a word. Queries ask for it explicitly
 *    (see slackindex_stem in the header); in a query, a string that starts
 *    with the marker is taken as one stem token.
 *
 *  - With the argument "pairs" (tokenize = 'slackindex pairs'), two adjacent words of which one is
 *    "the" also emit, at the second word's position, SLACKINDEX_PAIR_MARKER + first + marker + second:
 *    "size the" -> "size", "the" and "\x02size\x02the". A phrase query is then tokenized into those pairs
 *    ("size the" -> "size", "\x02size\x02the"), so FTS5 no longer checks the positions of "the", which
 *    half the messages hold, in every message of the other word: `"addition the"` on 10M generated messages
 *    walked 47,518 messages of "addition" for 66 matches (~70 ms). Prefix queries are not paired.
 *
 * Offsets handed to xToken are byte offsets into the original input.
 * Folded tokens are truncated to SLACKINDEX_MAX_TOKEN_BYTES at a character
 * boundary (non-ASCII tokens: only the first SI_FOLD_MAX_CP code points are
 * folded, which is deterministic, so document and query agree).
 *
 * Threading: no global mutable state. Every Fts5Tokenizer instance owns its
 * break iterator and buffers; ICU normalizer instances are ICU-owned,
 * immutable and thread-safe. A re-entrant call on a busy instance gets a
 * temporary private instance.
 */
#include "slack_tokenizer.h"

#include <sqlite3.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/utypes.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/ubrk.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>
#include <unicode/uvernum.h>

/* Bump when the token stream changes for the same input.
 * 2: English stem tokens (SLACKINDEX_STEM_MARKER + stem) colocated with plain ASCII words. */
/* 3: stroke letters fold to their base letter (ł -> l).
 * 4: stem tokens are inflectional stems (Porter2 steps 0-1c), no longer full Porter2 stems. */
/* Not bumped for scope texts (SLACKINDEX_SCOPE_MARKER): migration v22, which adds the column they are written to,
 * rebuilds every index, and no query word can hold the marker (`FTS5Query.literal` makes control characters spaces). */
#define SI_RULES_VERSION "4"

#define SI_MAX_TOKEN SLACKINDEX_MAX_TOKEN_BYTES
#define SI_FOLD_MAX_CP 64 /* code points of a non-ASCII word fed to the folder */
#define SI_UBUF 1024      /* UTF-16 scratch buffers for normalisation */

typedef struct SiTokenizer {
  const UNormalizer2 *nfkccf;
  const UNormalizer2 *nfd;
  const UNormalizer2 *nfc;
  UBreakIterator *bi; /* lazily opened, reused via ubrk_setText */
  int busy;
  UChar *run;   /* UTF-16 copy of a complex-script run */
  int32_t *map; /* map[k] = byte offset of UTF-16 unit k of run; map[n] = end */
  int32_t runCap;
  UChar src[SI_FOLD_MAX_CP * 2 + 2];
  UChar fa[SI_UBUF];
  UChar fb[SI_UBUF];
  char out[SI_MAX_TOKEN + 8];
  char stem[SI_MAX_TOKEN + 8]; /* marker + stem of the word in out */
  int pairs;                   /* "pairs" given: word pairs with "the" (documents and phrase queries) */
  char prev[SI_MAX_TOKEN + 8]; /* the word just before, if prevLen > 0 */
  int prevLen;
  int prevThe;
  int prevStart;
  char pair[2 * SI_MAX_TOKEN + 8];
  struct SiStemEntry *stems;   /* lazily allocated cache of recent stems, see si_stem */
} SiTokenizer;

/* Stemming costs ~0.3-0.8 us a word; words repeat (Zipf), so a direct-mapped cache of recent words answers most
 * of them for the cost of a hash. Only words up to SI_STEM_CACHED letters are cached. */
#define SI_STEM_SLOTS 8192
#define SI_STEM_CACHED 22
typedef struct SiStemEntry {
  unsigned char n, m; /* word and stem lengths; n == 0: empty */
  char word[SI_STEM_CACHED];
  char stem[SI_STEM_CACHED];
} SiStemEntry;

/* The stem of w[0..n) (lowercase ASCII letters) into dst; returns its length. */
static int si_stem(SiTokenizer *t, const char *w, int n, char *dst) {
  if (n > SI_STEM_CACHED) return slackindex_stem(w, n, dst);
  if (!t->stems) {
    t->stems = (SiStemEntry *)sqlite3_malloc64(sizeof(SiStemEntry) * SI_STEM_SLOTS);
    if (!t->stems) return slackindex_stem(w, n, dst);
    memset(t->stems, 0, sizeof(SiStemEntry) * SI_STEM_SLOTS);
  }
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; i++) h = (h ^ (unsigned char)w[i]) * 16777619u;
  SiStemEntry *e = &t->stems[h & (SI_STEM_SLOTS - 1)];
  if (e->n == n && memcmp(e->word, w, (size_t)n) == 0) {
    memcpy(dst, e->stem, e->m);
    return e->m;
  }
  int m = slackindex_stem(w, n, dst);
  if (m > 0 && m <= n) {
    e->n = (unsigned char)n;
    e->m = (unsigned char)m;
    memcpy(e->word, w, (size_t)n);
    memcpy(e->stem, dst, (size_t)m);
  }
  return m;
}

typedef int (*SiXToken)(void *, int, const char *, int, int, int);

/* Writes the pair token of a[0..na) and b[0..nb) to dst (2 * SI_MAX_TOKEN + 2 bytes at least); returns its length. */
static int si_pair(char *dst, const char *a, int na, const char *b, int nb) {
  dst[0] = SLACKINDEX_PAIR_MARKER;
  memcpy(dst + 1, a, (size_t)na);
  dst[1 + na] = SLACKINDEX_PAIR_MARKER;
  memcpy(dst + 2 + na, b, (size_t)nb);
  return na + nb + 2;
}

static inline int si_is_the(const char *w, int n) { return n == 3 && w[0] == 't' && w[1] == 'h' && w[2] == 'e'; }

int si_register_rank(fts5_api *api);            /* slack_rank.c */
int si_register_check(sqlite3 *db, fts5_api *api); /* slack_check.c */

/* ASCII: lowercase for [0-9A-Za-z], 0 for separators; 0 for bytes >= 0x80. */
static const unsigned char si_lower[256] = {
#define Z8 0, 0, 0, 0, 0, 0, 0, 0
    Z8, Z8, Z8, Z8, Z8, Z8, /* 0x00-0x2F */
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 0, 0, 0, 0, 0, 0,
    0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o',
    'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 0, 0, 0, 0, 0,
    0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o',
    'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 0, 0, 0, 0, 0,
    Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8, Z8 /* 0x80-0xFF */
#undef Z8
};

/* ---------------------------------------------------------------- UTF-8 -- */

/* Strict decoder. Returns sequence length (1..4) and sets *cp, or 0 when the
 * bytes at i are not a valid, shortest-form, non-surrogate UTF-8 sequence. */
static inline int si_decode(const unsigned char *p, int n, int i, UChar32 *cp) {
  unsigned c = p[i];
  if (c < 0x80) { *cp = (UChar32)c; return 1; }
  if (c < 0xC2) return 0;
  if (c < 0xE0) {
    if (i + 1 >= n || (p[i + 1] & 0xC0) != 0x80) return 0;
    *cp = (UChar32)(((c & 0x1F) << 6) | (p[i + 1] & 0x3F));
    return 2;
  }
  if (c < 0xF0) {
    if (i + 2 >= n || (p[i + 1] & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80) return 0;
    UChar32 v = (UChar32)(((c & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F));
    if (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return 3;
  }
  if (c < 0xF5) {
    if (i + 3 >= n || (p[i + 1] & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80 ||
        (p[i + 3] & 0xC0) != 0x80)
      return 0;
    UChar32 v = (UChar32)(((c & 0x07) << 18) | ((p[i + 1] & 0x3F) << 12) |
                          ((p[i + 2] & 0x3F) << 6) | (p[i + 3] & 0x3F));
    if (v < 0x10000 || v > 0x10FFFF) return 0;
    *cp = v;
    return 4;
  }
  return 0;
}

/* ------------------------------------------------------- classification -- */

enum { SI_SEP = 0, SI_NORMAL, SI_COMMON, SI_COMPLEX, SI_CONT };

static inline int si_is_complex_script(UScriptCode s) {
  switch (s) {
    case USCRIPT_HAN:
    case USCRIPT_HIRAGANA:
    case USCRIPT_KATAKANA:
    case USCRIPT_KATAKANA_OR_HIRAGANA:
    case USCRIPT_THAI:
    case USCRIPT_LAO:
    case USCRIPT_KHMER:
    case USCRIPT_MYANMAR:
      return 1;
    default:
      return 0;
  }
}

/* Classification of a non-ASCII code point. */
static int si_classify(UChar32 c) {
  switch (u_charType(c)) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER: {
      UErrorCode e = U_ZERO_ERROR;
      UScriptCode s = uscript_getScript(c, &e);
      if (U_FAILURE(e)) return SI_NORMAL;
      if (si_is_complex_script(s)) return SI_COMPLEX;
      if (s == USCRIPT_COMMON || s == USCRIPT_INHERITED) return SI_COMMON;
      return SI_NORMAL;
    }
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK:
      return SI_CONT;
    case U_FORMAT_CHAR:
      /* soft hyphen, ZWNJ, ZWJ, word joiner: stay inside a word */
      if (c == 0x00AD || c == 0x200C || c == 0x200D || c == 0x2060) return SI_CONT;
      return SI_SEP;
    default:
      return SI_SEP;
  }
}

/* Scan a "normal" (space-delimited script) token starting at i; returns end. */
static int si_scan_normal(const unsigned char *p, int n, int i) {
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      if (!si_lower[c]) break;
      i++;
      continue;
    }
    UChar32 cp;
    int l = si_decode(p, n, i, &cp);
    if (!l) break;
    int k = si_classify(cp);
    if (k == SI_SEP || k == SI_COMPLEX) break;
    i += l;
  }
  return i;
}

/* Scan a complex-script run (Han, kana, Thai, ...) starting at i; returns end. */
static int si_scan_complex(const unsigned char *p, int n, int i) {
  while (i < n) {
    if (p[i] < 0x80) break;
    UChar32 cp;
    int l = si_decode(p, n, i, &cp);
    if (!l) break;
    int k = si_classify(cp);
    if (k == SI_SEP || k == SI_NORMAL) break;
    i += l;
  }
  return i;
}

/* -------------------------------------------------------------- folding -- */

static inline int si_is_word_char(UChar32 c) {
  return (U_GET_GC_MASK(c) & (U_GC_L_MASK | U_GC_N_MASK | U_GC_M_MASK)) != 0;
}

static inline int si_is_dropped_mark(UChar32 c) {
  if (!(U_GET_GC_MASK(c) & U_GC_M_MASK)) return 0;
  UErrorCode e = U_ZERO_ERROR;
  return uscript_getScript(c, &e) == USCRIPT_INHERITED;
}

/* Latin letters whose stroke or bar is part of the letter, so NFD leaves no mark
 * to drop; folded to their base letter like the accented ones (Zażółć -> zazolc,
 * København -> kobenhavn). Lower case only: NFKC_Casefold ran first. 0 = none. */
static inline UChar si_stroke_base(UChar32 c) {
  switch (c) {
  case 0x0142: return 'l'; /* ł */
  case 0x00F8: return 'o'; /* ø */
  case 0x0111: return 'd'; /* đ */
  case 0x0127: return 'h'; /* ħ */
  case 0x0167: return 't'; /* ŧ */
  case 0x0180: return 'b'; /* ƀ */
  case 0x01E5: return 'g'; /* ǥ */
  case 0x0268: return 'i'; /* ɨ */
  default: return 0;
  }
}

/* Normalise src[0..n) into dst; on overflow retry with a shorter (but
 * deterministic) prefix. Returns length or -1. */
static int32_t si_norm(const UNormalizer2 *nz, const UChar *src, int32_t n, UChar *dst,
                       int32_t cap) {
  for (;;) {
    UErrorCode e = U_ZERO_ERROR;
    int32_t len = unorm2_normalize(nz, src, n, dst, cap, &e);
    if (U_SUCCESS(e)) return len; /* incl. U_STRING_NOT_TERMINATED_WARNING */
    if (e != U_BUFFER_OVERFLOW_ERROR || n <= 1) return -1;
    n /= 2;
    if (n > 0 && U16_IS_TRAIL(src[n]) && U16_IS_LEAD(src[n - 1])) n--;
    if (n <= 0) return -1;
  }
}

/* UTF-16 -> UTF-8 into t->out, at most SI_MAX_TOKEN bytes, cut at a
 * character boundary; skips anything that is not a letter/number/mark. */
static int si_to_utf8(SiTokenizer *t, const UChar *u, int32_t n) {
  char *o = t->out;
  int len = 0;
  int32_t i = 0;
  while (i < n) {
    UChar32 c;
    U16_NEXT(u, i, n, c);
    if (c < 0x80) {
      unsigned char l = si_lower[c];
      if (!l) continue;
      if (len + 1 > SI_MAX_TOKEN) break;
      o[len++] = (char)l;
      continue;
    }
    if (!si_is_word_char(c)) continue;
    if (c < 0x800) {
      if (len + 2 > SI_MAX_TOKEN) break;
      o[len++] = (char)(0xC0 | (c >> 6));
      o[len++] = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      if (len + 3 > SI_MAX_TOKEN) break;
      o[len++] = (char)(0xE0 | (c >> 12));
      o[len++] = (char)(0x80 | ((c >> 6) & 0x3F));
      o[len++] = (char)(0x80 | (c & 0x3F));
    } else {
      if (len + 4 > SI_MAX_TOKEN) break;
      o[len++] = (char)(0xF0 | (c >> 18));
      o[len++] = (char)(0x80 | ((c >> 12) & 0x3F));
      o[len++] = (char)(0x80 | ((c >> 6) & 0x3F));
      o[len++] = (char)(0x80 | (c & 0x3F));
    }
  }
  return len;
}

/* Fold a UTF-16 word. removeMarks: drop Inherited-script combining marks
 * (diacritics) after NFD. Result in t->out; returns byte length (0 = none). */
static int si_fold_u16(SiTokenizer *t, const UChar *src, int32_t n, int removeMarks) {
  int32_t la = si_norm(t->nfkccf, src, n, t->fa, SI_UBUF);
  if (la <= 0) return 0;
  if (!removeMarks) return si_to_utf8(t, t->fa, la);

  int32_t lb = si_norm(t->nfd, t->fa, la, t->fb, SI_UBUF);
  if (lb <= 0) return si_to_utf8(t, t->fa, la);
  int32_t i = 0, w = 0;
  int dropped = 0;
  while (i < lb) {
    int32_t s = i;
    UChar32 c;
    U16_NEXT(t->fb, i, lb, c);
    if (c >= 0x300 && si_is_dropped_mark(c)) {
      dropped = 1;
      continue;
    }
    UChar base = c >= 0xF8 ? si_stroke_base(c) : 0;
    if (base) {
      t->fb[w++] = base;
      dropped = 1;
      continue;
    }
    while (s < i) t->fb[w++] = t->fb[s++];
  }
  if (!dropped) return si_to_utf8(t, t->fa, la); /* NFKC_CF form unchanged */
  if (w == 0) return 0;
  la = si_norm(t->nfc, t->fb, w, t->fa, SI_UBUF);
  if (la <= 0) return si_to_utf8(t, t->fb, w);
  return si_to_utf8(t, t->fa, la);
}

/* Fold an original UTF-8 word p[start..end) that contains non-ASCII. */
static int si_fold_utf8(SiTokenizer *t, const unsigned char *p, int start, int end) {
  int32_t n = 0, cps = 0;
  int i = start;
  while (i < end && cps < SI_FOLD_MAX_CP) {
    UChar32 c;
    int l = si_decode(p, end, i, &c);
    if (!l) { i++; continue; } /* cannot happen: scanner validated */
    U16_APPEND_UNSAFE(t->src, n, c);
    cps++;
    i += l;
  }
  return si_fold_u16(t, t->src, n, 1);
}

/* ------------------------------------------------------ complex scripts -- */

static int si_ensure_run(SiTokenizer *t, int32_t need) {
  if (need <= t->runCap) return 1;
  int64_t cap = t->runCap ? t->runCap : 256;
  while (cap < need) cap *= 2;
  if (cap > 0x7FFFFFF0) cap = need;
  UChar *r = (UChar *)sqlite3_realloc64(t->run, (sqlite3_uint64)cap * sizeof(UChar));
  if (!r) return 0;
  t->run = r;
  int32_t *m = (int32_t *)sqlite3_realloc64(t->map, (sqlite3_uint64)(cap + 1) * sizeof(int32_t));
  if (!m) return 0;
  t->map = m;
  t->runCap = (int32_t)cap;
  return 1;
}

static int si_emit_complex(SiTokenizer *t, void *ctx, SiXToken xToken, const unsigned char *p,
                           int start, int end) {
  if (!si_ensure_run(t, end - start + 2)) return SQLITE_NOMEM;
  int32_t n16 = 0;
  int i = start;
  while (i < end) {
    UChar32 c;
    int l = si_decode(p, end, i, &c);
    if (!l) { i++; continue; }
    t->map[n16] = i;
    if (c > 0xFFFF) t->map[n16 + 1] = i;
    U16_APPEND_UNSAFE(t->run, n16, c);
    i += l;
  }
  t->map[n16] = end;

  UErrorCode e = U_ZERO_ERROR;
  if (!t->bi) {
    t->bi = ubrk_open(UBRK_WORD, "", NULL, 0, &e);
    if (U_FAILURE(e)) {
      if (t->bi) ubrk_close(t->bi);
      t->bi = NULL;
    }
  }
  if (t->bi) {
    e = U_ZERO_ERROR;
    ubrk_setText(t->bi, t->run, n16, &e);
    if (U_FAILURE(e)) goto whole;
    int32_t a = ubrk_first(t->bi);
    int32_t b;
    while ((b = ubrk_next(t->bi)) != UBRK_DONE) {
      int32_t seg = b - a;
      if (seg > 0) {
        int32_t fn = seg > SI_FOLD_MAX_CP * 2 ? SI_FOLD_MAX_CP * 2 : seg;
        if (fn < seg && U16_IS_LEAD(t->run[a + fn - 1])) fn--;
        int len = si_fold_u16(t, t->run + a, fn, 0);
        if (len > 0) {
          int rc = xToken(ctx, 0, t->out, len, t->map[a], t->map[b]);
          if (rc != SQLITE_OK) return rc;
        }
      }
      a = b;
    }
    return SQLITE_OK;
  }
whole: {
  int32_t fn = n16 > SI_FOLD_MAX_CP * 2 ? SI_FOLD_MAX_CP * 2 : n16;
  if (fn < n16 && U16_IS_LEAD(t->run[fn - 1])) fn--;
  int len = si_fold_u16(t, t->run, fn, 0);
  if (len > 0) return xToken(ctx, 0, t->out, len, start, end);
  return SQLITE_OK;
}
}

/* ------------------------------------------------------------ tokenizer -- */

/* stems: also emit colocated stem tokens (documents only: in a query, FTS5 would take them as synonyms, and an
 * exact word must stay exact). */
static int si_tokenize_impl(SiTokenizer *t, void *ctx, const char *pText, int nText, SiXToken xToken,
                            int stems) {
  const unsigned char *p = (const unsigned char *)pText;
  const int n = nText;
  char *out = t->out;
  int i = 0;
  int rc = SQLITE_OK;

  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      unsigned char l = si_lower[c];
      if (!l) { i++; continue; }
      /* ASCII fast path */
      int start = i, k = 0, letters = 1;
      do {
        if (k < SI_MAX_TOKEN) out[k++] = (char)l;
        letters &= l >= 'a';
        i++;
      } while (i < n && (l = si_lower[p[i]]) != 0);
      if (i < n && p[i] >= 0x80) {
        /* a non-ASCII character may continue this word (é, U+0301, ...) */
        int end = si_scan_normal(p, n, i);
        if (end > i) {
          i = end;
          int len = si_fold_utf8(t, p, start, end);
          if (len > 0 && (rc = xToken(ctx, 0, out, len, start, end)) != SQLITE_OK) return rc;
          continue;
        }
      }
      if ((rc = xToken(ctx, 0, out, k, start, i)) != SQLITE_OK) return rc;
      if (stems && letters && k >= 3 && i - start <= SI_MAX_TOKEN) {
        /* the English stem, when it differs, at the same position */
        int m = si_stem(t, out, k, t->stem + 1);
        if (m != k || memcmp(out, t->stem + 1, (size_t)k) != 0) {
          t->stem[0] = SLACKINDEX_STEM_MARKER;
          if ((rc = xToken(ctx, FTS5_TOKEN_COLOCATED, t->stem, m + 1, start, i)) != SQLITE_OK) return rc;
        }
      }
      continue;
    }

    UChar32 cp;
    int l = si_decode(p, n, i, &cp);
    if (!l) { i++; continue; } /* invalid UTF-8: separator */
    int kind = si_classify(cp);
    if (kind == SI_SEP || kind == SI_CONT) { i += l; continue; }
    int start = i;
    if (kind == SI_COMPLEX) {
      int end = si_scan_complex(p, n, i + l);
      if ((rc = si_emit_complex(t, ctx, xToken, p, start, end)) != SQLITE_OK) return rc;
      i = end;
    } else {
      int end = si_scan_normal(p, n, i + l);
      int len = si_fold_utf8(t, p, start, end);
      if (len > 0 && (rc = xToken(ctx, 0, out, len, start, end)) != SQLITE_OK) return rc;
      i = end;
    }
  }
  return SQLITE_OK;
}

static void si_free(SiTokenizer *t) {
  if (!t) return;
  if (t->bi) ubrk_close(t->bi);
  sqlite3_free(t->stems);
  sqlite3_free(t->run);
  sqlite3_free(t->map);
  sqlite3_free(t);
}

static SiTokenizer *si_new(void) {
  SiTokenizer *t = (SiTokenizer *)sqlite3_malloc64(sizeof(SiTokenizer));
  if (!t) return NULL;
  memset(t, 0, sizeof(*t));
  UErrorCode e = U_ZERO_ERROR;
  t->nfkccf = unorm2_getNFKCCasefoldInstance(&e);
  if (U_SUCCESS(e)) t->nfd = unorm2_getNFDInstance(&e);
  if (U_SUCCESS(e)) t->nfc = unorm2_getNFCInstance(&e);
  if (U_FAILURE(e) || !t->nfkccf || !t->nfd || !t->nfc) {
    si_free(t);
    return NULL;
  }
  return t;
}

static int siCreate(void *pCtx, const char **azArg, int nArg, Fts5Tokenizer **ppOut) {
  (void)pCtx;
  SiTokenizer *t = si_new();
  *ppOut = (Fts5Tokenizer *)t;
  if (!t) return SQLITE_NOMEM;
  for (int i = 0; i < nArg; i++) /* other arguments are accepted and ignored */
    if (azArg[i] && strcmp(azArg[i], "pairs") == 0) t->pairs = 1;
  return SQLITE_OK;
}

static void siDelete(Fts5Tokenizer *p) { si_free((SiTokenizer *)p); }

/* Tokens handed on with their pairs: the callback between si_tokenize_impl and FTS5. A document's word is followed
 * by its pair with the word before, at its position (colocated); in a phrase query the pair takes the word's place,
 * at the same consecutive positions as in the documents: "size of the file" -> "size", "of", "\x02of\x02the",
 * "\x02the\x02file". The first word stays (also when the pair after it holds it), so the phrase keeps its length
 * and start for `^`, NEAR and `+`; FTS5 then checks it only in the pair's messages. */
typedef struct SiPairing {
  SiTokenizer *t;
  void *ctx;
  SiXToken xToken;
  int query; /* a phrase query's tokens, not a document's */
} SiPairing;

/* Pairs depend on the tokens alone, whichever path made them ("the" + U+0301 folds to "the" too), so that a query
 * tokenized alike pairs alike. */
static int si_pairing(void *p, int flags, const char *token, int n, int start, int end) {
  SiPairing *w = (SiPairing *)p;
  SiTokenizer *t = w->t;
  if (flags & FTS5_TOKEN_COLOCATED) return w->xToken(w->ctx, flags, token, n, start, end);
  if (n > SI_MAX_TOKEN) { /* never: tokens are truncated to that; kept so that no buffer can overflow */
    t->prevLen = 0;
    return w->xToken(w->ctx, flags, token, n, start, end);
  }
  int the = si_is_the(token, n);
  int paired = t->prevLen > 0 && (the || t->prevThe);
  int rc = SQLITE_OK;
  if (!paired || !w->query) rc = w->xToken(w->ctx, flags, token, n, start, end);
  if (rc == SQLITE_OK && paired) {
    int m = si_pair(t->pair, t->prev, t->prevLen, token, n);
    rc = w->query ? w->xToken(w->ctx, 0, t->pair, m, t->prevStart, end)
                  : w->xToken(w->ctx, FTS5_TOKEN_COLOCATED, t->pair, m, start, end);
  }
  memcpy(t->prev, token, (size_t)n);
  t->prevLen = n;
  t->prevThe = the;
  t->prevStart = start;
  return rc;
}

static int siTokenizeWith(SiTokenizer *t, void *pCtx, int flags, const char *pText, int nText, SiXToken xToken) {
  int document = (flags & FTS5_TOKENIZE_DOCUMENT) != 0;
  int phrase = (flags & FTS5_TOKENIZE_QUERY) && !(flags & FTS5_TOKENIZE_PREFIX);
  if (!t->pairs || !(document || phrase)) return si_tokenize_impl(t, pCtx, pText, nText, xToken, document);
  SiPairing pairing = {t, pCtx, xToken, !document};
  t->prevLen = 0; /* a pair never spans two texts */
  return si_tokenize_impl(t, &pairing, pText, nText, si_pairing, document);
}

slackindex_words *si_words_counting(void);                          /* slack_words.c */
void si_words_count(slackindex_words *w, const char *token, int n); /* slack_words.c */

/* A document's tokens on their way to FTS5, counted as the words of the message being written. */
typedef struct SiCounting {
  void *ctx;
  SiXToken xToken;
  slackindex_words *words;
} SiCounting;

static int si_counting(void *p, int flags, const char *token, int n, int start, int end) {
  SiCounting *c = (SiCounting *)p;
  /* Colocated tokens are stems and pairs, never counted: the call saved for a third of the tokens. */
  if (!(flags & FTS5_TOKEN_COLOCATED) && n > 0 && (unsigned char)token[0] > SLACKINDEX_SCOPE_MARKER)
    si_words_count(c->words, token, n);
  return c->xToken(c->ctx, flags, token, n, start, end);
}

/* The length of the scope token at text[0..n) (SLACKINDEX_SCOPE_MARKER in slack_tokenizer.h): the marker, a lowercase
 * letter, then 1..62 bytes of printable ASCII other than '"' up to a space or the end; 0 when it is not one. */
static int si_scope_token(const char *text, int n) {
  if (n < 3 || text[0] != SLACKINDEX_SCOPE_MARKER || text[1] < 'a' || text[1] > 'z') return 0;
  int i = 2;
  while (i < n && text[i] != ' ') {
    unsigned char c = (unsigned char)text[i++];
    if (c <= 0x20 || c >= 0x7f || c == '"') return 0;
  }
  return i > 2 && i <= SI_MAX_TOKEN ? i : 0;
}

/* Whether a text is a scope text: scope tokens separated by single spaces, nothing else. A message whose own text is
 * exactly that (U+0003, which Slack's clients cannot type, then a letter...) would be indexed as one. */
static int si_is_scope(const char *text, int n) {
  int i = 0;
  while (i < n) {
    int length = si_scope_token(text + i, n - i);
    if (!length) return 0;
    i += length;
    if (i < n && (text[i] != ' ' || i + 1 == n)) return 0;
    i++;
  }
  return n > 0;
}

/* The tokens of a scope text, verbatim, at their byte offsets. */
static int si_tokenize_scope(void *ctx, const char *text, int n, SiXToken xToken) {
  for (int i = 0; i < n;) {
    int length = si_scope_token(text + i, n - i);
    int rc = xToken(ctx, 0, text + i, length, i, i + length);
    if (rc != SQLITE_OK) return rc;
    i += length + 1;
  }
  return SQLITE_OK;
}

static int siTokenize(Fts5Tokenizer *pTok, void *pCtx, int flags, const char *pText, int nText,
                      SiXToken xToken) {
  /* Query, prefix-query, document and aux tokenization produce the same
   * words; stem tokens are added to documents only, and a query names them
   * explicitly; pair tokens (a "pairs" index) are added to documents and replace the words of phrase queries. */
  SiTokenizer *t = (SiTokenizer *)pTok;
  if (!pText || nText <= 0) {
    if (!pText || nText == 0) return SQLITE_OK;
    nText = (int)strlen(pText);
  }
  if (si_is_scope(pText, nText)) return si_tokenize_scope(pCtx, pText, nText, xToken);
  if ((flags & FTS5_TOKENIZE_QUERY) && pText[0] == SLACKINDEX_STEM_MARKER) {
    /* a stem token: the marker then 1..64 lowercase ASCII letters; anything else matches nothing */
    int ok = nText >= 2 && nText <= SI_MAX_TOKEN + 1;
    for (int i = 1; ok && i < nText; i++) ok = pText[i] >= 'a' && pText[i] <= 'z';
    return ok ? xToken(pCtx, 0, pText, nText, 0, nText) : SQLITE_OK;
  }
  /* A message being written on this thread with its words counted (slack_words.c): its tokens go through. */
  SiCounting counting;
  slackindex_words *words = (flags & FTS5_TOKENIZE_DOCUMENT) ? si_words_counting() : NULL;
  if (words) {
    counting = (SiCounting){pCtx, xToken, words};
    pCtx = &counting;
    xToken = si_counting;
  }
  if (t->busy) { /* re-entrant use of a busy instance: private temporary */
    SiTokenizer *tmp = si_new();
    if (!tmp) return SQLITE_NOMEM;
    tmp->pairs = t->pairs;
    int rc = siTokenizeWith(tmp, pCtx, flags, pText, nText, xToken);
    si_free(tmp);
    return rc;
  }
  t->busy = 1;
  int rc = siTokenizeWith(t, pCtx, flags, pText, nText, xToken);
  t->busy = 0;
  return rc;
}

int slackindex_register_tokenizer(sqlite3 *db) {
  fts5_api *api = NULL;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL);
  if (rc != SQLITE_OK) return rc;
  sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
  sqlite3_step(st);
  rc = sqlite3_finalize(st);
  if (rc != SQLITE_OK) return rc;
  if (!api || api->iVersion < 2) return SQLITE_ERROR;
  fts5_tokenizer tok = {siCreate, siDelete, siTokenize};
  rc = api->xCreateTokenizer(api, SLACKINDEX_TOKENIZER_NAME, NULL, &tok, NULL);
  if (rc != SQLITE_OK) return rc;
  rc = si_register_rank(api);
  if (rc != SQLITE_OK) return rc;
  return si_register_check(db, api);
}

/* One tokenizer per thread for slackindex_tokenize: a new one per call allocated and cleared its 376 KB stem cache
 * every time (1.8 ms a message). Freed when the thread ends. */
static pthread_key_t si_thread_key;
static pthread_once_t si_thread_once = PTHREAD_ONCE_INIT;
static void si_thread_free(void *t) { si_free((SiTokenizer *)t); }
static void si_thread_key_make(void) { pthread_key_create(&si_thread_key, si_thread_free); }

/* documents: 0 a query word, 1 a stored text (with stems), 2 a phrase query of a "pairs" index. */
static int si_tokenize_as(SiTokenizer *t, void *ctx, const char *text, int n, int documents, SiXToken fn) {
  if (documents != 2) return si_tokenize_impl(t, ctx, text, n, fn, documents != 0);
  int pairs = t->pairs;
  t->pairs = 1;
  int rc = siTokenizeWith(t, ctx, FTS5_TOKENIZE_QUERY, text, n, fn);
  t->pairs = pairs;
  return rc;
}

int slackindex_tokenize(const char *text, int n, int documents, void *ctx, slackindex_token_callback fn) {
  if (!text || n <= 0) return SQLITE_OK;
  pthread_once(&si_thread_once, si_thread_key_make);
  SiTokenizer *t = (SiTokenizer *)pthread_getspecific(si_thread_key);
  if (!t) {
    t = si_new();
    if (!t) return SQLITE_NOMEM;
    pthread_setspecific(si_thread_key, t);
  }
  if (t->busy) { /* a callback that tokenizes again: a private temporary */
    SiTokenizer *tmp = si_new();
    if (!tmp) return SQLITE_NOMEM;
    int rc = si_tokenize_as(tmp, ctx, text, n, documents, (SiXToken)fn);
    si_free(tmp);
    return rc;
  }
  t->busy = 1;
  int rc = si_tokenize_as(t, ctx, text, n, documents, (SiXToken)fn);
  t->busy = 0;
  return rc;
}

int slackindex_disable_sqlite_memory_statistics(void) {
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

const char *slackindex_tokenizer_version(void) {
  return "slackindex-" SI_RULES_VERSION " icu-" U_ICU_VERSION;
}
