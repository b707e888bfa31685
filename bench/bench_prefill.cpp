// Prefill matmul, two ways, at SmolLM2-135M's shapes and a 512-token batch: wisp's integer path
// (activations quantized to 8 bits once, then the multi-output dot kernels on the stored blocks:
// what the runtime uses, bit-identical to llama.cpp) against dequantizing a tile of weight rows
// to f32 and multiplying it with OpenBLAS's sgemm. Counter: GFLOP/s (2 x rows x cols x tokens).
// One thread each (OpenBLAS is asked for one too), so the numbers compare per-core arithmetic.
//
//   ./build/bench/bench_prefill --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <random>
#include <vector>

#include "formats/block_types.h"
#include "kernels/matmul.h"
#include "matmul_bench.h"
#include "random_blocks.h"

namespace {

using wisp::GgmlType;

constexpr std::int64_t kTokens = 512;
constexpr std::int64_t kTileRows = 64;  // weight rows dequantized per sgemm call (L2-sized tile)

using wisp::bench::Shape;

using Fixture = wisp::bench::MatmulFixture;

Fixture make(GgmlType type, Shape s) { return wisp::bench::make_matmul_fixture(type, s, kTokens); }
void set_counters(benchmark::State& st, Shape s) { wisp::bench::set_gflops(st, s, kTokens); }

void BM_IntegerGemm(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  wisp::kernels::MatmulScratch scratch;
  wisp::ThreadPool pool(1);  // one thread, as the OpenBLAS side below
  for (auto _ : st) {
    wisp::kernels::matmul(f.view, f.x.data(), s.cols, kTokens, f.y.data(), s.rows, scratch, pool);
    benchmark::DoNotOptimize(f.y.data());
  }
  set_counters(st, s);
}

void BM_DequantSgemm(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  openblas_set_num_threads(1);
  std::vector<float> tile(static_cast<std::size_t>(kTileRows * s.cols));
  for (auto _ : st) {
    for (std::int64_t r0 = 0; r0 < s.rows; r0 += kTileRows) {
      const std::int64_t nr = std::min(kTileRows, s.rows - r0);
      for (std::int64_t r = 0; r < nr; ++r) wisp::kernels::dequantize_row(f.view, r0 + r, tile.data() + r * s.cols);
      // y[t][r0 + r] = sum_c x[t][c] * tile[r][c]: (tokens x cols) * (cols x nr), row-major.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(kTokens), static_cast<int>(nr),
                  static_cast<int>(s.cols), 1.0f, f.x.data(), static_cast<int>(s.cols), tile.data(),
                  static_cast<int>(s.cols), 0.0f, f.y.data() + r0, static_cast<int>(s.rows));
    }
    benchmark::DoNotOptimize(f.y.data());
  }
  set_counters(st, s);
}

void register_all() {
  const struct {
    const char* name;
    Shape shape;
  } shapes[] = {{"attn_q_576x576", {576, 576}}, {"ffn_up_576x1536", {1536, 576}}, {"ffn_down_1536x576", {576, 1536}}};
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ8_0, GgmlType::kQ6_K}) {
    for (const auto& sh : shapes) {
      if (sh.shape.cols % wisp::block_type(type).block_elems != 0) continue;
      const std::string suffix = std::string(wisp::block_type(type).name) + "/" + sh.name;
      benchmark::RegisterBenchmark(("integer/" + suffix).c_str(), BM_IntegerGemm, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("dequant_sgemm/" + suffix).c_str(), BM_DequantSgemm, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return wisp::bench::run_benchmarks(argc, argv, register_all); }
