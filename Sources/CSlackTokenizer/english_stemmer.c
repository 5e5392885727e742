/*
 * english_stemmer.c - the inflectional steps of the Porter2 ("Snowball
 * English") stemmer (its exceptions and steps 0 to 1c: plurals, -ed, -ing,
 * final y), written for slackindex from the published algorithm description
 * (https://snowballstem.org/algorithms/english/stemmer.html); no Snowball
 * code is included.
 *
 * Why only these steps: the derivational steps 2 to 5 join words that people
 * do not take for forms of one another (iterators, iteration, iterables and
 * iter all stem to "iter"; university, universe and universal to "univers"),
 * and a search for one of them was buried under the others (issue 54). The
 * inflections of a word are what Slack's search and Lucene's light English
 * stemmers give as its forms: deploy, deploys, deployed, deploying; not
 * deployment. See docs/search.md, "Word variants".
 *
 * Input: lowercase ASCII letters only (the tokenizer and the query side only
 * stem such words; anything else is returned unchanged). Output: the stem,
 * never longer than the input. Pure function: no global mutable state.
 */
#include "slack_tokenizer.h"

#include <string.h>

#define SI_STEM_MAX SLACKINDEX_MAX_TOKEN_BYTES

typedef struct {
  char b[SI_STEM_MAX + 1]; /* the word; 'Y' marks a consonant y */
  int n;                   /* its length */
  int r1;                  /* start of region R1 (n when empty) */
} SiStem;

static int si_vowel(char c) {
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
}

static int si_ends(const SiStem *s, const char *suffix) {
  int l = (int)strlen(suffix);
  return l <= s->n && memcmp(s->b + s->n - l, suffix, (size_t)l) == 0;
}

/* Replaces the last `cut` letters by `with`. */
static void si_set(SiStem *s, int cut, const char *with) {
  int l = (int)strlen(with);
  s->n -= cut;
  if (s->n + l > SI_STEM_MAX) l = SI_STEM_MAX - s->n;
  memcpy(s->b + s->n, with, (size_t)l);
  s->n += l;
  s->b[s->n] = 0;
}

/* A suffix and its length. */
typedef struct {
  const char *s;
  int n;
} SiSuffix;
#define SX(text) {text, (int)sizeof(text) - 1}

/* The longest of `list` (ended by {NULL, 0}) that ends the word, or -1. Most words end in a letter no suffix of
 * the list ends in: the last letters are compared first. */
static int si_longest(const SiStem *s, const SiSuffix *list) {
  if (s->n == 0) return -1;
  char last = s->b[s->n - 1];
  int best = -1, bestLen = -1;
  for (int i = 0; list[i].s; i++) {
    int l = list[i].n;
    if (list[i].s[l - 1] != last || l <= bestLen || l > s->n) continue;
    const char *a = s->b + s->n - l, *x = list[i].s;
    int k = l - 2;
    while (k >= 0 && a[k] == x[k]) k--;
    if (k < 0) {
      best = i;
      bestLen = l;
    }
  }
  return best;
}

/* A short syllable ending at index `end` (exclusive): consonant-vowel-consonant
 * where the last consonant is not w, x or Y, or vowel-consonant at the start. */
static int si_short_syllable(const char *b, int end) {
  if (end >= 3 && !si_vowel(b[end - 3]) && si_vowel(b[end - 2]) && !si_vowel(b[end - 1]) &&
      b[end - 1] != 'w' && b[end - 1] != 'x' && b[end - 1] != 'Y')
    return 1;
  return end == 2 && si_vowel(b[0]) && !si_vowel(b[1]);
}

static int si_is_short_word(const SiStem *s) { return s->r1 >= s->n && si_short_syllable(s->b, s->n); }

/* Region after the first non-vowel that follows a vowel, from `from`. */
static int si_region(const char *b, int n, int from) {
  for (int i = from + 1; i < n; i++)
    if (!si_vowel(b[i]) && si_vowel(b[i - 1])) return i + 1;
  return n;
}

static int si_has_vowel(const char *b, int n) {
  for (int i = 0; i < n; i++)
    if (si_vowel(b[i])) return 1;
  return 0;
}

static void si_step1a(SiStem *s) {
  static const SiSuffix list[] = {SX("sses"), SX("ied"), SX("ies"), SX("s"), SX("us"), SX("ss"), {NULL, 0}};
  switch (si_longest(s, list)) {
    case 0: si_set(s, 2, ""); break;
    case 1:
    case 2: si_set(s, 3, s->n > 4 ? "i" : "ie"); break;
    case 3:
      /* delete if the part before the s holds a vowel not immediately before it */
      if (s->n >= 3 && si_has_vowel(s->b, s->n - 2)) si_set(s, 1, "");
      break;
    default: break;
  }
}

static void si_step1b(SiStem *s) {
  static const SiSuffix list[] = {SX("eed"), SX("eedly"), SX("ed"), SX("edly"), SX("ing"), SX("ingly"), {NULL, 0}};
  int k = si_longest(s, list);
  if (k < 0) return;
  int l = list[k].n;
  if (k <= 1) {
    if (s->n - l >= s->r1) si_set(s, l - 2, ""); /* -> ee */
    return;
  }
  if (!si_has_vowel(s->b, s->n - l)) return;
  if (k == 4 && s->n == 5 && !si_vowel(s->b[0]) && s->b[1] == 'y') { /* hying -> hie */
    si_set(s, 4, "ie");
    return;
  }
  si_set(s, l, "");
  if (si_ends(s, "at") || si_ends(s, "bl") || si_ends(s, "iz")) {
    si_set(s, 0, "e");
  } else if (s->n >= 2 && s->b[s->n - 1] == s->b[s->n - 2] && strchr("bdfgmnprt", s->b[s->n - 1])) {
    /* a double after a lone first vowel stays: added -> add, ebbing -> ebb, offing -> off */
    if (!(s->n == 3 && si_vowel(s->b[0]))) si_set(s, 1, "");
  } else if (si_is_short_word(s)) {
    si_set(s, 0, "e");
  }
}

static void si_step1c(SiStem *s) {
  if (s->n > 2 && (s->b[s->n - 1] == 'y' || s->b[s->n - 1] == 'Y') && !si_vowel(s->b[s->n - 2]))
    s->b[s->n - 1] = 'i';
}

/* Words the algorithm treats apart (its "exception1"). */
static const char *si_exception(const char *w, int n) {
  static const SiSuffix from[] = {SX("skis"), SX("skies"), SX("dying"), SX("lying"), SX("tying"), SX("idly"),
                                  SX("gently"), SX("ugly"), SX("early"), SX("only"), SX("singly"), SX("sky"),
                                  SX("news"), SX("howe"), SX("atlas"), SX("cosmos"), SX("bias"), SX("andes"),
                                  {NULL, 0}};
  static const char *const to[] = {"ski", "sky", "die", "lie", "tie", "idl", "gentl", "ugli", "earli",
                                   "onli", "singl", "sky", "news", "howe", "atlas", "cosmos", "bias", "andes",
                                   NULL};
  if (n > 6) return NULL;
  for (int i = 0; from[i].s; i++)
    if (from[i].n == n && from[i].s[0] == w[0] && memcmp(from[i].s, w, (size_t)n) == 0) return to[i];
  return NULL;
}

int slackindex_stem(const char *word, int n, char *out) {
  if (!word || !out || n <= 0) return 0;
  if (n > SI_STEM_MAX) n = SI_STEM_MAX;
  for (int i = 0; i < n; i++) {
    if (word[i] < 'a' || word[i] > 'z') {
      memcpy(out, word, (size_t)n);
      return n;
    }
  }
  if (n <= 2) {
    memcpy(out, word, (size_t)n);
    return n;
  }
  const char *special = si_exception(word, n);
  if (special) {
    int l = (int)strlen(special);
    memcpy(out, special, (size_t)l);
    return l;
  }
  SiStem s;
  memcpy(s.b, word, (size_t)n);
  s.n = n;
  s.b[n] = 0;
  for (int i = 0; i < n; i++)
    if (s.b[i] == 'y' && (i == 0 || si_vowel(s.b[i - 1]))) s.b[i] = 'Y';
  /* Prefixes whose R1 starts after them (general, community, arsenal, past, universe, lateral,
   * emergency, organic, internal), as in the current Snowball English. */
  static const SiSuffix prefixes[] = {SX("gener"), SX("commun"), SX("arsen"), SX("past"), SX("univers"),
                                      SX("later"), SX("emerg"), SX("organ"), SX("inter"), {NULL, 0}};
  s.r1 = -1;
  for (int i = 0; prefixes[i].s && s.r1 < 0; i++) {
    int l = prefixes[i].n;
    if (l <= s.n && s.b[0] == prefixes[i].s[0] && memcmp(s.b, prefixes[i].s, (size_t)l) == 0) s.r1 = l;
  }
  if (s.r1 < 0) s.r1 = si_region(s.b, s.n, 0);

  si_step1a(&s);
  /* "exception2": left as they are after step 1a */
  static const SiSuffix keep[] = {SX("inning"), SX("outing"), SX("canning"), SX("herring"), SX("earring"),
                                  SX("proceed"), SX("exceed"), SX("succeed"), {NULL, 0}};
  int kept = 0;
  for (int i = 0; keep[i].s; i++)
    if (keep[i].n == s.n && memcmp(keep[i].s, s.b, (size_t)s.n) == 0) kept = 1;
  if (!kept) {
    si_step1b(&s);
    si_step1c(&s);
  }
  for (int i = 0; i < s.n; i++)
    if (s.b[i] == 'Y') s.b[i] = 'y';
  memcpy(out, s.b, (size_t)s.n);
  return s.n;
}
