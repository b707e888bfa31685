// The multi-output dots (kernels/multi_dots.h) against the one-row scalar references they stand
// in for: every output bit-identical, for every ISA this CPU runs, every type and slot with a
// variant, row lengths of one block to many, and activations with ties and extremes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "formats/wq_format.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/matmul.h"
#include "kernels/multi_dots.h"
#include "core/thread_pool.h"
#include "random_blocks.h"
#include "wisp/error.h"

namespace wisp {
namespace {

kernels::DotFn slot_fn(const kernels::DotKernel& k, kernels::DotSlot s) {
  switch (s) {
    case kernels::DotSlot::kDot: return k.dot;
    case kernels::DotSlot::kBatched: return k.dot_batched;
    case kernels::DotSlot::kRepacked: return k.dot_repacked;
    case kernels::DotSlot::kRepackedX4: return k.dot_repacked_x4;
    case kernels::DotSlot::kInvariant: return k.dot_invariant;
  }
  return nullptr;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// wisp's own order has no entry in the scalar table (the scalar path runs llama.cpp's order): the
// scalar form of a type's dot_invariant, and its activation format.
kernels::DotFn invariant_scalar_form(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_0: return kernels::scalar::dot_q4_0_blocks8;
    case GgmlType::kQ4_1: return kernels::scalar::dot_q4_1_blocks8;
    case GgmlType::kQ5_0: return kernels::scalar::dot_q5_0_blocks8;
    case GgmlType::kQ5_1: return kernels::scalar::dot_q5_1_blocks8;
    case GgmlType::kQ8_0: return kernels::scalar::dot_q8_0_blocks8;
    case GgmlType::kQ2_K: return kernels::scalar::dot_q2_k_super8;
    case GgmlType::kQ3_K: return kernels::scalar::dot_q3_k_super8;
    case GgmlType::kQ4_K: return kernels::scalar::dot_q4_k_super8;
    case GgmlType::kQ5_K: return kernels::scalar::dot_q5_k_super8;
    case GgmlType::kQ6_K: return kernels::scalar::dot_q6_k_super8;
    case GgmlType::kIQ4_NL: return kernels::scalar::dot_iq4_nl_blocks8;
    case GgmlType::kMXFP4: return kernels::scalar::dot_mxfp4_blocks8;
    case GgmlType::kIQ4_XS: return kernels::scalar::dot_iq4_xs_super8;
    default: return kernels::scalar::dot_wq_blocks8_form(static_cast<std::uint32_t>(t));  // null unless WQ
  }
}
kernels::ActFormat invariant_act(GgmlType t) {
  return block_type(t).block_elems == kQK_K ? kernels::ActFormat::kQ8_K : kernels::ActFormat::kQ8_0Split;
}

// Random WQ blocks with sane headers: a moderate f16 scale, a zero-point within the code range,
// the reserved byte 0 (random scale bytes would make infinities and NaNs).
void fix_wq_headers(std::uint32_t id, std::vector<std::uint8_t>& bytes, std::mt19937& rng) {
  const WqFormat f = wq_format(id);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  for (std::size_t off = 0; off + f.block_bytes() <= bytes.size(); off += f.block_bytes()) {
    const std::uint16_t h = f32_to_f16(scale(rng));
    bytes[off] = static_cast<std::uint8_t>(h & 0xff);
    bytes[off + 1] = static_cast<std::uint8_t>(h >> 8);
    bytes[off + 2] = static_cast<std::uint8_t>(rng() % static_cast<unsigned>(f.max_code() + 1));
    bytes[off + 3] = 0;
  }
}

// Four adversarial weight rows: random; edge scales (zero, subnormal, largest half, negative,
// signed zero) in every scale field; all code bytes 0x00; all code bytes 0xff (WQ: z at the
// largest code and at 0). Scales of the last two stay moderate.
std::vector<std::uint8_t> adversarial_rows(std::uint32_t id, std::int64_t n, std::mt19937& rng) {
  const BlockTypeInfo& info = *find_block_type(id);
  const std::size_t row_bytes = info.row_bytes(n);
  std::vector<std::uint8_t> out;
  const bool wq = is_wq_type(id);
  for (int kind = 0; kind < 4; ++kind) {
    auto row = test::random_matrix(static_cast<GgmlType>(id), 1, n, rng);
    if (!wq) {
      if (kind == 1) test::set_edge_scales(static_cast<GgmlType>(id), row);
      if (kind >= 2) test::fill_codes(static_cast<GgmlType>(id), row, kind == 2 ? 0x00 : 0xff);
    } else {
      // WQ blocks: [f16 s][u8 z][u8 0][planes]; z at the largest code under all-0x00 planes and at 0
      // under all-0xff planes.
      fix_wq_headers(id, row, rng);
      std::size_t e = 0;
      for (std::size_t blk = 0; blk < row_bytes / info.block_bytes; ++blk) {
        std::uint8_t* p = row.data() + blk * info.block_bytes;
        if (kind == 1) std::memcpy(p, &test::kEdgeHalves[e++ % 8], 2);
        if (kind >= 2) {
          std::memset(p + kWqHeaderBytes, kind == 2 ? 0x00 : 0xff, info.block_bytes - kWqHeaderBytes);
          p[2] = static_cast<std::uint8_t>(kind == 2 ? wq_format(id).max_code() : 0);
        }
      }
    }
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

// n_rows activation rows in format f: normal values, plus exact +-max ties and a zero block.
std::vector<std::uint8_t> activations(kernels::ActFormat f, std::int64_t n_rows, std::int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::size_t bytes = kernels::act_row_bytes(f, n);
  std::vector<std::uint8_t> out(bytes * static_cast<std::size_t>(n_rows));
  std::vector<float> x(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < n_rows; ++r) {
    for (auto& v : x) v = normal(rng);
    x[1] = 3.0f;
    x[2] = -3.0f;
    if (n >= 64 && r % 2 == 1) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);
    if (r == 3) x[0] = 1e4f;  // one huge value: the rest of its block quantizes to zeros
    kernels::convert_act_row(f, x.data(), out.data() + bytes * static_cast<std::size_t>(r), n);
  }
  return out;
}

TEST(MultiDots, EveryVariantEqualsTheScalarReferenceBitForBit) {
  int checked = 0;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    std::size_t n_entries = 0;
    const kernels::MultiDot* entries = kernels::multi_dots_for(isa, &n_entries);
    for (std::size_t e = 0; e < n_entries; ++e) {
      const kernels::MultiDot& m = entries[e];
      const kernels::DotKernel* ref = kernels::find_scalar_dot_kernel(m.weight_type);
      ASSERT_NE(ref, nullptr);
      kernels::DotFn single = slot_fn(*ref, m.slot);
      if (m.slot == kernels::DotSlot::kInvariant) single = invariant_scalar_form(static_cast<GgmlType>(m.weight_type));
      ASSERT_NE(single, nullptr) << "a variant for an empty slot";
      const auto type = static_cast<GgmlType>(m.weight_type);
      const BlockTypeInfo& info = block_type(type);
      std::mt19937 rng(1234 + static_cast<unsigned>(e));
      // The activation format of the slot: wisp's own order has its own (act_invariant).
      const kernels::ActFormat act = m.slot == kernels::DotSlot::kInvariant ? invariant_act(type) : ref->act;
      const std::int64_t blk = std::max<std::int64_t>(kernels::act_block_elems(act), info.block_elems);
      for (std::int64_t n : {blk, 2 * blk, 18 * blk, 65 * blk}) {
        for (int adversarial = 0; adversarial < 2; ++adversarial) {
          const std::string where = std::string(isa_name(isa)) + " " + info.name + " slot " +
                                    std::to_string(static_cast<int>(m.slot)) + " n " + std::to_string(n) +
                                    (adversarial == 1 ? " adversarial" : " random");
          std::vector<std::uint8_t> w;
          if (adversarial == 1) {
            w = adversarial_rows(m.weight_type, n, rng);
          } else {
            w = test::random_matrix(type, 4, n, rng);
            if (is_wq_type(m.weight_type)) fix_wq_headers(m.weight_type, w, rng);
          }
          const std::size_t w_stride = info.row_bytes(n);
          const auto a = activations(act, 4, n, rng);
          const std::size_t a_stride = kernels::act_row_bytes(act, n);
          float out[4];
          if (m.tok4 != nullptr) {
            for (int r = 0; r < 4; ++r) {
              m.tok4(w.data() + w_stride * r, a.data(), a_stride, n, out);
              for (int j = 0; j < 4; ++j) {
                const float want = single(w.data() + w_stride * r, a.data() + a_stride * j, n);
                ASSERT_TRUE(same_bits(out[j], want))
                    << where << " tok4 row " << r << " token " << j << ": " << out[j] << " vs " << want;
              }
            }
          }
          if (m.row4 != nullptr) {
            for (int t = 0; t < 4; ++t) {
              m.row4(w.data(), w_stride, a.data() + a_stride * t, n, out);
              for (int j = 0; j < 4; ++j) {
                const float want = single(w.data() + w_stride * j, a.data() + a_stride * t, n);
                ASSERT_TRUE(same_bits(out[j], want))
                    << where << " row4 row " << j << " token " << t << ": " << out[j] << " vs " << want;
              }
            }
          }
          if (m.tile4x4 != nullptr) {
            float tile[16];
            m.tile4x4(w.data(), w_stride, a.data(), a_stride, n, tile);
            for (int r = 0; r < 4; ++r) {
              for (int t = 0; t < 4; ++t) {
                const float want = single(w.data() + w_stride * r, a.data() + a_stride * t, n);
                ASSERT_TRUE(same_bits(tile[4 * r + t], want))
                    << where << " tile4x4 row " << r << " token " << t << ": " << tile[4 * r + t] << " vs " << want;
              }
            }
          }
          ++checked;
        }
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "this CPU runs no x86 SIMD path";
}

// The 8-row GEMMs (MultiDot::gemm8) against the scalar form of the one-token kernel they stand in
// for: every output bit-identical, for row chunks of 8 and fewer (rows past the chunk's end never
// written), batches that are and are not a multiple of the four-token group, and rows of one block
// (no full group of 8 blocks), whole groups, groups plus a tail, up to 8192 values.
TEST(MultiDots, Gemm8EqualsTheOneTokenKernelBitForBit) {
  int checked = 0;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    std::size_t n_entries = 0;
    const kernels::MultiDot* entries = kernels::multi_dots_for(isa, &n_entries);
    for (std::size_t e = 0; e < n_entries; ++e) {
      const kernels::MultiDot& m = entries[e];
      if (m.gemm8 == nullptr) continue;
      ASSERT_EQ(m.slot, kernels::DotSlot::kInvariant) << "a GEMM is only written for wisp's own orders";
      const auto type = static_cast<GgmlType>(m.weight_type);
      const kernels::DotFn single = invariant_scalar_form(type);
      ASSERT_NE(single, nullptr) << block_type(type).name;
      const BlockTypeInfo& info = block_type(type);
      const kernels::ActFormat act = invariant_act(type);
      std::mt19937 rng(77 + static_cast<unsigned>(e));
      // 32-value types: one block, whole groups of 8, groups plus a tail; K-quants: the same in
      // 256-value super-blocks (1, 3, 8, 9, 17, 32 of them).
      const bool k_quant = info.block_elems == kQK_K;
      for (std::int64_t n : k_quant ? std::vector<std::int64_t>{256, 768, 2048, 2304, 4352, 8192}
                                    : std::vector<std::int64_t>{32, 64, 96, 256, 288, 576, 2048, 8192}) {
        if (n % info.block_elems != 0) continue;  // WQ_G64 / G128: whole groups only
        // 8 rows: 4 random, then the 4 adversarial ones (edge scales, all-0x00 and all-0xff codes).
        auto w = test::random_matrix(type, 4, n, rng);
        if (is_wq_type(m.weight_type)) fix_wq_headers(m.weight_type, w, rng);
        const auto adv = adversarial_rows(m.weight_type, n, rng);
        w.insert(w.end(), adv.begin(), adv.end());
        const std::size_t w_stride = info.row_bytes(n);
        constexpr std::int64_t kTok = 9;
        const auto a = activations(act, kTok, n, rng);
        const std::size_t a_stride = kernels::act_row_bytes(act, n);
        float want[kTok][8];
        for (std::int64_t t = 0; t < kTok; ++t) {
          for (int r = 0; r < 8; ++r) want[t][r] = single(w.data() + w_stride * r, a.data() + a_stride * t, n);
        }
        std::vector<std::uint8_t> scratch(kernels::gemm8_scratch_bytes(n, m.gemm_rows) + 1);
        for (int rows : {8, 5, 1}) {
          for (std::int64_t n_tok : {kTok, std::int64_t{4}, std::int64_t{3}, std::int64_t{1}}) {
            // Rows from the end of the 8 (so the adversarial rows sit in every chunk size), a
            // y_stride wider than the chunk, and a scratch pointer that is not 32-byte aligned.
            const int first = 8 - rows;
            constexpr std::int64_t kStride = 11;
            std::vector<float> y(static_cast<std::size_t>(kTok * kStride), -7.0f);
            m.gemm8(w.data() + w_stride * first, w_stride, rows, a.data(), a_stride, n_tok, n, y.data(), kStride,
                    scratch.data() + 1);
            for (std::int64_t t = 0; t < kTok; ++t) {
              for (int r = 0; r < kStride; ++r) {
                const float got = y[static_cast<std::size_t>(t * kStride + r)];
                const std::string where = std::string(isa_name(isa)) + " " + info.name + " n " + std::to_string(n) +
                                          " rows " + std::to_string(rows) + " tokens " + std::to_string(n_tok) +
                                          ": row " + std::to_string(r) + " token " + std::to_string(t);
                if (t < n_tok && r < rows) {
                  ASSERT_TRUE(same_bits(got, want[t][first + r]))
                      << where << ": " << got << " vs " << want[t][first + r];
                } else {
                  ASSERT_TRUE(same_bits(got, -7.0f)) << where << " written outside the chunk";
                }
              }
            }
            ++checked;
          }
        }
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "this CPU runs no x86 GEMM variant";
}

// Through the matmul: batches that mix four-token groups with a tail, and row counts that mix
// four-row groups with a tail, give what one-output calls give, in both float orders.
TEST(MultiDots, MatmulWithVariantsEqualsOneOutputCalls) {
  for (kernels::DotOrder order : {kernels::DotOrder::kGgml, kernels::DotOrder::kBatchInvariant}) {
    std::mt19937 rng(99);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0,
                          GgmlType::kQ4_K, GgmlType::kQ6_K}) {
      // Row counts with and without ggml's repacking (multiples of 8) and batches on both sides of
      // the tiled K-quant GEMM's threshold, with and without a tail of fewer than four tokens.
      for (auto [rows, n_tok] : {std::pair<std::int64_t, std::int64_t>{19, 1},
                                 {24, 1},
                                 {24, 3},
                                 {21, 9},
                                 {16, 4},
                                 {16, 11},
                                 {37, 13},
                                 {40, 8}}) {
        // 32-value types: 9 blocks, one full group of 8 of wisp's order and a tail.
        const std::int64_t cols = block_type(type).block_elems == 256 ? 512 : 288;
        const auto wbytes = test::random_matrix(type, rows, cols, rng);
        const kernels::MatrixView w{wbytes.data(), static_cast<std::uint32_t>(type), cols, rows,
                                    block_type(type).row_bytes(cols)};
        std::vector<float> x(static_cast<std::size_t>(n_tok * cols));
        for (auto& v : x) v = normal(rng);
        std::vector<float> y(static_cast<std::size_t>(n_tok * rows));
        kernels::MatmulScratch scratch;
        ThreadPool pool(1);
        kernels::matmul(w, x.data(), cols, n_tok, y.data(), rows, scratch, pool, order);
        const kernels::DotKernel* k = kernels::find_dot_kernel(static_cast<std::uint32_t>(type));
        for (std::int64_t t = 0; t < n_tok; ++t) {
          const kernels::ActFormat f = k->act_for(rows, n_tok, t, order);
          std::vector<std::uint8_t> act(kernels::act_row_bytes(f, cols));
          kernels::convert_act_row(f, x.data() + t * cols, act.data(), cols);
          for (std::int64_t r = 0; r < rows; ++r) {
            ASSERT_TRUE(same_bits(y[t * rows + r], k->select(rows, n_tok, t, order)(w.row(r), act.data(), cols)))
                << block_type(type).name << " rows " << rows << " tokens " << n_tok << " token " << t << " row " << r
                << (order == kernels::DotOrder::kGgml ? " (llama.cpp's order)" : " (batch-invariant order)");
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace wisp

namespace wisp {
namespace {

// matmul_group (one parallel job over several weights reading one input) gives exactly what
// separate matmul() calls give: mixed types and row lengths, a repacked Q4_K with its per-token
// activation format, shared and unshared conversions, batches of 1, 3 and 9 tokens.
TEST(MatmulGroup, EqualsSeparateMatmuls) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::int64_t cols = 512;
  struct W {
    GgmlType type;
    std::int64_t rows;
  };
  const W ws[] = {
      {GgmlType::kQ4_1, 40}, {GgmlType::kQ4_K, 24}, {GgmlType::kQ4_1, 19}, {GgmlType::kQ8_0, 8}, {GgmlType::kQ6_K, 13}};
  std::vector<std::vector<std::uint8_t>> bytes;
  std::vector<kernels::MatrixView> views;
  for (const W& w : ws) {
    bytes.push_back(test::random_matrix(w.type, w.rows, cols, rng));
    views.push_back(
        {bytes.back().data(), static_cast<std::uint32_t>(w.type), cols, w.rows, block_type(w.type).row_bytes(cols)});
  }
  ThreadPool pool(2);
  for (std::int64_t n_tok : {1, 3, 9}) {
    std::vector<float> x(static_cast<std::size_t>(n_tok * cols));
    for (auto& v : x) v = normal(rng);
    std::vector<std::vector<float>> grouped, separate;
    std::vector<kernels::MatmulOutput> outs;
    for (const auto& v : views) {
      grouped.emplace_back(static_cast<std::size_t>(n_tok * v.n_rows), -1.0f);
      separate.emplace_back(static_cast<std::size_t>(n_tok * v.n_rows), -2.0f);
    }
    for (std::size_t i = 0; i < views.size(); ++i) outs.push_back({&views[i], grouped[i].data(), views[i].n_rows});
    kernels::MatmulScratch s1, s2;
    kernels::matmul_group(outs, x.data(), cols, n_tok, s1, pool);
    for (std::size_t i = 0; i < views.size(); ++i) {
      kernels::matmul(views[i], x.data(), cols, n_tok, separate[i].data(), views[i].n_rows, s2, pool);
      for (std::size_t e = 0; e < separate[i].size(); ++e) {
        ASSERT_TRUE(same_bits(grouped[i][e], separate[i][e])) << "weight " << i << " tokens " << n_tok << " at " << e;
      }
    }
  }
}

TEST(MatmulGroup, ChecksEveryWeightBeforeWriting) {
  std::mt19937 rng(6);
  const auto good = test::random_matrix(GgmlType::kQ8_0, 4, 64, rng);
  const kernels::MatrixView ok{good.data(), static_cast<std::uint32_t>(GgmlType::kQ8_0), 64, 4,
                               block_type(GgmlType::kQ8_0).row_bytes(64)};
  const kernels::MatrixView bad{good.data(), 9999, 64, 4, 64};
  std::vector<float> x(64, 1.0f), y1(4, 7.0f), y2(4, 7.0f);
  const kernels::MatmulOutput outs[] = {{&ok, y1.data(), 4}, {&bad, y2.data(), 4}};
  ThreadPool pool(2);
  kernels::MatmulScratch s;
  EXPECT_THROW(kernels::matmul_group(outs, x.data(), 64, 1, s, pool), Error);
  EXPECT_EQ(y1, std::vector<float>(4, 7.0f));  // nothing written
}

}  // namespace
}  // namespace wisp
