// Kernel microbenchmarks: one-token GEMV (activation quantization + one dot per row) per block
// type and ISA path, at the real models' matrix shapes, single-threaded, with bytes/s counters
// (weight bytes read per second: what decode is bound by). Run: build-*/bench/bench_kernels.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "formats/block_types.h"
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
constexpr Shape kShapes[] = {
    {"smollm2.ffn_up", 576, 1536}, {"smollm2.ffn_down", 1536, 576}, {"smollm2.output", 576, 49152}, {"gemma3.ffn_down", 2048, 640}};

void gemv(benchmark::State& state, GgmlType type, Shape shape, Isa isa) {
  const auto* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
  if (k == nullptr) {
    state.SkipWithError("ISA not supported on this CPU");
    return;
  }
  std::mt19937 rng(7);
  const std::vector<std::uint8_t> w = test::random_matrix(type, shape.n_rows, shape.n_cols, rng);
  const std::size_t row_bytes = w.size() / static_cast<std::size_t>(shape.n_rows);
  std::vector<float> x(static_cast<std::size_t>(shape.n_cols));
  std::normal_distribution<float> normal;
  for (float& v : x) v = normal(rng);
  std::vector<std::uint8_t> act(kernels::act_row_bytes(k->act, shape.n_cols));
  std::vector<float> y(static_cast<std::size_t>(shape.n_rows));
  for (auto _ : state) {
    kernels::convert_act_row(k->act, x.data(), act.data(), shape.n_cols);
    for (std::int64_t r = 0; r < shape.n_rows; ++r) {
      y[static_cast<std::size_t>(r)] = k->select(shape.n_rows, 1, 0)(w.data() + r * row_bytes, act.data(), shape.n_cols);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["bytes/s"] = benchmark::Counter(static_cast<double>(w.size()), benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1024);
}

const int kRegistered = [] {
  constexpr GgmlType types[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0,
                                GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kF16};
  for (GgmlType t : types) {
    const bool k_quant = block_type(t).block_elems == 256;
    for (const Shape& s : kShapes) {
      if (k_quant && s.n_cols % 256 != 0) continue;
      if (std::string(s.what) == "smollm2.output" && t != GgmlType::kQ8_0) continue;  // the real model's type only
      for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
        const std::string name = std::string("gemv/") + block_type(t).name + "/" + s.what + "/" + isa_name(isa);
        benchmark::RegisterBenchmark(name.c_str(), gemv, t, s, isa);
      }
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
