// Encoding and decoding of one cached K or V head vector (a "row": head_dim values) in each
// KvType's byte layout (kv_type.h). The pool encodes a row as the model writes it; attention
// decodes rows a chunk at a time into a small float scratch as it reads them (f16 rows it reads in
// place), so the cache is never copied to f32 as a whole.
//
// q8_0 is GGML's Q8_0 block exactly (so a q8_0 cache means what llama.cpp's -ctk q8_0 means):
//   d = max|x| / 127, q = round-half-away(x / d) in [-127, 127], bytes [f16 d][32 x int8].
// q4 follows DESIGN.md's conventions (formats/wq_format.h: wq_stored_params), per group of 32:
//   range [min(r_min, 0), max(r_max, 0)], s = range / 15 stored in f16, z = clip(round(-r_min/s),
//   0, 15), q = clip(round(r/s) + z, 0, 15), round half up; a constant group keeps its value (as
//   one code step of s = |c|). Bytes [f16 s][f16 z][16 bytes: byte j = code j | code (j+16) << 4].
//   Dequantize: r = s * (q - z); in-range error at most s/2.
// A partial last group (head_dim not a multiple of 32) is padded with zeros, which decode to
// nothing (only the first n values are written out).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kv/kv_type.h"

namespace wisp {

// Encodes n floats into kv_type_info(t).bytes_for(n) bytes at out.
void kv_encode_row(KvType t, const float* x, std::int64_t n, std::byte* out);
// Decodes the n values of a row encoded by kv_encode_row.
void kv_decode_row(KvType t, const std::byte* row, std::int64_t n, float* out);

// The decoder of one type as a plain function, for kernels that know rows only as bytes.
using KvRowDecoder = void (*)(const std::byte* row, float* out, std::int64_t n);
KvRowDecoder kv_row_decoder(KvType t);

}  // namespace wisp
