// Per-block-type dot products of one weight row (in its stored block type) with one activation row
// (already converted to the type's ActFormat), and the table that picks them.
//
// The table is the dispatch point for the SIMD kernels of the fast-kernels issue:
// find_dot_kernel() returns the best implementation for the running CPU (avx512/, avx2/ or the
// scalar reference). The scalar entries are references that reproduce, bit for bit, the float order of llama.cpp's
// x86-64 CPU backend (see ggml_order.h for why): an exact integer dot per block, then float accumulation laid out in
// ggml's SIMD lanes. ggml uses different orders for one token (vec_dot), for batches (tinyBLAS, the tiled K-quant GEMM)
// and for weights it repacks at load time (rows a multiple of 8 for Q4_0/Q4_K), so an entry has one function per case.
// A SIMD implementation that keeps the same lanes returns the same bits; its tests compare it for equality with these.
//
// tests/unit/kernels/test_golden_dots.cpp checks these references against libggml-cpu itself
// (scripts/gen_golden_dots.py) for the K-quants and the float types.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/act_quant.h"

namespace wisp::kernels {

// Which of a kernel's float orders a matmul uses for each token.
//   kGgml: ggml's choice, which depends on the batch (one-token vec_dot, tinyBLAS or the tiled
//     K-quant GEMM for batches, the repacked GEMM for groups of four tokens): a single sequence's
//     logits equal llama.cpp's bit for bit, but a token's outputs change with the batch it is in.
//   kBatchInvariant: every token of every batch through one order, with the row activation
//     quantizer: a token's outputs depend only on its own activation row, never on how many
//     tokens share the call or where it sits among them. What the engine uses, so a request's
//     logits are the same alone or batched with others. The order is wisp's own where the ISA has
//     a kernel for it (dot_invariant: faster, and bound by measured accuracy against the reference,
//     see src/kernels/README.md), else ggml's one-token order (the repacked GEMV where ggml repacks).
enum class DotOrder { kGgml, kBatchInvariant };

// Dot of n values: weight row `w` (stored blocks) with activation row `a` (in the kernel's act).
using DotFn = float (*)(const void* w, const void* a, std::int64_t n);

struct DotKernel {
  std::uint32_t weight_type = 0;  // GGML type id of the weight row
  ActFormat act = ActFormat::kF32;
  DotFn dot = nullptr;          // one token (ggml: vec_dot)
  DotFn dot_batched = nullptr;  // batches of at least batch_min tokens; null: same as dot
  int batch_min = 2;
  // Weights with rows % 8 == 0, which ggml repacks at load (null: never): its GEMM takes tokens
  // in groups of 4, its GEMV the last n_tok % 4 tokens (and single tokens).
  DotFn dot_repacked = nullptr;
  DotFn dot_repacked_x4 = nullptr;  // null: same as dot_repacked
  // dot_batched only for matrices whose row count is a multiple of this: tinyBLAS (the float
  // types) declines other shapes and ggml then runs its one-token dot for every token.
  std::int64_t batch_rows_multiple = 1;
  const char* isa = "scalar";  // which implementation this is, for logs and benchmarks
  // wisp's own order for the batch-invariant numerics, on activations in act_invariant (null: the
  // ISA has none; kBatchInvariant then runs ggml's one-token order). Not llama.cpp's bits: its
  // error against the reference is bounded by tests (src/kernels/README.md).
  DotFn dot_invariant = nullptr;
  ActFormat act_invariant = ActFormat::kF32;

  bool repacked(std::int64_t n_rows) const { return dot_repacked != nullptr && n_rows % 8 == 0; }
  // The function for token t of a batch of n_tok through this matrix: the one ggml would use
  // (kGgml), or the batch's-size-blind one-token order (kBatchInvariant).
  DotFn select(std::int64_t n_rows, std::int64_t n_tok, std::int64_t t, DotOrder order = DotOrder::kGgml) const {
    if (order == DotOrder::kBatchInvariant) {
      if (dot_invariant != nullptr) return dot_invariant;
      return repacked(n_rows) ? dot_repacked : dot;
    }
    if (repacked(n_rows)) {
      return t < n_tok - n_tok % 4 && dot_repacked_x4 != nullptr ? dot_repacked_x4 : dot_repacked;
    }
    if (dot_batched != nullptr && n_tok >= batch_min && n_rows % batch_rows_multiple == 0) return dot_batched;
    return dot;
  }
  // Repacked Q8_K activations come from ggml's interleaving quantizer in groups of 4 tokens, whose
  // sign choice differs on exact +-max ties (ActFormat::kQ8_Kx4); the last n_tok % 4 tokens and
  // every other path use the row quantizer.
  ActFormat act_for(std::int64_t n_rows, std::int64_t n_tok, std::int64_t t, DotOrder order = DotOrder::kGgml) const {
    if (order == DotOrder::kBatchInvariant) return dot_invariant != nullptr ? act_invariant : act;
    const bool grouped = repacked(n_rows) && t < n_tok - n_tok % 4;
    return grouped && act == ActFormat::kQ8_K ? ActFormat::kQ8_Kx4 : act;
  }
};

// The kernel for weight type `type_id` on this CPU, or nullptr if no matmul exists for the type.
const DotKernel* find_dot_kernel(std::uint32_t type_id);
// The kernel for `type_id` built for `isa` (types that ISA lacks keep their scalar entry), or
// nullptr if the CPU cannot run `isa` or no matmul exists for the type. For tests and benchmarks.
const DotKernel* find_dot_kernel_for(std::uint32_t type_id, Isa isa);
// The ISA find_dot_kernel() uses: the best this CPU has, or WISP_ISA's choice (read once).
Isa dot_kernel_isa();
// The scalar reference kernel for `type_id` (nullptr if none): what SIMD kernels are tested against.
const DotKernel* find_scalar_dot_kernel(std::uint32_t type_id);

// Scalar reference dots (dot_legacy.cpp, dot_kquant_x86.cpp, dot_float.cpp).
namespace scalar {
float dot_q4_0(const void* w, const void* a, std::int64_t n);
float dot_q4_0_repacked(const void* w, const void* a, std::int64_t n);
float dot_q4_1(const void* w, const void* a, std::int64_t n);
float dot_q5_0(const void* w, const void* a, std::int64_t n);
float dot_q5_1(const void* w, const void* a, std::int64_t n);
float dot_q8_0(const void* w, const void* a, std::int64_t n);
float dot_q2_k(const void* w, const void* a, std::int64_t n);
float dot_q3_k(const void* w, const void* a, std::int64_t n);
float dot_q4_k(const void* w, const void* a, std::int64_t n);
float dot_q5_k(const void* w, const void* a, std::int64_t n);
float dot_q6_k(const void* w, const void* a, std::int64_t n);
float dot_q4_k_repacked(const void* w, const void* a, std::int64_t n);
float dot_q4_k_repacked_x4(const void* w, const void* a, std::int64_t n);
// wisp's own block-parallel order (dot_blocks8.cpp), the scalar form of the x86 dot_invariant
// kernels: activations in ActFormat::kQ8_0Split; the exact integer dot of each block, then per
// group of 8 blocks lane k (block 8 g + k) takes acc[k] = fma(float(isum), d_x * d_y, acc[k]),
// folded at the end as hsum8 (simd.h). Tests compare the SIMD kernels with these for equality.
float dot_q4_0_blocks8(const void* w, const void* a, std::int64_t n);
float dot_q4_1_blocks8(const void* w, const void* a, std::int64_t n);
float dot_q5_0_blocks8(const void* w, const void* a, std::int64_t n);
float dot_q5_1_blocks8(const void* w, const void* a, std::int64_t n);
float dot_q8_0_blocks8(const void* w, const void* a, std::int64_t n);
// wisp's own order for the K-quants (dot_kquant_super8.cpp), the scalar form of their x86
// dot_invariant kernels: activations in ActFormat::kQ8_K; per super-block b the exact integers
// S_b (scaled code dots) and M_b (minimums times activation sums), lane k = b % 8 takes
// acc[k] = fma(float(S_b), d_x * d_y, acc[k]), macc[k] = fma(float(M_b), dmin_x * d_y, macc[k]),
// folded as hsum8(acc - macc).
float dot_q2_k_super8(const void* w, const void* a, std::int64_t n);
float dot_q3_k_super8(const void* w, const void* a, std::int64_t n);
float dot_q4_k_super8(const void* w, const void* a, std::int64_t n);
float dot_q5_k_super8(const void* w, const void* a, std::int64_t n);
float dot_q6_k_super8(const void* w, const void* a, std::int64_t n);
// wisp's own order for the 4-bit codebook types (dot_codebook8.cpp), the scalar form of their x86
// dot_invariant kernels: IQ4_NL and MXFP4 on ActFormat::kQ8_0Split (per block the exact integer
// dot, acc[b % 8] = fma(float(isum_b), d_x * d_y, acc[b % 8])), IQ4_XS on ActFormat::kQ8_K (per
// super-block the exact sub-block-scaled S_b in the same lanes); folded as hsum8(acc).
float dot_iq4_nl_blocks8(const void* w, const void* a, std::int64_t n);
float dot_mxfp4_blocks8(const void* w, const void* a, std::int64_t n);
float dot_iq4_xs_super8(const void* w, const void* a, std::int64_t n);
// wisp's integer order for its WQ types (dot_wq_blocks8.cpp), the scalar form of their x86
// dot_invariant kernels: activations in ActFormat::kQ8_0Split; per 32-value activation block b
// (in the WQ group g) the exact isum_b = sum(q a) - z_g sum(a), lane b % 8 takes
// acc = fma(float(isum_b), s_g * d_b, acc), folded as hsum8(acc). nullptr if `type_id` is not WQ.
DotFn dot_wq_blocks8_form(std::uint32_t type_id);
// ggml's tiled K-quant GEMM (batches of 8+ tokens).
float dot_q2_k_tiled(const void* w, const void* a, std::int64_t n);
float dot_q3_k_tiled(const void* w, const void* a, std::int64_t n);
float dot_q4_k_tiled(const void* w, const void* a, std::int64_t n);
float dot_q5_k_tiled(const void* w, const void* a, std::int64_t n);
float dot_q6_k_tiled(const void* w, const void* a, std::int64_t n);
// The codebook and ternary types (dot_nonlinear.cpp): one token, tinyBLAS batches (IQ4_NL),
// the tiled GEMM (IQ4_XS, 8+ tokens) and the repacked GEMV/GEMM (IQ4_NL, rows % 8 == 0).
float dot_iq4_nl(const void* w, const void* a, std::int64_t n);
float dot_iq4_nl_batched(const void* w, const void* a, std::int64_t n);
float dot_iq4_nl_repacked(const void* w, const void* a, std::int64_t n);
float dot_iq4_xs(const void* w, const void* a, std::int64_t n);
float dot_iq4_xs_tiled(const void* w, const void* a, std::int64_t n);
float dot_mxfp4(const void* w, const void* a, std::int64_t n);
float dot_mxfp4_repacked(const void* w, const void* a, std::int64_t n);
float dot_nvfp4(const void* w, const void* a, std::int64_t n);
float dot_tq1_0(const void* w, const void* a, std::int64_t n);
float dot_tq2_0(const void* w, const void* a, std::int64_t n);
// The grid types (dot_iq_grid.cpp): one token and the tiled GEMM (8+ tokens).
float dot_iq2_xxs(const void* w, const void* a, std::int64_t n);
float dot_iq2_xxs_tiled(const void* w, const void* a, std::int64_t n);
float dot_iq2_xs(const void* w, const void* a, std::int64_t n);
float dot_iq2_xs_tiled(const void* w, const void* a, std::int64_t n);
float dot_iq2_s(const void* w, const void* a, std::int64_t n);
float dot_iq2_s_tiled(const void* w, const void* a, std::int64_t n);
float dot_iq3_xxs(const void* w, const void* a, std::int64_t n);
float dot_iq3_xxs_tiled(const void* w, const void* a, std::int64_t n);
float dot_iq3_s(const void* w, const void* a, std::int64_t n);
float dot_iq3_s_tiled(const void* w, const void* a, std::int64_t n);
float dot_iq1_s(const void* w, const void* a, std::int64_t n);
float dot_iq1_s_tiled(const void* w, const void* a, std::int64_t n);
float dot_iq1_m(const void* w, const void* a, std::int64_t n);
float dot_iq1_m_tiled(const void* w, const void* a, std::int64_t n);
// The float types (dot_float.cpp): ggml's one-token vec_dot, and tinyBLAS for batches (which
// itself runs the one-token order when n is not a multiple of 16, BF16: 32, as ggml does).
float dot_f32(const void* w, const void* a, std::int64_t n);
float dot_f32_batched(const void* w, const void* a, std::int64_t n);
float dot_f16(const void* w, const void* a, std::int64_t n);
float dot_f16_batched(const void* w, const void* a, std::int64_t n);
float dot_bf16(const void* w, const void* a, std::int64_t n);
float dot_bf16_batched(const void* w, const void* a, std::int64_t n);
// wisp's own float order (the scalar form of the x86 dot_invariant kernels, x86/float_tiles-inl.h):
// weights in their type, activations in f32 (ActFormat::kF32); the row zero-padded to a multiple
// of 8, acc[i % 8] = fma(w_i, a_i, acc[i % 8]) in order of i, then hsum8(acc).
float dot_f32_lanes8(const void* w, const void* a, std::int64_t n);
float dot_f16_lanes8(const void* w, const void* a, std::int64_t n);
float dot_bf16_lanes8(const void* w, const void* a, std::int64_t n);
}  // namespace scalar

}  // namespace wisp::kernels
