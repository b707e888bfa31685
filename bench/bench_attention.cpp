// Prefill and decode attention of the 1B shape (32 query heads, 8 kv heads, head_dim 64) and of
// SmolLM2-135M (9 / 3, 64) over an f16 paged cache (blocks of 16 positions), one thread, in the
// engine's default numerics (the one-token order for every query, kernels/attention.h):
//   - Prefill/N: a prompt of N tokens from position 0 in one call (one layer of a pp N step);
//   - Decode/N: one token at position N - 1 (one layer of a decode step after N tokens).
// Counters: tok/s of the call's queries, and the kernel's positions (query x key pairs) per second.
//
//   ./build/bench/bench_attention --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "formats/half_rows.h"
#include "kernels/attention.h"
#include "kv/kv_quant.h"

namespace {

struct Shape {
  int n_heads, n_kv_heads;
  std::int64_t head_dim;
};

constexpr std::int64_t kBlock = 16;

struct Fixture {
  std::vector<std::uint16_t> k, v;  // [block][kv head][slot][dim]
  std::vector<const std::byte*> kb, vb;
  std::vector<float> q, out;
  wisp::kernels::PagedKvRows kv;
  wisp::kernels::AttentionParams p;

  Fixture(Shape s, std::int64_t n_pos, std::int64_t n_tok) {
    const std::int64_t blocks = (n_pos + kBlock - 1) / kBlock;
    const std::int64_t plane = kBlock * s.head_dim;
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> f(static_cast<std::size_t>(blocks * s.n_kv_heads * plane));
    for (float& x : f) x = nd(rng);
    k.resize(f.size());
    wisp::f32_to_f16_row(f.data(), k.data(), static_cast<std::int64_t>(f.size()));
    for (float& x : f) x = nd(rng);
    v.resize(f.size());
    wisp::f32_to_f16_row(f.data(), v.data(), static_cast<std::int64_t>(f.size()));
    for (std::int64_t b = 0; b < blocks; ++b) {
      kb.push_back(reinterpret_cast<const std::byte*>(k.data() + b * s.n_kv_heads * plane));
      vb.push_back(reinterpret_cast<const std::byte*>(v.data() + b * s.n_kv_heads * plane));
    }
    kv.k_blocks = kb;
    kv.v_blocks = vb;
    kv.head_stride = plane * 2;
    kv.row_bytes = s.head_dim * 2;
    kv.block_size = kBlock;
    kv.head_dim = s.head_dim;
    kv.decode = wisp::kv_row_decoder(wisp::KvType::kF16);  // the f16 cache's own decoder
    const std::int64_t width = s.n_heads * s.head_dim;
    q.resize(static_cast<std::size_t>(n_tok * width));
    for (float& x : q) x = nd(rng);
    out.resize(q.size());
    p.n_heads = s.n_heads;
    p.n_kv_heads = s.n_kv_heads;
    p.kq_scale = 0.125f;
    p.batch_invariant = true;
  }
};

void run(benchmark::State& st, Shape s, std::int64_t n_pos, std::int64_t n_tok) {
  Fixture f(s, n_pos, n_tok);
  wisp::ThreadPool pool(1);
  const std::int64_t width = s.n_heads * s.head_dim;
  const std::int64_t pos0 = n_pos - n_tok;
  for (auto _ : st) {
    wisp::kernels::attention(f.q.data(), width, n_tok, pos0, f.kv, f.p, f.out.data(), width, pool);
    benchmark::DoNotOptimize(f.out.data());
  }
  double pairs = 0;
  for (std::int64_t t = 0; t < n_tok; ++t) pairs += static_cast<double>(pos0 + t + 1);
  st.counters["tok/s"] = benchmark::Counter(static_cast<double>(n_tok), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["Mpairs/s"] = benchmark::Counter(pairs * s.n_heads / 1e6, benchmark::Counter::kIsIterationInvariantRate);
}

constexpr Shape k1B{32, 8, 64};
constexpr Shape kSmol{9, 3, 64};

}  // namespace

BENCHMARK_CAPTURE(run, Prefill1B / 128, k1B, 128, 128)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, Prefill1B / 512, k1B, 512, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, Decode1B / 512, k1B, 512, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(run, PrefillSmol / 512, kSmol, 512, 512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, DecodeSmol / 512, kSmol, 512, 1)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
