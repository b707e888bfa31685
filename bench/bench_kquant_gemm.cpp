// wisp's K-quant order in prefill (Q2_K .. Q6_K) on the Llama-3.2-1B shape's matrices (models/shapes/)
// and a 128-token batch, one thread, three ways: llama.cpp's one-token order for every token (the
// batch-invariant path before wisp's order: DotKernel::dot, or the repacked GEMV for rows % 8 == 0),
// wisp's one-token kernel for every token (dot_invariant), and its GEMM (MultiDot::gemm8, rows in
// vector lanes: 8 on AVX2, 16 on AVX-512, gemm_rows per call; the same bits as dot_invariant,
// test_kquant_super8). WISP_ISA=avx2 runs the 8-row form on an AVX-512 machine. All walk 16-row chunks
// against every token, as the matmul does. Counter: GFLOP/s.
//
//   ./build/bench/bench_kquant_gemm --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/multi_dots.h"
#include "matmul_bench.h"
#include "random_blocks.h"

namespace {

using wisp::GgmlType;
namespace k = wisp::kernels;

constexpr std::int64_t kTokens = 128;
constexpr std::int64_t kChunk = 16;

using wisp::bench::Shape;

using Fixture = wisp::bench::QuantizedFixture;

Fixture make(GgmlType type, Shape s) {
  return wisp::bench::make_quantized_fixture(type, s, k::ActFormat::kQ8_K, kTokens);
}

void per_token(benchmark::State& st, Fixture& f, Shape s, k::DotFn dot) {
  for (auto _ : st) {
    for (std::int64_t r0 = 0; r0 < s.rows; r0 += kChunk) {
      for (std::int64_t t = 0; t < kTokens; ++t) {
        for (std::int64_t r = r0; r < r0 + kChunk; ++r)
          f.y[t * s.rows + r] = dot(f.w.data() + f.w_stride * r, f.a.data() + f.a_stride * t, s.cols);
      }
    }
    benchmark::DoNotOptimize(f.y.data());
  }
  wisp::bench::set_gflops(st, s, kTokens);
}

void BM_GgmlOneToken(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  if (f.kern == nullptr) return st.SkipWithError("no kernel");
  per_token(st, f, s, f.kern->repacked(s.rows) ? f.kern->dot_repacked : f.kern->dot);
}

void BM_Super8OneToken(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  if (f.kern == nullptr || f.kern->dot_invariant == nullptr) return st.SkipWithError("no wisp order on this CPU");
  per_token(st, f, s, f.kern->dot_invariant);
}

void BM_Gemm8(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  if (f.invariant == nullptr || f.invariant->gemm8 == nullptr) return st.SkipWithError("no GEMM on this CPU");
  const int rows = f.invariant->gemm_rows;
  std::vector<std::uint8_t> scratch(k::gemm8_scratch_bytes(s.cols, rows));
  for (auto _ : st) {
    for (std::int64_t r = 0; r < s.rows; r += rows) {
      f.invariant->gemm8(f.w.data() + f.w_stride * r, f.w_stride, rows, f.a.data(), f.a_stride, kTokens, s.cols,
                         f.y.data() + r, s.rows, scratch.data());
    }
    benchmark::DoNotOptimize(f.y.data());
  }
  wisp::bench::set_gflops(st, s, kTokens);
}

void register_all() {
  const struct {
    const char* name;
    Shape shape;
  } shapes[] = {
      {"attn_q_2048x2048", {2048, 2048}}, {"ffn_up_2048x8192", {8192, 2048}}, {"ffn_down_8192x2048", {2048, 8192}}};
  for (GgmlType type :
       {GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kIQ4_XS}) {
    for (const auto& sh : shapes) {
      const std::string suffix = std::string(wisp::block_type(type).name) + "/" + sh.name;
      benchmark::RegisterBenchmark(("ggml_one_token/" + suffix).c_str(), BM_GgmlOneToken, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("super8_one_token/" + suffix).c_str(), BM_Super8OneToken, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("gemm8/" + suffix).c_str(), BM_Gemm8, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return wisp::bench::run_benchmarks(argc, argv, register_all); }
