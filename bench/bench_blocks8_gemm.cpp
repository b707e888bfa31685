// wisp's blocks8 order in prefill, two ways, on the Llama-3.2-1B shape's matrices (models/shapes/)
// and a 128-token batch, one thread: the four-token kernel along each row (MultiDot::tok4, the
// path before the GEMM) against the 8-row GEMM (MultiDot::gemm8, rows in vector lanes). Both give
// the same bits (test_multi_dots); this measures only their speed. Counter: GFLOP/s.
//
//   ./build/bench/bench_blocks8_gemm --benchmark_counters_tabular=true
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

using wisp::bench::Shape;

using Fixture = wisp::bench::QuantizedFixture;

Fixture make(GgmlType type, Shape s) {
  return wisp::bench::make_quantized_fixture(type, s, k::ActFormat::kQ8_0Split, kTokens);
}

void set_counters(benchmark::State& st, Shape s) { wisp::bench::set_gflops(st, s, kTokens); }

// As the matmul ran it before the GEMM: 16-row chunks, each row against every token four at a time.
void BM_Tok4(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  if (f.invariant == nullptr || f.invariant->tok4 == nullptr)
    return st.SkipWithError("no four-token kernel on this CPU");
  float o[4];
  for (auto _ : st) {
    for (std::int64_t r = 0; r < s.rows; ++r) {
      for (std::int64_t t = 0; t < kTokens; t += 4) {
        f.invariant->tok4(f.w.data() + f.w_stride * r, f.a.data() + f.a_stride * t, f.a_stride, s.cols, o);
        for (int q = 0; q < 4; ++q) f.y[(t + q) * s.rows + r] = o[q];
      }
    }
    benchmark::DoNotOptimize(f.y.data());
  }
  set_counters(st, s);
}

void BM_Gemm8(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  if (f.invariant == nullptr || f.invariant->gemm8 == nullptr) return st.SkipWithError("no GEMM on this CPU");
  std::vector<std::uint8_t> scratch(k::gemm8_scratch_bytes(s.cols, f.invariant->gemm_rows));
  for (auto _ : st) {
    for (std::int64_t r = 0; r < s.rows; r += f.invariant->gemm_rows) {
      f.invariant->gemm8(f.w.data() + f.w_stride * r, f.w_stride, f.invariant->gemm_rows, f.a.data(), f.a_stride,
                         kTokens, s.cols, f.y.data() + r, s.rows, scratch.data());
    }
    benchmark::DoNotOptimize(f.y.data());
  }
  set_counters(st, s);
}

void register_all() {
  const struct {
    const char* name;
    Shape shape;
  } shapes[] = {
      {"attn_q_2048x2048", {2048, 2048}}, {"ffn_up_2048x8192", {8192, 2048}}, {"ffn_down_8192x2048", {2048, 8192}}};
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0}) {
    for (const auto& sh : shapes) {
      const std::string suffix = std::string(wisp::block_type(type).name) + "/" + sh.name;
      benchmark::RegisterBenchmark(("tok4/" + suffix).c_str(), BM_Tok4, type, sh.shape)->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("gemm8/" + suffix).c_str(), BM_Gemm8, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return wisp::bench::run_benchmarks(argc, argv, register_all); }
