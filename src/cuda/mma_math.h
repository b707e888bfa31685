// What the tensor-core prefill matmul (matmul_mma.cu) needs beyond block_math.h, as host+device
// inline functions so the host tests emulate it (tests/unit/cuda/test_mma_order.cpp):
//   - the weight codes as int8 for the mma operand, with an integer bias that makes the block
//     dot the same exact integer as block_math.h's chunk_isums;
//   - the order in which the decode kernel's warp adds its 32 lane sums (a butterfly of
//     xor-shuffles), rewritten as a sum over "slots" that one thread can run sequentially.
//
// Why this gives bit-identical results: the decode kernel computes, per (row, token),
//   lane l's sum  P_l = ((0 + d(l)) + d(l + 32)) + ...   over its chunks l, l + 32, ...
//   the output       = the xor-shuffle tree over P_0 .. P_31 (lane 0's value),
// where d(c) = chunk_dot_isums(chunk c's scales, its activation, its integer half dots). The mma
// kernel gets the same integer half dots from the tensor cores, forms the same d(c) with the same
// function, the same P_l in the same chunk order, and adds the P_l with SlotTreeSum, which is the
// same tree (float addition is commutative, so only the tree's shape matters). Same operations on
// the same operands: the same bits, whatever number of tokens a step has.
#pragma once

#include <cstdint>

#include "cuda/block_math.h"

namespace wisp::cuda {

inline constexpr int kLanes = 32;

// The lane whose partial sum the tree takes in position `slot` (the 5-bit reversal of slot): the
// xor tree's first level adds lanes l and l ^ 16, its second level l and l ^ 8 of those, ...; in
// bit-reversed order every level's pairs are neighbours, so the tree is a plain binary counter.
WISP_HD int slot_lane(int slot) {
  return ((slot & 1) << 4) | ((slot & 2) << 2) | (slot & 4) | ((slot & 8) >> 2) | ((slot & 16) >> 4);
}

// The decode kernel's shuffle tree over 32 lane sums, fed one lane sum at a time in slot order
// (add(0, P[slot_lane(0)]), add(1, P[slot_lane(1)]), ...); total holds the sum after slot 31.
// Every array index is a compile-time constant once the level loop is unrolled, so on the device
// the levels stay in registers.
struct SlotTreeSum {
  float level[5];
  float total;

  WISP_HD void add(int slot, float v) {
    bool carry = true;  // v still has to be combined or stored
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < 5; ++k) {
      if (!carry) continue;
      if ((slot >> k) & 1) {
        v = hd_add(level[k], v);  // the finished left subtree of this level, plus v
      } else {
        level[k] = v;
        carry = false;
      }
    }
    if (carry) total = v;  // slot 31 completes the tree
  }
};

// A weight chunk's codes as int8 for the tensor cores: q[j] = code[j] + bias. Every GGML type's
// codes (block_math.h's WeightChunk::q, offsets applied) already fit int8, so bias is 0; a WQ
// chunk's q = code - zero-point spans at most 255 but may fall outside [-128, 127] (8-bit codes,
// or a zero-point above 127), and then bias moves it into range.
struct MmaCodes {
  std::int8_t q[kChunk];
  std::int32_t bias;
};

WISP_HD void mma_codes(const WeightChunk& w, MmaCodes& m) {
  int lo = w.q[0], hi = w.q[0];
  for (int j = 1; j < kChunk; ++j) {
    lo = w.q[j] < lo ? w.q[j] : lo;
    hi = w.q[j] > hi ? w.q[j] : hi;
  }
  m.bias = (lo >= -128 && hi <= 127) ? 0 : lo + 128;
  for (int j = 0; j < kChunk; ++j) m.q[j] = static_cast<std::int8_t>(w.q[j] - m.bias);
}

// The exact integer dot of each 16-value half from the int8 codes' dot (what one m16n8k16 mma
// gives per (row, token) and half) and the bias: sum_j (code_j + bias) a_j = dot + bias * sum_j a_j.
// Integers, so it equals chunk_isums exactly (no partial sum exceeds 16 * 255 * 128 in magnitude).
WISP_HD std::int32_t biased_isum(std::int32_t code_dot, std::int32_t bias, std::int32_t act_sum) {
  return code_dot + bias * act_sum;
}

// The host's stand-in for the tensor cores: the int8 codes' dot over half h.
WISP_HD std::int32_t code_dot_half(const MmaCodes& m, const ActChunk& a, int h) {
  std::int32_t s = 0;
  for (int j = 16 * h; j < 16 * h + 16; ++j) s += static_cast<std::int32_t>(m.q[j]) * a.q[j];
  return s;
}

}  // namespace wisp::cuda
