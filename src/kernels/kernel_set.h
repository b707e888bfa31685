// The kernel registry: one bundle of kernels per ISA (KernelSet), chosen at one point.
//
// A KernelSet holds everything whose implementation depends on the instruction set: the dot
// kernels of every weight type (the GGML types and wisp's WQ types), their multi-output variants,
// the float types' tiled GEMMs, the activation quantizers, and ggml's 16-lane float paths that attention and the
// activations use. kernel_set() is the bundle of the ISA the process runs on (the best this CPU has, or WISP_ISA's
// choice, read once); kernel_set_for(isa) any other one, for tests and benchmarks. Which float order attention and the
// activations follow (EngineOptions::exact_isa, ggml::Simd) is a separate choice made by the caller: the bundle only
// says how fast that order is computed.
//
// Each ISA's kernels live in their own translation units compiled with that ISA's -m flags
// (src/kernels/avx2/, src/kernels/avx512/, src/kernels/neon/). Each ISA exports one function that
// fills an IsaKernels with plain function and table pointers, never inline code: an inline
// function compiled with AVX-512 flags could otherwise be the copy the linker keeps for a scalar
// caller. kernel_set.cpp completes it into a KernelSet from the scalar references (a null entry
// keeps the scalar one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/float_gemm.h"
#include "kernels/multi_dots.h"

namespace wisp::kernels {

// One weight type's functions in one ISA, replacing the scalar table's (null, `dot` included: keep
// the scalar one).
struct IsaDots {
  std::uint32_t weight_type;
  DotFn dot;
  DotFn dot_batched;
  DotFn dot_repacked;
  DotFn dot_repacked_x4;
  DotFn dot_invariant = nullptr;  // wisp's own order (DotKernel::dot_invariant), on act_invariant
  ActFormat act_invariant = ActFormat::kF32;
};

// The row quantizers of one ISA (act_quant.h); each writes the scalar reference's bytes.
struct IsaActQuant {
  ActQuantFn q8_0 = nullptr;
  ActQuantFn q8_1 = nullptr;
  ActQuantFn q8_K = nullptr;
  ActQuantFn q8_Kx4 = nullptr;
};

// ggml's float paths in the order of its AVX-512 build (ggml::Simd::kAvx512, ggml_order.h): each
// implementation returns the bits of the portable form (ggml_lanes16.cpp), which the tests pin to
// libggml. The AVX2 build's 8-lane order has only the portable form (attention.cpp, activations.cpp).
struct Ggml16Ops {
  // tinyBLAS's F16 product (batches): one 16-lane FMA accumulator, element i in lane i % 16,
  // folded by reduce16. n % 16 == 0.
  float (*dot_gemm)(const float* a, const float* b, std::int64_t n) = nullptr;
  // ggml_vec_dot_f16 (one token): four 16-lane accumulators over steps of 64, folded 0+2, 1+3,
  // then 0+1, reduce16 into a double; the elements past the last step added in double one by one.
  float (*dot_vec)(const float* a, const float* b, std::int64_t n) = nullptr;
  // out[i] = silu(gate[i]) * up[i] through ggml's vector exp. n % 16 == 0; out may alias.
  void (*silu_mul)(const float* gate, const float* up, float* out, std::int64_t n) = nullptr;
  // x[i] = expf(x[i] - max) through ggml's vector exp; returns the sum over the groups of 16 of
  // double(reduce16(group)), in order (the softmax's denominator). n % 16 == 0.
  double (*exp_sum)(float* x, std::int64_t n, float max) = nullptr;
  // Attention's two loops over the cache rows, for several queries per pass over the rows. The
  // rows are f32, or with `half` IEEE binary16 values (the f16 cache read in place: the same
  // numbers as their f32 conversion, so the same bits).
  // QK: out[m][r] = dot_vec(rows[r], qs[m], d) * scale for r < n and each query m < n_q (each
  // output exactly dot_vec's bits); each row is loaded once for several queries.
  void (*dot_vec_rows)(const float* const* qs, int n_q, const void* const* rows, bool half, std::int64_t n,
                       std::int64_t d, float scale, float* const* out) = nullptr;
  // PV: for j < n in order (position t = t0 + j, lane t % lanes) and each query m < n_m,
  // acc[m][lane * d + i] = fma(rows[j][i], probs[m][t], acc[m][lane * d + i]) for i < d: one
  // FMA chain per lane and output, in position order (ggml's lanes of the p.v dot). With `init`
  // the chains start at +0 instead (the lanes of the run's positions are written, not read; the
  // other lanes are left as they are).
  void (*fma_lanes)(const float* const* probs, int n_m, const void* const* rows, bool half, std::int64_t t0,
                    std::int64_t n, std::int64_t d, std::int64_t lanes, bool init, float* const* acc) = nullptr;
};

// What one ISA's translation units export (plain pointers; null or empty: the scalar reference).
struct IsaKernels {
  const IsaDots* dots = nullptr;  // GGML types
  std::size_t n_dots = 0;
  const IsaDots* wq_dots = nullptr;  // wisp's WQ types (formats/wq_format.h)
  std::size_t n_wq_dots = 0;
  const MultiDot* multi_dots = nullptr;
  std::size_t n_multi_dots = 0;
  const FloatGemm* float_gemms = nullptr;  // float_gemm.h
  std::size_t n_float_gemms = 0;
  IsaActQuant act_quant;
  Ggml16Ops ggml16;
};

// One ISA's complete bundle: every entry set (the scalar reference where the ISA has none).
struct KernelSet {
  Isa isa = Isa::kScalar;
  // Every weight type with a matmul: the GGML types, then the WQ types.
  std::vector<DotKernel> dots;
  std::span<const MultiDot> multi_dots;    // none for the scalar path
  std::span<const FloatGemm> float_gemms;  // none for the scalar path
  IsaActQuant act_quant;
  Ggml16Ops ggml16;

  // The dot kernel of weight type `type_id`, or nullptr if no matmul exists for the type.
  const DotKernel* find_dot(std::uint32_t type_id) const;
};

// The bundle built for `isa`, or nullptr when this CPU cannot run it (or the build lacks it).
const KernelSet* kernel_set_for(Isa isa);
// The bundle the process runs on: kernel_set_for(selected_isa()), chosen once.
const KernelSet& kernel_set();

// The per-ISA exports (src/kernels/<isa>/); call only on a CPU that runs the ISA.
void avx2_kernels(IsaKernels& k);
void avx512_kernels(IsaKernels& k);
void neon_kernels(IsaKernels& k);
void neon_dotprod_kernels(IsaKernels& k);

// The parts the x86 ISAs' kernel_set.cpp assemble from their other files (not for other callers).
const IsaDots* avx2_dots(std::size_t* n);
const IsaDots* avx512_dots(std::size_t* n);
const IsaDots* avx2_wq_dots(std::size_t* n);
const IsaDots* avx512_wq_dots(std::size_t* n);
const MultiDot* avx2_multi_dots(std::size_t* n);
const MultiDot* avx512_multi_dots(std::size_t* n);
const FloatGemm* avx2_float_gemms(std::size_t* n);
const FloatGemm* avx512_float_gemms(std::size_t* n);
const IsaActQuant* avx2_act_quant();
const IsaActQuant* avx512_act_quant();
const Ggml16Ops* avx512_ggml16();
// The NEON builds' dot tables (neon/kernels.cpp, neon/kernels_dotprod.cpp).
const IsaDots* neon_dots(std::size_t* n);
const IsaDots* neon_dotprod_dots(std::size_t* n);

// The scalar references the bundles start from, each defined beside its kind of kernel.
std::span<const DotKernel> scalar_ggml_dots();  // dot_table.cpp
std::span<const DotKernel> scalar_wq_dots();    // dot_wq.cpp
IsaActQuant scalar_act_quant();                 // act_quant.cpp
Ggml16Ops portable_ggml16();                    // ggml_lanes16.cpp

}  // namespace wisp::kernels
