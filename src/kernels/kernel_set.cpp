// The one switch from an ISA to its kernels (kernel_set.h): each ISA's exports completed from the
// scalar references, built once per process on first use.
#include "kernels/kernel_set.h"

namespace wisp::kernels {

namespace {

// The functions `isa` provides for a type replace the scalar entry's (null: keep the scalar one).
void apply(std::vector<DotKernel>& table, const IsaDots* dots, std::size_t n, Isa isa) {
  for (std::size_t j = 0; j < n; ++j) {
    for (DotKernel& k : table) {
      if (k.weight_type != dots[j].weight_type) continue;
      k.isa = isa_name(isa);
      if (dots[j].dot != nullptr) k.dot = dots[j].dot;
      if (dots[j].dot_batched != nullptr) k.dot_batched = dots[j].dot_batched;
      if (dots[j].dot_repacked != nullptr) k.dot_repacked = dots[j].dot_repacked;
      if (dots[j].dot_repacked_x4 != nullptr) k.dot_repacked_x4 = dots[j].dot_repacked_x4;
      if (dots[j].dot_invariant != nullptr) {
        k.dot_invariant = dots[j].dot_invariant;
        k.act_invariant = dots[j].act_invariant;
      }
    }
  }
}

template <class Fn>
void keep_or(Fn& f, Fn fallback) {
  if (f == nullptr) f = fallback;
}

KernelSet build(Isa isa) {
  IsaKernels parts;
  // The one ISA switch. Each architecture compiles only its own ISAs' files.
  switch (isa) {
#if defined(__x86_64__)
    case Isa::kAvx2: avx2_kernels(parts); break;
    case Isa::kAvx512: avx512_kernels(parts); break;
#endif
#if defined(__aarch64__)
    case Isa::kNeon: neon_kernels(parts); break;
    case Isa::kNeonDotprod: neon_dotprod_kernels(parts); break;
#endif
    default: break;
  }

  KernelSet k;
  k.isa = isa;
  const std::span<const DotKernel> ggml = scalar_ggml_dots();
  const std::span<const DotKernel> wq = scalar_wq_dots();
  k.dots.assign(ggml.begin(), ggml.end());
  k.dots.insert(k.dots.end(), wq.begin(), wq.end());
  apply(k.dots, parts.dots, parts.n_dots, isa);
  apply(k.dots, parts.wq_dots, parts.n_wq_dots, isa);
  k.multi_dots = std::span(parts.multi_dots, parts.n_multi_dots);
  k.float_gemms = std::span(parts.float_gemms, parts.n_float_gemms);

  const IsaActQuant q = scalar_act_quant();
  k.act_quant = parts.act_quant;
  keep_or(k.act_quant.q8_0, q.q8_0);
  keep_or(k.act_quant.q8_1, q.q8_1);
  keep_or(k.act_quant.q8_K, q.q8_K);
  keep_or(k.act_quant.q8_Kx4, q.q8_Kx4);

  const Ggml16Ops g = portable_ggml16();
  k.ggml16 = parts.ggml16;
  keep_or(k.ggml16.dot_gemm, g.dot_gemm);
  keep_or(k.ggml16.dot_vec, g.dot_vec);
  keep_or(k.ggml16.silu_mul, g.silu_mul);
  keep_or(k.ggml16.exp_sum, g.exp_sum);
  keep_or(k.ggml16.dot_vec_rows, g.dot_vec_rows);
  keep_or(k.ggml16.fma_lanes, g.fma_lanes);
  return k;
}

}  // namespace

const DotKernel* KernelSet::find_dot(std::uint32_t type_id) const {
  for (const DotKernel& k : dots) {
    if (k.weight_type == type_id) return &k;
  }
  return nullptr;
}

const KernelSet* kernel_set_for(Isa isa) {
  if (!isa_supported(isa, detect_cpu_features())) return nullptr;
  // One bundle per ISA, built only once the CPU is known to run it (building calls into the ISA's
  // files); function-local statics: initialised once, thread-safe, never written afterwards.
  switch (isa) {
    case Isa::kScalar: {
      static const KernelSet s = build(Isa::kScalar);
      return &s;
    }
    case Isa::kAvx2: {
      static const KernelSet s = build(Isa::kAvx2);
      return &s;
    }
    case Isa::kAvx512: {
      static const KernelSet s = build(Isa::kAvx512);
      return &s;
    }
    case Isa::kNeon: {
      static const KernelSet s = build(Isa::kNeon);
      return &s;
    }
    case Isa::kNeonDotprod: {
      static const KernelSet s = build(Isa::kNeonDotprod);
      return &s;
    }
  }
  return nullptr;
}

const KernelSet& kernel_set() {
  static const KernelSet& k = *kernel_set_for(selected_isa());  // WISP_ISA is read once per process
  return k;
}

}  // namespace wisp::kernels
