#ifndef SLACK_BYTES_H
#define SLACK_BYTES_H

#include <stdint.h>

/*
 * Tests of the eight bytes of a word at once (Bit Twiddling Hacks' `haszero` and `hasless`), as flags: the high bit
 * of a byte is set where the byte matches, and may be set above a matching byte too (a borrow), never elsewhere. So
 * flags ORed together and kept by `slack_bytes_highs` answer "does any byte match" exactly, in either byte order, and
 * in a little-endian load the lowest flag is the first matching byte.
 *
 * `static inline` in a header so that both Swift modules that scan bytes (the importer's JSON cursor and the
 * store's packing) get them inlined: a Swift function shared across the two modules was called, not inlined, even
 * marked `@inlinable @inline(__always)` (callgrind of the 100k import: the reader 9.32 -> 10.40 G instructions).
 */

/* Flags the bytes of `word` below `bound` (at most 128). */
static inline uint64_t slack_bytes_below(uint64_t word, uint8_t bound) {
  return (word - 0x0101010101010101ULL * bound) & ~word;
}

/* Flags the bytes of `word` equal to `value`. */
static inline uint64_t slack_bytes_equal(uint64_t word, uint8_t value) {
  return slack_bytes_below(word ^ (0x0101010101010101ULL * value), 1);
}

/* Flags the quotes and backslashes of `word`: the bytes a JSON string's scan stops at. */
static inline uint64_t slack_bytes_quote_or_backslash(uint64_t word) {
  return slack_bytes_equal(word, '"') | slack_bytes_equal(word, '\\');
}

/* Flags the bytes a JSON string cannot hold as they are: quotes, backslashes and control bytes. */
static inline uint64_t slack_bytes_json_special(uint64_t word) {
  return slack_bytes_quote_or_backslash(word) | slack_bytes_below(word, 0x20);
}

/* The flags' bits, the other bits cleared: nonzero when a byte matched. */
static inline uint64_t slack_bytes_highs(uint64_t flags) {
  return flags & 0x8080808080808080ULL;
}

#endif
