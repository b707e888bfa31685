// Kernel microbenchmarks: one-token GEMV (activation quantization + one dot per row) per block
// type and ISA path, at the real models' matrix shapes, single-threaded, with bytes/s counters
// (weight bytes read per second: what decode is bound by). Run: build-*/bench/bench_kernels.
#include <benchmark/benchmark.h>

#include <cstddef>
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
#include "random_blocks.h"

namespace {

using namespace wisp;

struct Shape {
  const char* what;
  std::int64_t n_cols, n_rows;
};

// SmolLM2-135M: ffn_up (576 -> 1536), ffn_down (1536 -> 576), output (576 -> 49152);
// Gemma 3 270M: ffn_down (2048 -> 640). K-quants need n_cols % 256 == 0.
// The 1B shape (bench/make_shape_models.py): ffn_down (8192 -> 2048, 9 MiB in Q4_0: in the L3
// cache) and the output projection (2048 -> 49152, larger than the cache: DRAM-bound).
constexpr Shape kShapes[] = {{"smollm2.ffn_up", 576, 1536},  {"smollm2.ffn_down", 1536, 576},
                             {"smollm2.output", 576, 49152}, {"gemma3.ffn_down", 2048, 640},
                             {"1b.ffn_down", 8192, 2048},    {"1b.output", 2048, 49152}};

// Random WQ rows: random planes and zero-points, moderate half scales.
std::vector<std::uint8_t> random_wq(std::uint32_t id, const Shape& shape, std::mt19937& rng) {
  const WqFormat f = wq_format(id);
  const std::size_t bb = f.block_bytes();
  std::vector<std::uint8_t> w(bb * static_cast<std::size_t>(shape.n_rows * shape.n_cols / f.group));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : w) b = static_cast<std::uint8_t>(byte(rng));
  for (std::size_t g = 0; g < w.size() / bb; ++g) {
    const std::uint16_t s = f32_to_f16(0.01f);
    std::memcpy(w.data() + g * bb, &s, 2);
    w[g * bb + 2] = static_cast<std::uint8_t>(w[g * bb + 2] % (f.max_code() + 1));
    w[g * bb + 3] = 0;
  }
  return w;
}

// The scale fields random_matrix leaves random (MXFP4's exponents, IQ1_M's d spread over the top
// nibbles of its scales) set to moderate values: random ones give subnormal products, whose
// microcode assists would be timed instead of the kernel.
void moderate_scales(GgmlType type, std::vector<std::uint8_t>& w) {
  if (type == GgmlType::kMXFP4) {
    for (std::size_t b = 0; b < w.size() / sizeof(BlockMXFP4); ++b) {
      auto& e = w[b * sizeof(BlockMXFP4) + offsetof(BlockMXFP4, e)];
      e = static_cast<std::uint8_t>(118 + e % 10);
    }
  } else if (type == GgmlType::kIQ1_M) {
    const std::uint16_t d = f32_to_f16(0.01f);
    for (std::size_t b = 0; b < w.size() / sizeof(BlockIQ1_M); ++b) {
      std::uint16_t sc[4];
      std::uint8_t* p = w.data() + b * sizeof(BlockIQ1_M) + offsetof(BlockIQ1_M, scales);
      std::memcpy(sc, p, sizeof sc);
      for (int k = 0; k < 4; ++k) {
        sc[k] = static_cast<std::uint16_t>((sc[k] & 0x0fff) | (((d >> (4 * k)) & 0x0f) << 12));
      }
      std::memcpy(p, sc, sizeof sc);
    }
  }
}

void gemv(benchmark::State& state, std::uint32_t type, Shape shape, Isa isa, kernels::DotOrder order) {
  const auto* k = kernels::find_dot_kernel_for(type, isa);
  if (k == nullptr) {
    state.SkipWithError("ISA not supported on this CPU");
    return;
  }
  std::mt19937 rng(7);
  std::vector<std::uint8_t> w = is_wq_type(type)
                                    ? random_wq(type, shape, rng)
                                    : test::random_matrix(static_cast<GgmlType>(type), shape.n_rows, shape.n_cols, rng);
  if (!is_wq_type(type)) moderate_scales(static_cast<GgmlType>(type), w);
  const std::size_t row_bytes = w.size() / static_cast<std::size_t>(shape.n_rows);
  std::vector<float> x(static_cast<std::size_t>(shape.n_cols));
  std::normal_distribution<float> normal;
  for (float& v : x) v = normal(rng);
  const kernels::ActFormat f = k->act_for(shape.n_rows, 1, 0, order);
  const kernels::DotFn dot = k->select(shape.n_rows, 1, 0, order);
  std::vector<std::uint8_t> act(kernels::act_row_bytes(f, shape.n_cols));
  std::vector<float> y(static_cast<std::size_t>(shape.n_rows));
  for (auto _ : state) {
    kernels::convert_act_row(f, x.data(), act.data(), shape.n_cols);
    for (std::int64_t r = 0; r < shape.n_rows; ++r) {
      y[static_cast<std::size_t>(r)] = dot(w.data() + r * row_bytes, act.data(), shape.n_cols);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["bytes/s"] = benchmark::Counter(
      static_cast<double>(w.size()), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

// Activation quantization of one row (what each matmul does once per token), bytes/s of input floats.
void act_quant(benchmark::State& state, kernels::ActFormat f, std::int64_t n, Isa isa) {
  const kernels::ActQuantFn q = kernels::find_act_quantizer(f, isa);
  if (q == nullptr) {
    state.SkipWithError("ISA not supported on this CPU");
    return;
  }
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& v : x) v = normal(rng);
  std::vector<std::uint8_t> out(kernels::act_row_bytes(f, n));
  for (auto _ : state) {
    q(x.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes/s"] = benchmark::Counter(
      static_cast<double>(n * 4), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

const int kRegistered = [] {
  constexpr auto id = [](GgmlType t) { return static_cast<std::uint32_t>(t); };
  const std::uint32_t types[] = {
      id(GgmlType::kQ4_0), id(GgmlType::kQ4_1), id(GgmlType::kQ5_0), id(GgmlType::kQ5_1), id(GgmlType::kQ8_0),
      id(GgmlType::kQ2_K), id(GgmlType::kQ3_K), id(GgmlType::kQ4_K), id(GgmlType::kQ5_K), id(GgmlType::kQ6_K),
      id(GgmlType::kF32), id(GgmlType::kF16), id(GgmlType::kBF16), id(GgmlType::kIQ4_NL), id(GgmlType::kIQ4_XS),
      id(GgmlType::kTQ2_0), wq_type_id(2, 64), wq_type_id(3, 64), wq_type_id(4, 32), wq_type_id(4, 128),
      wq_type_id(5, 64), wq_type_id(6, 64), wq_type_id(8, 32),
      // The other new block types (issue 13): the ternary TQ1_0, MXFP4, NVFP4 and the grid types.
      id(GgmlType::kTQ1_0), id(GgmlType::kMXFP4), id(GgmlType::kIQ2_XXS), id(GgmlType::kIQ2_XS), id(GgmlType::kIQ2_S),
      id(GgmlType::kIQ3_XXS), id(GgmlType::kIQ3_S), id(GgmlType::kIQ1_S), id(GgmlType::kIQ1_M), id(GgmlType::kNVFP4)};
  for (std::uint32_t t : types) {
    const BlockTypeInfo* info = find_block_type(t);
    const std::string tname = info != nullptr ? info->name : std::to_string(t);
    const bool k_quant = info != nullptr && info->block_elems == 256;
    for (const Shape& s : kShapes) {
      if (k_quant && s.n_cols % 256 != 0) continue;
      if (std::string(s.what) == "smollm2.output" && t != id(GgmlType::kQ8_0)) continue;  // the real model's type only
      const bool one_b = std::string(s.what).starts_with("1b.");
      if (one_b && t != id(GgmlType::kQ4_0) && t != id(GgmlType::kQ8_0) && t != id(GgmlType::kQ4_K) &&
          t != id(GgmlType::kQ6_K))
        continue;
#if defined(__aarch64__)
      for (Isa isa : {Isa::kScalar, Isa::kNeon, Isa::kNeonDotprod}) {
#else
      for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
#endif
        // llama.cpp's one-token order (ggml), and the engine's batch-invariant order (wisp's own
        // kernel where the ISA has one).
        const std::string name = "gemv/" + tname + "/" + s.what + "/" + isa_name(isa);
        benchmark::RegisterBenchmark(name.c_str(), gemv, t, s, isa, kernels::DotOrder::kGgml);
        const kernels::DotKernel* k = kernels::find_dot_kernel_for(t, isa);
        if (k != nullptr && k->dot_invariant != nullptr) {
          benchmark::RegisterBenchmark((name + "/invariant").c_str(), gemv, t, s, isa,
                                       kernels::DotOrder::kBatchInvariant);
        }
      }
    }
  }
#if !defined(__aarch64__)
  for (kernels::ActFormat f : {kernels::ActFormat::kQ8_0, kernels::ActFormat::kQ8_1, kernels::ActFormat::kQ8_K}) {
    for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
      const std::string name = std::string("act_quant/") + kernels::act_format_name(f) + "/2048/" + isa_name(isa);
      benchmark::RegisterBenchmark(name.c_str(), act_quant, f, std::int64_t{2048}, isa);
    }
  }
#endif
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
