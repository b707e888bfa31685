// Decode matmul streamed from DRAM: one token against a 2048 x 8192 weight matrix (the 1B shape's
// ffn_down) through kernels::matmul in the engine's batch-invariant order, so the measured path is
// decode's own dispatch (the one-token kernel or its multi-row variant, the activation quantization
// and the pool split). The matrix alone fits a 32 MiB L3, so the benchmark cycles through copies
// totalling at least 256 MiB: every iteration reads its weights from DRAM, as a decode step does.
// Reported: weight bytes per CPU second of the calling thread (one thread: the kernel's streaming
// rate, to compare with `wisp bench --bandwidth`'s per-core rate). Run: build/bench/bench_decode.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "formats/block_types.h"
#include "kernels/matmul.h"
#include "random_blocks.h"

namespace {

using namespace wisp;

constexpr std::int64_t kCols = 8192, kRows = 2048;
constexpr std::size_t kStreamBytes = std::size_t{256} << 20;

void decode_matmul(benchmark::State& state, GgmlType type, int threads) {
  std::mt19937 rng(11);
  const std::vector<std::uint8_t> one = test::random_matrix(type, kRows, kCols, rng);
  const std::size_t copies = (kStreamBytes + one.size() - 1) / one.size();
  std::vector<std::uint8_t> w(one.size() * copies);
  for (std::size_t c = 0; c < copies; ++c) std::memcpy(w.data() + c * one.size(), one.data(), one.size());
  std::vector<float> x(kCols), y(kRows);
  std::normal_distribution<float> normal;
  for (float& v : x) v = normal(rng);
  ThreadPool pool(threads);
  kernels::MatmulScratch scratch;
  kernels::MatrixView m{.data = nullptr,
                        .type_id = static_cast<std::uint32_t>(type),
                        .n_cols = kCols,
                        .n_rows = kRows,
                        .row_bytes = one.size() / kRows};
  std::size_t c = 0;
  for (auto _ : state) {
    m.data = w.data() + c * one.size();
    c = (c + 1) % copies;
    kernels::matmul(m, x.data(), kCols, 1, y.data(), kRows, scratch, pool, kernels::DotOrder::kBatchInvariant);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["bytes/s"] = benchmark::Counter(
      static_cast<double>(one.size()), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

const int kRegistered = [] {
  for (GgmlType t :
       {GgmlType::kQ4_0, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kIQ4_XS, GgmlType::kF16}) {
    for (int threads : {1, 2}) {
      const std::string name =
          std::string("decode/") + block_type(t).name + "/2048x8192.dram/t" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), decode_matmul, t, threads)->MeasureProcessCPUTime();
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
