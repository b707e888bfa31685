// wisp's integer order for its WQ types on x86 (DotKernel::dot_invariant): per 32 values the exact
// dot of the unsigned codes with the int8 activation codes (kQ8_0Split), the zero-point taken out
// through the activation's code sums, 8 consecutive 32-value blocks in 8 float lanes. The order
// and its scalar form, which these reproduce bit for bit, are in dot_wq_blocks8.cpp.
//
// Unpacking (formats/FORMAT.md's bit planes): the 32 codes of run k of a group come from each plane
// as bytes. A plane of width w is L = G w / 8 bytes, value i at byte i % L, bits (i / L) w. When
// L >= 32 the run is 32 consecutive bytes, one load and one shift; when L < 32 (L = 4, 8, 16) the L
// bytes are broadcast and each L-byte chunk shifted by its own run's amount (one vpsrlvd). After a
// shift by s the low w bits of every byte are bits [s, s + w) of that byte (s + w <= 8), so one
// mask per plane finishes it; the high plane joins with one 16-bit shift and an OR (the byte's
// value stays below 2^(w0 + w1) <= 256).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "formats/wq_format.h"
#include "kernels/act_quant.h"
#include "kernels/x86/blocks8_dots-inl.h"  // block_sums8 (the zmm reduction) with AVX-512 VNNI
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// Run K (values 32K .. 32K + 31) of a plane of width W in a group of G values, as bytes.
template <int W, int G, int K>
inline __m256i wq_plane32(const std::uint8_t* plane) {
  constexpr int kL = G * W / 8;
  const __m256i mask = _mm256_set1_epi8(static_cast<char>((1 << W) - 1));
  if constexpr (kL >= 32) {
    constexpr int kShift = (32 * K / kL) * W;
    const __m256i v = load32(plane + (32 * K) % kL);
    if constexpr (W == 8) return v;
    return _mm256_and_si256(kShift == 0 ? v : _mm256_srli_epi16(v, kShift), mask);
  } else {
    constexpr int r0 = 32 * K / kL;  // the run of the first chunk
    __m256i v;
    if constexpr (kL == 16) {
      v = _mm256_broadcastsi128_si256(load16(plane));
    } else if constexpr (kL == 8) {
      std::int64_t q;
      std::memcpy(&q, plane, 8);
      v = _mm256_set1_epi64x(q);
    } else {
      static_assert(kL == 4);
      std::int32_t d;
      std::memcpy(&d, plane, 4);
      v = _mm256_set1_epi32(d);
    }
    // dword j lies in chunk 4 j / L, which holds run r0 + 4 j / L.
    const auto sh = [](int j) { return (r0 + 4 * j / kL) * W; };
    const __m256i shifts = _mm256_setr_epi32(sh(0), sh(1), sh(2), sh(3), sh(4), sh(5), sh(6), sh(7));
    return _mm256_and_si256(_mm256_srlv_epi32(v, shifts), mask);
  }
}

// Run K of a group's codes (planes: the block after its header) as 32 unsigned bytes.
template <int B, int G, int K>
inline __m256i wq_codes32(const std::uint8_t* planes) {
  using P = WqPlanes<B>;
  const __m256i lo = wq_plane32<P::W0, G, K>(planes);
  if constexpr (P::W1 == 0) {
    return lo;
  } else {
    const __m256i hi = wq_plane32<P::W1, G, K>(planes + G * P::W0 / 8);
    return _mm256_or_si256(lo, _mm256_slli_epi16(hi, P::W0));
  }
}

// Whether the block dots use VNNI's vpdpbusd (exact for any unsigned byte) instead of maddubs.
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
constexpr bool kWqVnni = true;
#else
constexpr bool kWqVnni = false;
#endif

// Without VNNI the 8-bit codes (up to 255) would saturate maddubs' pair sums, so they are taken as
// q - 128 (signed) with the sign trick (|x| times a with x's sign, pairs <= 2 * 128 * 127) and the
// 128 goes out with the zero-point through the activation sums: sum(q a) - z sum(a) = sum((q - 128)
// a) - (z - 128) sum(a). The codes of the other widths (<= 63) keep maddubs' pairs <= 16002.
template <int B>
constexpr bool kWqSigned = B == 8 && !kWqVnni;
template <int B>
constexpr int kWqZeroShift = kWqSigned<B> ? 128 : 0;

// The 8 int32 lanes of one 32-value block: codes q (unsigned bytes) times activation codes a.
template <int B>
inline __m256i wq_block_lanes(__m256i q, __m256i a) {
  if constexpr (kWqVnni) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), q, a);
  } else if constexpr (kWqSigned<B>) {
    const __m256i x = _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80)));
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(a, x)),
                             _mm256_set1_epi16(1));
  } else {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(q, a), _mm256_set1_epi16(1));
  }
}

// Lane k = the sum of the 8 int32 lanes of p[k] (exact).
inline __m256i wq_sum32x8(const __m256i (&p)[8]) {
  const __m256i h01 = _mm256_hadd_epi32(p[0], p[1]), h23 = _mm256_hadd_epi32(p[2], p[3]);
  const __m256i h45 = _mm256_hadd_epi32(p[4], p[5]), h67 = _mm256_hadd_epi32(p[6], p[7]);
  const __m256i a = _mm256_hadd_epi32(h01, h23), b = _mm256_hadd_epi32(h45, h67);
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

template <int N, class F>
inline void wq_static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }
  (std::make_integer_sequence<int, N>{});
}

#if defined(WISP_BLOCKS8_ZMM)
// The 8 lanes' group headers of one full step without a gather (slow on this class of CPU): the
// step's dwords (a header is dword g * kBlock / 4; steps of at most 256 bytes) in up to four
// masked 64-byte loads that stop at the step's end, and one or two dword permutes.
template <int B, int G>
inline __m256i wq_headers8_zmm(const std::uint8_t* blk) {
  constexpr int kRuns = G / 32, kGroups = 8 / kRuns;
  constexpr int kD = static_cast<int>(wq_block_bytes(B, G)) / 4, kStepD = kD * kGroups;
  constexpr int kMaxIdx = (kGroups - 1) * kD;
  static_assert(kStepD <= 64);
  const auto ld = [&](int i) {
    const int cnt = kStepD - 16 * i < 0 ? 0 : kStepD - 16 * i > 16 ? 16 : kStepD - 16 * i;
    return _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << cnt) - 1), blk + 64 * i);
  };
  const __m512i idx = _mm512_setr_epi32(0, 1 / kRuns * kD, 2 / kRuns * kD, 3 / kRuns * kD, 4 / kRuns * kD,
                                        5 / kRuns * kD, 6 / kRuns * kD, 7 / kRuns * kD, 0, 0, 0, 0, 0, 0, 0, 0);
  __m512i h = _mm512_permutex2var_epi32(ld(0), idx, ld(1));
  if constexpr (kMaxIdx >= 32) {
    const __m512i hi = _mm512_permutex2var_epi32(ld(2), idx, ld(3));
    h = _mm512_mask_blend_epi32(_mm512_cmpge_epi32_mask(idx, _mm512_set1_epi32(32)), h, hi);
  }
  return _mm512_castsi512_si256(h);
}
#endif

// One step of dot_wq_blocks8: activation blocks b0 .. b0 + m - 1 (m = 8, or fewer in the row's
// last step: whole groups; lanes past m give isum = 0 and scale 0, so fma(0, 0, acc) leaves acc
// as it is: acc starts at +0 and never becomes -0 under round-to-nearest).
template <int B, int G, bool kTail>
inline __m256 wq_step(const std::uint8_t* blk, const Q8_0SplitRow& y, std::int64_t b0, int m, __m256 acc) {
  constexpr int kRuns = G / 32;  // activation blocks per group
  constexpr int kGroups = 8 / kRuns;
  constexpr int kBlock = static_cast<int>(wq_block_bytes(B, G));
#if defined(WISP_BLOCKS8_ZMM)
  // Two blocks per vpdpbusd in zmm and blocks8_dots512-inl.h's shuffle tree for the 8 sums (the
  // same exact integers as the ymm form below).
  __m256i c[8];
  for (int g = 0; g < kGroups; ++g) {
    if (kTail && g * kRuns >= m) {
      for (int k = 0; k < kRuns; ++k) c[g * kRuns + k] = _mm256_setzero_si256();
      continue;
    }
    const std::uint8_t* planes = blk + g * kBlock + kWqHeaderBytes;
    wq_static_for<kRuns>([&](auto kc) {
      constexpr int k = decltype(kc)::value;
      c[g * kRuns + k] = wq_codes32<B, G, k>(planes);
    });
  }
  __m512i s[4];
  const std::int8_t* q = y.qs + b0 * 32;
  for (int j = 0; j < 4; ++j) {
    // The tail's activation codes past the row are masked off (never read).
    const __m512i av = kTail ? _mm512_maskz_loadu_epi8(j * 64 >= 32 * m        ? 0
                                                       : j * 64 + 64 <= 32 * m ? ~__mmask64{0}
                                                                               : (__mmask64{1} << 32) - 1,
                                                       q + 64 * j)
                             : _mm512_loadu_si512(q + 64 * j);
    s[j] = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                               _mm512_inserti64x4(_mm512_castsi256_si512(c[2 * j]), c[2 * j + 1], 1), av);
  }
  const __m256i dots = block_sums8(s[0], s[1], s[2], s[3]);
#else
  __m256i p[8];
  for (int g = 0; g < kGroups; ++g) {
    if (kTail && g * kRuns >= m) {
      for (int k = 0; k < kRuns; ++k) p[g * kRuns + k] = _mm256_setzero_si256();
      continue;
    }
    const std::uint8_t* planes = blk + g * kBlock + kWqHeaderBytes;
    const std::int8_t* ag = y.qs + (b0 + g * kRuns) * 32;
    wq_static_for<kRuns>([&](auto kc) {
      constexpr int k = decltype(kc)::value;
      p[g * kRuns + k] = wq_block_lanes<B>(wq_codes32<B, G, k>(planes), load32(ag + 32 * k));
    });
  }
  const __m256i dots = wq_sum32x8(p);
#endif
  // Each lane's group header (s in the low half, z in byte 2) by one gather.
  const __m256i at = _mm256_setr_epi32(0, 1 / kRuns * kBlock, 2 / kRuns * kBlock, 3 / kRuns * kBlock,
                                       4 / kRuns * kBlock, 5 / kRuns * kBlock, 6 / kRuns * kBlock, 7 / kRuns * kBlock);
  __m256i hdr, sy;
  __m256 dy;
  if constexpr (kTail) {
    const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(m), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    hdr = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), reinterpret_cast<const int*>(blk), at, live, 1);
    dy = _mm256_maskload_ps(y.d + b0, live);
    sy = _mm256_maskload_epi32(y.sum + b0, live);
  } else {
#if defined(WISP_BLOCKS8_ZMM)
    if constexpr (wq_block_bytes(B, G) * (256 / G) <= 256) {  // the step (256 values) in at most 256 bytes
      hdr = wq_headers8_zmm<B, G>(blk);
    } else {
      hdr = _mm256_i32gather_epi32(reinterpret_cast<const int*>(blk), at, 1);
    }
#else
    hdr = _mm256_i32gather_epi32(reinterpret_cast<const int*>(blk), at, 1);
#endif
    dy = _mm256_loadu_ps(y.d + b0);
    sy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.sum + b0));
  }
  // -z' as the low int16 of each lane (0 above), so one madd gives -z' * sum exactly.
  const __m256i z = _mm256_and_si256(_mm256_srli_epi32(hdr, 16), _mm256_set1_epi32(0xff));
  const __m256i negz =
      _mm256_and_si256(_mm256_sub_epi32(_mm256_set1_epi32(kWqZeroShift<B>), z), _mm256_set1_epi32(0xffff));
  const __m256i isum = _mm256_add_epi32(dots, _mm256_madd_epi16(negz, sy));
  // The 8 half scales: the low two bytes of every dword, packed into the low 128 bits.
  const __m256i halves =
      _mm256_shuffle_epi8(hdr, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8,
                                                9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1));
  const __m256 sx = _mm256_cvtph_ps(_mm256_castsi256_si128(_mm256_permute4x64_epi64(halves, 0x08)));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(sx, dy), acc);
}

template <int B, int G>
float dot_wq_blocks8(const void* w, const void* a, std::int64_t n) {
  constexpr int kRuns = G / 32;
  constexpr std::int64_t kStep = static_cast<std::int64_t>(wq_block_bytes(B, G)) * (8 / kRuns);  // 8 blocks' bytes
  const auto* blocks = static_cast<const std::uint8_t*>(w);
  const Q8_0SplitRow y = q8_0_split_row(a, n);
  const std::int64_t nb = n / 32;
  __m256 acc = _mm256_setzero_ps();
  std::int64_t b0 = 0;
  for (; b0 + 8 <= nb; b0 += 8) {
    const std::uint8_t* blk = blocks + b0 / 8 * kStep;
    prefetch_ahead(blk, static_cast<std::size_t>(kStep));
    acc = wq_step<B, G, false>(blk, y, b0, 8, acc);
  }
  if (b0 < nb) acc = wq_step<B, G, true>(blocks + b0 / 8 * kStep, y, b0, static_cast<int>(nb - b0), acc);
  return hsum8(acc);
}

}  // namespace
}  // namespace wisp::kernels::x86
