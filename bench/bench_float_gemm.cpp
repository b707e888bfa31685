// Float-weight prefill (F32, F16, BF16), three ways, at SmolLM2-135M's and the 1B shape's matrices
// and a 128-token batch, one thread each (OpenBLAS is asked for one too):
//   - lanes8_gemm: the matmul's default (batch-invariant) path, wisp's 8-lane order as register
//     tiles (kernels/float_gemm.h);
//   - one_token_ggml: what that path ran before, ggml's one-token dot per (row, token) on
//     activations converted to the weight type;
//   - convert_sgemm: weight rows converted to f32 per 64-row tile, then OpenBLAS's sgemm.
// Counter: GFLOP/s (2 x rows x cols x tokens). convert_sgemm also reports `invariant`: 1 when
// token 0's outputs from the 128-token call equal, bit for bit, those of a call with token 0
// alone (the batch-invariance rule of src/kernels/README.md), else 0.
//
//   ./build/bench/bench_float_gemm --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/matmul.h"
#include "matmul_bench.h"
#include "random_blocks.h"

namespace {

using wisp::GgmlType;

constexpr std::int64_t kTokens = 128;
constexpr std::int64_t kTileRows = 64;  // weight rows converted per sgemm call

using wisp::bench::Shape;

using Fixture = wisp::bench::MatmulFixture;

Fixture make(GgmlType type, Shape s) { return wisp::bench::make_matmul_fixture(type, s, kTokens); }
void set_counters(benchmark::State& st, Shape s) { wisp::bench::set_gflops(st, s, kTokens); }

void BM_Lanes8Gemm(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  wisp::kernels::MatmulScratch scratch;
  wisp::ThreadPool pool(1);
  for (auto _ : st) {
    wisp::kernels::matmul(f.view, f.x.data(), s.cols, kTokens, f.y.data(), s.rows, scratch, pool,
                          wisp::kernels::DotOrder::kBatchInvariant);
    benchmark::DoNotOptimize(f.y.data());
  }
  set_counters(st, s);
}

void BM_OneTokenGgml(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  const wisp::kernels::DotKernel* k = wisp::kernels::find_dot_kernel(static_cast<std::uint32_t>(type));
  const std::size_t act_bytes = wisp::kernels::act_row_bytes(k->act, s.cols);
  std::vector<std::uint8_t> act(act_bytes * kTokens);
  for (auto _ : st) {
    for (std::int64_t t = 0; t < kTokens; ++t) {
      wisp::kernels::convert_act_row(k->act, f.x.data() + t * s.cols, act.data() + t * act_bytes, s.cols);
    }
    for (std::int64_t r = 0; r < s.rows; ++r) {
      for (std::int64_t t = 0; t < kTokens; ++t) {
        f.y[t * s.rows + r] = k->dot(f.view.row(r), act.data() + t * act_bytes, s.cols);
      }
    }
    benchmark::DoNotOptimize(f.y.data());
  }
  set_counters(st, s);
}

void convert_sgemm(const Fixture& f, Shape s, std::int64_t n_tok, std::vector<float>& tile, float* y) {
  for (std::int64_t r0 = 0; r0 < s.rows; r0 += kTileRows) {
    const std::int64_t nr = std::min(kTileRows, s.rows - r0);
    for (std::int64_t r = 0; r < nr; ++r) wisp::kernels::dequantize_row(f.view, r0 + r, tile.data() + r * s.cols);
    // y[t][r0 + r] = sum_c x[t][c] * tile[r][c]: (tokens x cols) * (cols x nr), row-major.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n_tok), static_cast<int>(nr),
                static_cast<int>(s.cols), 1.0f, f.x.data(), static_cast<int>(s.cols), tile.data(),
                static_cast<int>(s.cols), 0.0f, y + r0, static_cast<int>(s.rows));
  }
}

void BM_ConvertSgemm(benchmark::State& st, GgmlType type, Shape s) {
  Fixture f = make(type, s);
  openblas_set_num_threads(1);
  std::vector<float> tile(static_cast<std::size_t>(kTileRows * s.cols));
  for (auto _ : st) {
    convert_sgemm(f, s, kTokens, tile, f.y.data());
    benchmark::DoNotOptimize(f.y.data());
  }
  set_counters(st, s);
  std::vector<float> solo(static_cast<std::size_t>(s.rows));
  convert_sgemm(f, s, 1, tile, solo.data());
  st.counters["invariant"] = std::memcmp(solo.data(), f.y.data(), solo.size() * sizeof(float)) == 0 ? 1 : 0;
}

void register_all() {
  const struct {
    const char* name;
    Shape shape;
  } shapes[] = {{"smollm2_ffn_up_1536x576", {1536, 576}},
                {"smollm2_ffn_down_576x1536", {576, 1536}},
                {"1b_attn_q_2048x2048", {2048, 2048}},
                {"1b_ffn_up_8192x2048", {8192, 2048}},
                {"1b_ffn_down_2048x8192", {2048, 8192}}};
  for (GgmlType type : {GgmlType::kF16, GgmlType::kBF16, GgmlType::kF32}) {
    for (const auto& sh : shapes) {
      const std::string suffix = std::string(wisp::block_type(type).name) + "/" + sh.name;
      benchmark::RegisterBenchmark(("lanes8_gemm/" + suffix).c_str(), BM_Lanes8Gemm, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("one_token_ggml/" + suffix).c_str(), BM_OneTokenGgml, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("convert_sgemm/" + suffix).c_str(), BM_ConvertSgemm, type, sh.shape)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return wisp::bench::run_benchmarks(argc, argv, register_all); }
