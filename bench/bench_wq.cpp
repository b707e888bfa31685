// wisp's WQ types, the float reference order (DotKernel::dot on F32 activations; the default
// path before the integer order, now --exact's) against the integer order (dot_invariant on
// kQ8_0Split, MultiDot::gemm8 for batches), beside Q4_0's blocks8 kernels at the same bits per
// weight, on the Llama-3.2-1B shape's matrices, one thread. decode/*: every row against one token
// (counter: weight GB/s); prefill/*: 128 tokens (the float order four tokens per row call, as
// the matmul ran it; the integer order's GEMM; counter: GFLOP/s). Both orders' bits are tested
// elsewhere (test_wq_blocks8, test_x86_kernels); this measures only their speed.
//
//   ./build/bench/bench_wq --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "formats/wq_format.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/multi_dots.h"
#include "matmul_bench.h"

namespace {

namespace k = wisp::kernels;
using wisp::bench::Shape;

constexpr std::int64_t kTokens = 128;

// Weights quantized from normal values (real headers: finite scales, zero-points in range), their
// F32 activations and the same rows in kQ8_0Split.
struct Fixture {
  std::vector<std::uint8_t> w, a;
  std::vector<float> x, y;
  std::size_t w_stride = 0, a_stride = 0;
  const k::DotKernel* kern = nullptr;
};

Fixture make(std::uint32_t type, Shape s, std::int64_t n_tok) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Fixture f;
  const wisp::BlockTypeInfo& info = *wisp::find_block_type(type);
  f.w_stride = info.row_bytes(s.cols);
  f.w.resize(f.w_stride * static_cast<std::size_t>(s.rows));
  std::vector<float> row(static_cast<std::size_t>(s.cols));
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (float& v : row) v = normal(rng) * 0.02f;
    info.quantize(row.data(), f.w.data() + f.w_stride * static_cast<std::size_t>(r), s.cols);
  }
  f.x.resize(static_cast<std::size_t>(n_tok * s.cols));
  for (float& v : f.x) v = normal(rng);
  f.a_stride = k::act_row_bytes(k::ActFormat::kQ8_0Split, s.cols);
  f.a.resize(f.a_stride * static_cast<std::size_t>(n_tok));
  for (std::int64_t t = 0; t < n_tok; ++t)
    k::convert_act_row(k::ActFormat::kQ8_0Split, f.x.data() + t * s.cols, f.a.data() + f.a_stride * t, s.cols);
  f.y.resize(static_cast<std::size_t>(n_tok * s.rows));
  f.kern = k::find_dot_kernel(type);
  return f;
}

void BM_Decode(benchmark::State& st, std::uint32_t type, Shape s, bool integer) {
  Fixture f = make(type, s, 1);
  if (integer && f.kern->dot_invariant == nullptr) return st.SkipWithError("no integer kernel on this CPU");
  const k::DotFn dot = integer ? f.kern->dot_invariant : f.kern->dot;
  const void* act = integer ? static_cast<const void*>(f.a.data()) : static_cast<const void*>(f.x.data());
  for (auto _ : st) {
    for (std::int64_t r = 0; r < s.rows; ++r) f.y[r] = dot(f.w.data() + f.w_stride * r, act, s.cols);
    benchmark::DoNotOptimize(f.y.data());
  }
  st.counters["GB/s"] =
      benchmark::Counter(static_cast<double>(f.w.size()) * st.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_Prefill(benchmark::State& st, std::uint32_t type, Shape s, bool integer) {
  Fixture f = make(type, s, kTokens);
  const k::MultiDot* m = k::find_multi_dot(*f.kern, integer ? f.kern->dot_invariant : f.kern->dot);
  if (m == nullptr || (integer ? m->gemm8 == nullptr : m->tok4 == nullptr))
    return st.SkipWithError("no multi-output kernel on this CPU");
  std::vector<std::uint8_t> scratch(k::gemm8_scratch_bytes(s.cols, m->gemm_rows));
  float o[4];
  for (auto _ : st) {
    if (integer) {
      for (std::int64_t r = 0; r < s.rows; r += m->gemm_rows) {
        m->gemm8(f.w.data() + f.w_stride * r, f.w_stride, m->gemm_rows, f.a.data(), f.a_stride, kTokens, s.cols,
                 f.y.data() + r, s.rows, scratch.data());
      }
    } else {
      for (std::int64_t r = 0; r < s.rows; ++r) {
        for (std::int64_t t = 0; t < kTokens; t += 4) {
          m->tok4(f.w.data() + f.w_stride * r, f.x.data() + t * s.cols, s.cols * sizeof(float), s.cols, o);
          for (int q = 0; q < 4; ++q) f.y[(t + q) * s.rows + r] = o[q];
        }
      }
    }
    benchmark::DoNotOptimize(f.y.data());
  }
  wisp::bench::set_gflops(st, s, kTokens);
}

void register_all() {
  const struct {
    const char* name;
    Shape shape;
  } shapes[] = {{"attn_q_2048x2048", {2048, 2048}}, {"ffn_down_8192x2048", {2048, 8192}}};
  const std::uint32_t q4_0 = static_cast<std::uint32_t>(wisp::GgmlType::kQ4_0);
  const std::uint32_t types[] = {wisp::wq_type_id(4, 64), wisp::wq_type_id(4, 32), wisp::wq_type_id(3, 64),
                                 wisp::wq_type_id(2, 64), wisp::wq_type_id(8, 64), q4_0};
  for (std::uint32_t type : types) {
    for (const auto& sh : shapes) {
      const std::string suffix = std::string(wisp::find_block_type(type)->name) + "/" + sh.name;
      for (bool integer : {false, true}) {
        if (type == q4_0 && !integer) continue;  // Q4_0's blocks8 kernels only, as the reference speed
        const std::string order = integer ? "int/" : "float/";
        benchmark::RegisterBenchmark(("decode/" + order + suffix).c_str(), BM_Decode, type, sh.shape, integer)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("prefill/" + order + suffix).c_str(), BM_Prefill, type, sh.shape, integer)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return wisp::bench::run_benchmarks(argc, argv, register_all); }
