// Byte layouts of the GGML block types, exactly as GGUF stores them (little-endian, no padding).
//
// A quantized row is a sequence of blocks; each block holds the codes of a fixed number of values
// and the scales that turn codes back into floats. Fields named `d`, `m`, `dmin` are IEEE half
// floats kept as raw bits (convert with formats/half.h). Block sizes are even but for MXFP4's
// 17 bytes, and GGUF aligns tensor data, so most blocks start 2-byte aligned in a file; code that
// may see arbitrary pointers should memcpy a block rather than cast.
//
// Value order inside a block is the part that is easy to get wrong; each struct says it. "Element
// j" is the j-th value of the block in row order.
#pragma once

#include <bit>
#include <cstdint>

namespace wisp {

inline constexpr int kQK = 32;     // values per block of the "legacy" types (Q4_0 .. Q8_0)
inline constexpr int kQK_K = 256;  // values per super-block of the K-quants

// Q4_0: 4-bit codes q in [0, 15], value = d * (q - 8). Symmetric: no zero-point field, the
// offset 8 is implied. Element j < 16 is the low nibble of qs[j], element j + 16 the high nibble
// (halves, not interleaved pairs, so a SIMD unpack of 16 bytes yields two contiguous halves).
struct BlockQ4_0 {
  std::uint16_t d;
  std::uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q4_1: 4-bit codes q in [0, 15], value = d * q + m (m is the block minimum). Nibble order as Q4_0.
struct BlockQ4_1 {
  std::uint16_t d;
  std::uint16_t m;
  std::uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_0: 5-bit codes q in [0, 31], value = d * (q - 16). The low 4 bits are nibbles in Q4_0 order;
// bit j of qh (a little-endian uint32, stored as bytes because the block is only 2-aligned) is
// bit 4 of element j.
struct BlockQ5_0 {
  std::uint16_t d;
  std::uint8_t qh[4];
  std::uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

// Q5_1: 5-bit codes, value = d * q + m; bit layout as Q5_0.
struct BlockQ5_1 {
  std::uint16_t d;
  std::uint16_t m;
  std::uint8_t qh[4];
  std::uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// Q8_0: signed 8-bit codes, value = d * q. Element j is qs[j].
struct BlockQ8_0 {
  std::uint16_t d;
  std::int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

// The K-quants pack 256 values as 8 sub-blocks of 32 (Q4_K, Q5_K) or 16 sub-blocks of 16
// (Q2_K, Q3_K, Q6_K). Each sub-block has a small integer scale (and for some types a min)
// that multiplies the super-block's half-float d (dmin), so per-sub-block scales cost 4-8 bits.
//
// The low bits of the codes are laid out for 32-byte SIMD loads: within each 128-value half
// (Q2_K, Q3_K, Q6_K) or 64-value quarter (Q4_K, Q5_K), the n-th bit-plane group of a byte holds
// consecutive elements. Concretely, for a shift s and byte index l:
//   Q2_K: element 128*c + 32*s + l = (qs[32*c + l] >> 2s) & 3,  c in 0..1, s in 0..3
//   Q4_K: element  64*c + 32*s + l = (qs[32*c + l] >> 4s) & 15, c in 0..3, s in 0..1
// and the high bits (Q3_K hmask, Q5_K qh) are bit-planes over the whole super-block:
//   element 32*s + l takes bit s of hmask[l] / qh[l], s in 0..7.

// Q2_K: 2-bit codes q, 16 sub-blocks of 16. scales[i] holds the sub-block's 4-bit scale (low
// nibble) and 4-bit min (high nibble): value = (d * sc) * q - (dmin * mn).
struct BlockQ2_K {
  std::uint8_t scales[kQK_K / 16];
  std::uint8_t qs[kQK_K / 4];
  std::uint16_t d;
  std::uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// Q3_K: 3-bit codes: 2 low bits in qs (Q2_K order), the third bit in hmask where a SET bit means
// no offset and a CLEAR bit subtracts 4: q = low - (hbit ? 0 : 4), in [-4, 3]. 16 sub-blocks of 16
// with signed 6-bit scales (stored biased by 32) packed into 12 bytes:
//   low 4 bits of scale k: k < 8 ? scales[k] & 15 : scales[k - 8] >> 4
//   high 2 bits of scale k: (scales[8 + k % 4] >> (2 * (k / 4))) & 3
// value = (d * (sc - 32)) * q.
struct BlockQ3_K {
  std::uint8_t hmask[kQK_K / 8];
  std::uint8_t qs[kQK_K / 4];
  std::uint8_t scales[12];
  std::uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// The 6-bit scale/min pairs of Q4_K and Q5_K, 8 of each in 12 bytes. For sub-block j < 4 the
// scale and min are the low 6 bits of bytes j and j + 4; for j >= 4 their low 4 bits are the
// nibbles of byte j + 4 (scale low, min high) and their top 2 bits are the spare top bits of
// bytes j - 4 (scale) and j (min).
inline constexpr int kKScaleBytes = 12;

// Q4_K: 4-bit codes q in [0, 15], 8 sub-blocks of 32, value = (d * sc) * q - (dmin * mn).
struct BlockQ4_K {
  std::uint16_t d;
  std::uint16_t dmin;
  std::uint8_t scales[kKScaleBytes];
  std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q5_K: Q4_K plus a fifth code bit per value in the qh bit-planes; q in [0, 31].
struct BlockQ5_K {
  std::uint16_t d;
  std::uint16_t dmin;
  std::uint8_t scales[kKScaleBytes];
  std::uint8_t qh[kQK_K / 8];
  std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

// Q6_K: 6-bit codes stored biased by 32, 16 sub-blocks of 16 with signed 8-bit scales:
// value = (d * sc) * (q - 32). Per 128-value half c (c in 0..1) and l in 0..63, s in 0..3:
//   low 4 bits:  element 128*c + 64*s + l = (ql[64*c + l] >> 4s) & 15,  s in 0..1
//   high 2 bits: element 128*c + 32*s + l = (qh[32*c + l] >> 2s) & 3,   l in 0..31
struct BlockQ6_K {
  std::uint8_t ql[kQK_K / 2];
  std::uint8_t qh[kQK_K / 4];
  std::int8_t scales[kQK_K / 16];
  std::uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// ---- The non-linear and ternary types (IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4) ---------------------

// IQ4_NL's 16 code values: a non-uniform grid (denser near zero), value = d * kIq4NlValues[q].
// Also the codebook of IQ4_XS. The numbers are the type's definition (gguf.quants.IQ4_NL.kvalues).
inline constexpr std::int8_t kIq4NlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                 1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_NL: 32 values, 4-bit indices into kIq4NlValues, nibble order as Q4_0 (element j < 16 the
// low nibble of qs[j], j + 16 the high nibble).
struct BlockIQ4_NL {
  std::uint16_t d;
  std::uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// IQ4_XS: 256 values as 8 sub-blocks of 32, each an IQ4_NL block without its own d: a 6-bit
// scale (stored biased by 32) whose low 4 bits are nibble s % 2 of scales_l[s / 2] and high 2 bits
// are bits 2s, 2s + 1 of scales_h. value = (d * (sc - 32)) * kIq4NlValues[q]; element 32s + j takes
// the low nibble of qs[16s + j] (j < 16) or the high nibble of qs[16s + j - 16].
struct BlockIQ4_XS {
  std::uint16_t d;
  std::uint16_t scales_h;
  std::uint8_t scales_l[kQK_K / 64];
  std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

// TQ1_0: ternary values {-1, 0, 1} * d, five trits per byte (1.6875 bits per weight). A byte b
// holds trits as a base-3 fraction scaled to 256: trit p (p = 0 first) of b is
// ((uint8(b * 3^p) * 3) >> 8), minus 1. Element order: qs[0..31] give elements 32p + j (p < 5),
// qs[32..47] elements 160 + 16p + j, qh[0..3] (four trits each) elements 240 + 4p + j.
struct BlockTQ1_0 {
  std::uint8_t qs[(kQK_K - 4 * kQK_K / 64) / 5];
  std::uint8_t qh[kQK_K / 64];
  std::uint16_t d;
};
static_assert(sizeof(BlockTQ1_0) == 54);

// TQ2_0: ternary values with 2-bit codes q in {0, 1, 2}, value = d * (q - 1); element
// 128c + 32s + j = (qs[32c + j] >> 2s) & 3 (Q2_K's bit-plane order).
struct BlockTQ2_0 {
  std::uint8_t qs[kQK_K / 4];
  std::uint16_t d;
};
static_assert(sizeof(BlockTQ2_0) == 66);

// MXFP4's codes: E2M1 floats doubled so they are integers (value = half_scale * kMxfp4Values[q]).
inline constexpr std::int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// MXFP4 (OCP microscaling): 32 values, 4-bit E2M1 codes in Q4_0's nibble order and one E8M0 shared
// exponent e: value = 2^(e - 128) * kMxfp4Values[q] (half of 2^(e - 127), because the values are
// doubled). 17 bytes: blocks are byte-aligned only.
struct BlockMXFP4 {
  std::uint8_t e;
  std::uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockMXFP4) == 17);

// 2^(e - 128) as ggml computes it (ggml_e8m0_to_fp32_half): subnormal for e < 2.
inline float e8m0_to_f32_half(std::uint8_t e) {
  const std::uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<std::uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

// NVFP4: 64 values in four sub-blocks of 16, each with its own unsigned E4M3 scale byte d[s]
// (bias 7, no sign; 0x00 and 0x7F read as zero) and MXFP4's doubled E2M1 codes. Sub-block s's
// codes are qs[8s .. 8s+7]: value 16s + j in the low nibble of qs[8s + j], value 16s + 8 + j in
// the high one. value = ue4m3_to_f32_half(d[s]) * kMxfp4Values[q]. 36 bytes.
inline constexpr int kQK_NVFP4 = 64;
inline constexpr int kQK_NVFP4_Sub = 16;
struct BlockNVFP4 {
  std::uint8_t d[kQK_NVFP4 / kQK_NVFP4_Sub];
  std::uint8_t qs[kQK_NVFP4 / 2];
};
static_assert(sizeof(BlockNVFP4) == 36);

// Half the unsigned E4M3 value of x, as ggml computes it (ggml_ue4m3_to_fp32): exponent 0 is
// subnormal (man * 2^-9), 0x00 and 0x7F (the NaN pattern of E4M3) are zero, the top bit is not
// part of the format and is ignored except that 0xFF is not 0x7F. Every result is exact in float.
inline float ue4m3_to_f32_half(std::uint8_t x) {
  if (x == 0 || x == 0x7F) return 0.0f;
  const int exp = (x >> 3) & 0xF;
  const int man = x & 0x7;
  // man * 2^-10 for exp 0, (8 + man) * 2^(exp - 11) otherwise: the 0.5 folded in, both exact.
  const float raw =
      exp == 0 ? static_cast<float>(man) : static_cast<float>(8 + man) * static_cast<float>(1 << (exp - 1));
  return raw * (1.0f / 1024.0f);
}

// ---- The grid types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) ----------------------
// Each stores, per group of 8 (IQ2, IQ1) or 4 (IQ3) values, an index into a fixed codebook of
// magnitudes (formats/blocks/iq_grids.h) and, for IQ2/IQ3, signs; scales per 16 or 32 values
// multiply a half d. Element 8i + j (4i + j for IQ3) is value j of grid entry i of the block.

// IQ2_XXS: per 32 values two little-endian uint32 a0, a1 in qs: the bytes of a0 are 4 grid indices
// (kIq2XxsGrid), a1 >> 28 the scale ls, (a1 >> 7l) & 127 the sign pattern index of group l.
// value = (d * (0.5 + ls) * 0.25) * grid * sign.
struct BlockIQ2_XXS {
  std::uint16_t d;
  std::uint16_t qs[kQK_K / 8];
};
static_assert(sizeof(BlockIQ2_XXS) == 66);

// IQ2_XS: per 8 values a uint16: low 9 bits a kIq2XsGrid index, high 7 a sign pattern index; a
// 4-bit scale per 16 values (nibble k % 2 of scales[k / 2]), value = (d * (0.5 + s) * 0.25) * ...
struct BlockIQ2_XS {
  std::uint16_t d;
  std::uint16_t qs[kQK_K / 8];
  std::uint8_t scales[kQK_K / 32];
};
static_assert(sizeof(BlockIQ2_XS) == 74);

// IQ2_S: grid index (kIq2SGrid, 10 bits) = qs[i] | ((qh[i / 4] >> 2 (i % 4)) & 3) << 8; plain sign
// bits (bit j of signs[i] for value 8i + j); scales as IQ2_XS.
struct BlockIQ2_S {
  std::uint16_t d;
  std::uint8_t qs[kQK_K / 8];
  std::uint8_t signs[kQK_K / 8];
  std::uint8_t qh[kQK_K / 32];
  std::uint8_t scales[kQK_K / 32];
};
static_assert(sizeof(BlockIQ2_S) == 82);

// IQ3_XXS: qs[0..63] are kIq3XxsGrid indices (4 values each); then per 32 values a uint32 whose
// top 4 bits are the scale ls and 4 x 7 bits the sign pattern indices of its 8-value groups.
// value = (d * (0.5 + ls) * 0.5) * grid * sign.
struct BlockIQ3_XXS {
  std::uint16_t d;
  std::uint8_t qs[3 * kQK_K / 8];
};
static_assert(sizeof(BlockIQ3_XXS) == 98);

// IQ3_S: grid index (kIq3SGrid, 9 bits) = qs[i] | ((qh[i / 8] >> (i % 8)) & 1) << 8; plain sign
// bits; a 4-bit scale per 32 values (nibble k % 2 of scales[k / 2]), value = (d * (1 + 2s)) * ...
struct BlockIQ3_S {
  std::uint16_t d;
  std::uint8_t qs[kQK_K / 4];
  std::uint8_t qh[kQK_K / 32];
  std::uint8_t signs[kQK_K / 8];
  std::uint8_t scales[kQK_K / 64];
};
static_assert(sizeof(BlockIQ3_S) == 110);

// IQ1_S: per 32 values a uint16 qh: bits 3l..3l+2 extend group l's grid index (kIq1SGrid, 11
// bits: qs[4 ib + l] | those << 8), bits 12..14 the scale s, bit 15 the sign of the shift delta.
// value = (d * (2s + 1)) * (grid + delta), delta = +-0.125.
struct BlockIQ1_S {
  std::uint16_t d;
  std::uint8_t qs[kQK_K / 8];
  std::uint16_t qh[kQK_K / 32];
};
static_assert(sizeof(BlockIQ1_S) == 50);

// IQ1_M: no d field: the half d is the top nibbles of the four uint16 of scales (scales[0] >> 12
// its low 4 bits .. scales[3] >> 12 its top 4). 3-bit scale k (per 16 values) is
// (scales[k / 4] >> 3 (k % 4)) & 7; per 8 values i a nibble of qh (qh[i / 2] >> 4 (i % 2)): low 3 bits
// extend the grid index, bit 3 the delta sign. value = (d * (2s + 1)) * (grid + delta).
struct BlockIQ1_M {
  std::uint8_t qs[kQK_K / 8];
  std::uint8_t qh[kQK_K / 16];
  std::uint16_t scales[kQK_K / 64];
};
static_assert(sizeof(BlockIQ1_M) == 56);

}  // namespace wisp
