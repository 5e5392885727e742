// The part of libdeflate's API slackindex uses, declared here so that the build needs only Debian's runtime
// library (`libdeflate0`, on a fresh machine of our kind), not its headers (`libdeflate-dev`, not there: the
// README's first command failed with "'libdeflate.h' file not found", issue 48). These are libdeflate's stable
// v1 declarations (libdeflate.h of 1.0 to 1.22: the same prototypes and enum values); the library is linked by
// its soname, `libdeflate.so.0`, which carries them.
#ifndef CSLACKDEFLATE_SHIM_H
#define CSLACKDEFLATE_SHIM_H

#include <stddef.h>
#include <stdint.h>

struct libdeflate_compressor;
struct libdeflate_decompressor;

enum libdeflate_result {
    LIBDEFLATE_SUCCESS = 0,
    LIBDEFLATE_BAD_DATA = 1,
    LIBDEFLATE_SHORT_OUTPUT = 2,
    LIBDEFLATE_INSUFFICIENT_SPACE = 3,
};

struct libdeflate_compressor *libdeflate_alloc_compressor(int compression_level);
size_t libdeflate_zlib_compress(struct libdeflate_compressor *compressor, const void *in, size_t in_nbytes,
                                void *out, size_t out_nbytes_avail);
size_t libdeflate_zlib_compress_bound(struct libdeflate_compressor *compressor, size_t in_nbytes);
void libdeflate_free_compressor(struct libdeflate_compressor *compressor);

struct libdeflate_decompressor *libdeflate_alloc_decompressor(void);
enum libdeflate_result libdeflate_deflate_decompress(struct libdeflate_decompressor *decompressor, const void *in,
                                                     size_t in_nbytes, void *out, size_t out_nbytes_avail,
                                                     size_t *actual_out_nbytes_ret);
enum libdeflate_result libdeflate_zlib_decompress(struct libdeflate_decompressor *decompressor, const void *in,
                                                  size_t in_nbytes, void *out, size_t out_nbytes_avail,
                                                  size_t *actual_out_nbytes_ret);
void libdeflate_free_decompressor(struct libdeflate_decompressor *decompressor);

uint32_t libdeflate_crc32(uint32_t crc, const void *buffer, size_t len);

#endif
