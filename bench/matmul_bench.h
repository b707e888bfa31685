// What the matmul benchmarks (bench_prefill, bench_float_gemm, bench_blocks8_gemm,
// bench_kquant_gemm) share: a matrix shape, a random weight matrix of a block type with f32
// activations for a batch (or with the batch already quantized for the kernels that are timed
// alone), the GFLOP/s counter (2 x rows x cols x tokens) and main().
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "formats/block_types.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/matmul.h"
#include "kernels/multi_dots.h"
#include "random_blocks.h"

namespace wisp::bench {

struct Shape {
  std::int64_t rows, cols;
};

struct MatmulFixture {
  std::vector<std::uint8_t> w;
  kernels::MatrixView view;
  std::vector<float> x, y;  // n_tok activation rows of cols values; n_tok output rows of rows values
};

// Weights and activations from a fixed seed, so every run and every benchmark sees the same data.
inline MatmulFixture make_matmul_fixture(GgmlType type, Shape s, std::int64_t n_tok) {
  std::mt19937 rng(5);
  MatmulFixture f;
  f.w = test::random_matrix(type, s.rows, s.cols, rng);
  f.view = {f.w.data(), static_cast<std::uint32_t>(type), s.cols, s.rows, block_type(type).row_bytes(s.cols)};
  std::normal_distribution<float> normal(0.0f, 1.0f);
  f.x.resize(static_cast<std::size_t>(n_tok * s.cols));
  for (float& v : f.x) v = normal(rng);
  f.y.resize(static_cast<std::size_t>(n_tok * s.rows));
  return f;
}

// A weight matrix with its batch already converted to the kernels' activation format, for
// benchmarks that call the dot kernels directly; `kern`/`invariant` are this CPU's kernel for the
// type and the multi-output kernels of its batch-invariant order (null where there are none).
struct QuantizedFixture {
  std::vector<std::uint8_t> w, a;
  std::size_t w_stride = 0, a_stride = 0;
  std::vector<float> y;
  const kernels::DotKernel* kern = nullptr;
  const kernels::MultiDot* invariant = nullptr;
};

inline QuantizedFixture make_quantized_fixture(GgmlType type, Shape s, kernels::ActFormat format, std::int64_t n_tok) {
  namespace k = kernels;
  std::mt19937 rng(5);
  QuantizedFixture f;
  f.w = test::random_matrix(type, s.rows, s.cols, rng);
  f.w_stride = block_type(type).row_bytes(s.cols);
  f.a_stride = k::act_row_bytes(format, s.cols);
  f.a.resize(f.a_stride * static_cast<std::size_t>(n_tok));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(s.cols));
  for (std::int64_t t = 0; t < n_tok; ++t) {
    for (float& v : x) v = normal(rng);
    k::convert_act_row(format, x.data(), f.a.data() + f.a_stride * static_cast<std::size_t>(t), s.cols);
  }
  f.y.resize(static_cast<std::size_t>(n_tok * s.rows));
  f.kern = k::find_dot_kernel(static_cast<std::uint32_t>(type));
  if (f.kern != nullptr && f.kern->dot_invariant != nullptr)
    f.invariant = k::find_multi_dot(*f.kern, f.kern->dot_invariant);
  return f;
}

inline void set_gflops(benchmark::State& st, Shape s, std::int64_t n_tok) {
  st.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(s.rows * s.cols * n_tok) * st.iterations() / 1e9, benchmark::Counter::kIsRate);
}

// main() of a benchmark whose cases are registered at run time by `register_all`.
inline int run_benchmarks(int argc, char** argv, void (*register_all)()) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace wisp::bench
