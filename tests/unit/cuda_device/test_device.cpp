// The CUDA backend on a device (built with -DWISP_CUDA=ON; every test skips, naming why, on a
// machine without one — scripts/device_check runs them where there is one):
//   - the device's activation quantizer writes block_math.h's bytes, and its matmul equals a host
//     emulation of the kernel's order (lane partial sums, then the shuffle tree) bit for bit, for
//     every block type the backend runs;
//   - batch invariance on the device: a sequence's logits alone and batched are the same bits
//     (f16, f32 and q8_0 KV);
//   - end to end on a real model: the device's logits agree with the CPU's (top-1, mean KL);
//   - the errors: a KV type the device lacks, a pool that does not fit.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../model/tiny_model.h"
#include "cuda/block_math.h"
#include "cuda/cuda_backend.h"
#include "cuda/device_kernels.h"
#include "cuda/step_graph.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "formats/wq_format.h"
#include "kv/kv_quant.h"
#include "wisp/engine.h"
#include "wisp/error.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace wisp::cuda {
namespace {

#define REQUIRE_DEVICE()                                 \
  do {                                                   \
    std::string why;                                     \
    if (list_devices(&why).empty()) GTEST_SKIP() << why; \
  } while (0)

template <class T>
struct DeviceArray {
  T* p = nullptr;
  explicit DeviceArray(std::size_t n) {
    EXPECT_EQ(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)), cudaSuccess);
  }
  DeviceArray(const std::vector<T>& v) : DeviceArray(v.size()) {
    EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(p); }
  std::vector<T> get(std::size_t n) const {
    std::vector<T> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }
};

// The kernel's order on the host: lane l adds chunks l, l + 32, ... in turn, then the lanes are
// added by the xor-shuffle tree (every lane ends with the same sum; lane 0's is written).
float emulate_row(const std::vector<float>& chunk_dots) {
  float lane[32] = {};
  for (std::size_t c = 0; c < chunk_dots.size(); ++c) lane[c % 32] = lane[c % 32] + chunk_dots[c];
  for (int off = 16; off > 0; off /= 2) {
    float next[32];
    for (int l = 0; l < 32; ++l) next[l] = lane[l] + lane[l ^ off];
    std::memcpy(lane, next, sizeof lane);
  }
  return lane[0];
}

std::vector<std::uint32_t> quantized_types() {
  std::vector<std::uint32_t> t = {type_id::kQ4_0, type_id::kQ4_1, type_id::kQ5_0, type_id::kQ5_1, type_id::kQ8_0,
                                  type_id::kQ2_K, type_id::kQ3_K, type_id::kQ4_K, type_id::kQ5_K, type_id::kQ6_K};
  for (int bits : kWqBits) {
    for (int g : kWqGroups) t.push_back(wq_type_id(bits, g));
  }
  return t;
}

// A row of random blocks whose half scales are finite and small (so no dot overflows).
std::vector<std::uint8_t> random_rows(const BlockTypeInfo& info, std::int64_t n_rows, std::int64_t n_cols,
                                      std::mt19937& rng) {
  std::vector<float> x(static_cast<std::size_t>(n_cols));
  std::normal_distribution<float> g(0.0f, 0.05f);
  const std::size_t row_bytes = info.block_bytes * static_cast<std::size_t>(n_cols / info.block_elems);
  std::vector<std::uint8_t> out(row_bytes * static_cast<std::size_t>(n_rows));
  for (std::int64_t r = 0; r < n_rows; ++r) {
    if (info.quantize != nullptr) {
      for (auto& v : x) v = g(rng);
      info.quantize(x.data(), out.data() + r * row_bytes, n_cols);
    } else {
      // No reference quantizer (the K-quants): random codes and scales.
      for (std::size_t i = 0; i < row_bytes; ++i) out[r * row_bytes + i] = static_cast<std::uint8_t>(rng());
      std::vector<float> check(static_cast<std::size_t>(n_cols));
      info.dequantize(out.data() + r * row_bytes, check.data(), n_cols);
      for (float v : check) {
        if (!std::isfinite(v) || std::fabs(v) > 1e4f) {
          // Replace the row by zeros: its scales came out huge.
          std::fill(out.begin() + static_cast<std::ptrdiff_t>(r * row_bytes),
                    out.begin() + static_cast<std::ptrdiff_t>((r + 1) * row_bytes), std::uint8_t{0});
          break;
        }
      }
    }
  }
  return out;
}

// block_math.h's q8_0 KV functions (what the device's KV writes and attention reads use) against
// the CPU pool's encoder and decoder, on the host (no device needed): the same bytes, the same values.
TEST(CudaKvQ8_0, EncodesAndDecodesAsTheCpuPool) {
  std::mt19937 rng(8);
  std::normal_distribution<float> g(0.0f, 2.0f);
  for (int head_dim : {32, 64, 80, 128}) {  // 80: a partial last group
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> x(static_cast<std::size_t>(head_dim));
      for (auto& v : x) v = g(rng);
      if (trial == 0) std::fill(x.begin(), x.end(), 0.0f);  // zero scale
      if (trial == 1) x[0] = 62.5f, x[1] = -127.0f;         // scale 1: a tie at half a code (away: 63, even: 62)
      const std::size_t groups = (x.size() + 31) / 32;
      std::vector<std::byte> want(groups * kKvQ8Bytes);
      kv_encode_row(KvType::kQ8_0, x.data(), head_dim, want.data());
      std::vector<std::uint8_t> got(groups * kKvQ8Bytes);
      for (std::size_t gi = 0; gi < groups; ++gi) {
        float amax = 0.0f;
        for (std::size_t j = 32 * gi; j < std::min(x.size(), 32 * gi + 32); ++j) amax = std::max(amax, std::fabs(x[j]));
        float inv = 0.0f;
        const std::uint16_t d = kv_q8_0_scale(amax, inv);
        got[gi * kKvQ8Bytes] = static_cast<std::uint8_t>(d & 0xff);
        got[gi * kKvQ8Bytes + 1] = static_cast<std::uint8_t>(d >> 8);
        for (std::size_t j = 0; j < 32; ++j) {
          const std::size_t i = 32 * gi + j;
          got[gi * kKvQ8Bytes + 2 + j] = static_cast<std::uint8_t>(kv_q8_0_code(i < x.size() ? x[i] : 0.0f, inv));
        }
      }
      ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << "head_dim " << head_dim << " trial " << trial;
      std::vector<float> dec(x.size());
      kv_decode_row(KvType::kQ8_0, want.data(), head_dim, dec.data());
      for (int d = 0; d < head_dim; ++d) {
        const float v = kv_q8_0_value(got.data(), d);
        ASSERT_EQ(std::memcmp(&v, &dec[static_cast<std::size_t>(d)], 4), 0)
            << "head_dim " << head_dim << " value " << d;
      }
    }
  }
}

TEST(CudaDevice, MatmulEqualsTheHostEmulationOfItsOrderForEveryType) {
  REQUIRE_DEVICE();
  std::mt19937 rng(1);
  const std::int64_t n_rows = 37, n_cols = 1024, n_tok = 11;
  std::vector<float> x(static_cast<std::size_t>(n_tok * n_cols));
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (auto& v : x) v = g(rng);
  DeviceArray<float> dx(x);
  const std::int64_t n_chunks = n_cols / kChunk;
  DeviceArray<ActChunk> dact(static_cast<std::size_t>(n_tok * n_chunks));
  launch_quantize_act(dx.p, n_cols, n_tok, n_cols, dact.p, nullptr);
  const std::vector<ActChunk> act = dact.get(static_cast<std::size_t>(n_tok * n_chunks));
  for (std::int64_t i = 0; i < n_tok * n_chunks; ++i) {
    ActChunk want{};
    quantize_act_chunk(x.data() + i * kChunk, want);
    ASSERT_EQ(std::memcmp(act[i].q, want.q, kChunk), 0) << "activation chunk " << i;
    ASSERT_EQ(act[i].d, want.d);
    ASSERT_EQ(act[i].sum[0], want.sum[0]);
    ASSERT_EQ(act[i].sum[1], want.sum[1]);
  }
  for (std::uint32_t t : quantized_types()) {
    const BlockTypeInfo* info = find_block_type(t);
    ASSERT_NE(info, nullptr);
    const std::vector<std::uint8_t> w = random_rows(*info, n_rows, n_cols, rng);
    const std::size_t row_bytes = w.size() / static_cast<std::size_t>(n_rows);
    DeviceArray<std::uint8_t> dw(w);
    DeviceArray<float> dy(static_cast<std::size_t>(n_tok * n_rows));
    launch_matmul_q({dw.p, t, n_cols, n_rows, row_bytes}, dact.p, n_tok, dy.p, n_rows, nullptr);
    const std::vector<float> y = dy.get(static_cast<std::size_t>(n_tok * n_rows));
    for (std::int64_t tok = 0; tok < n_tok; ++tok) {
      for (std::int64_t r = 0; r < n_rows; ++r) {
        std::vector<float> dots;
        for (std::int64_t c = 0; c < n_chunks; ++c) {
          WeightChunk wc{};
          decode_chunk(t, w.data() + r * row_bytes, c, wc);
          dots.push_back(chunk_dot(wc, act[static_cast<std::size_t>(tok * n_chunks + c)]));
        }
        const float want = emulate_row(dots);
        const float got = y[static_cast<std::size_t>(tok * n_rows + r)];
        ASSERT_EQ(std::memcmp(&got, &want, 4), 0)
            << info->name << " token " << tok << " row " << r << ": " << got << " vs " << want;
      }
    }
  }
}

// The tensor-core prefill kernel against the decode kernel, bit for bit, for every quantized type:
// row counts not a multiple of the 16-row tile, token counts not a multiple of the 32-token tile,
// row lengths below and above one chunk per lane, WQ zero-points over the whole byte.
TEST(CudaDevice, MmaMatmulEqualsTheDecodeKernelBitForBitForEveryType) {
  REQUIRE_DEVICE();
  if (!mma_supported(0)) GTEST_SKIP() << "device 0 is older than sm_80: no int8 mma";
  std::mt19937 rng(5);
  const std::int64_t n_rows = 37, n_tok = 45;
  for (std::int64_t n_cols : {256, 2304}) {
    std::vector<float> x(static_cast<std::size_t>(n_tok * n_cols));
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (auto& v : x) v = g(rng);
    DeviceArray<float> dx(x);
    const std::int64_t n_chunks = n_cols / kChunk;
    DeviceArray<ActChunk> dact(static_cast<std::size_t>(n_tok * n_chunks));
    launch_quantize_act(dx.p, n_cols, n_tok, n_cols, dact.p, nullptr);
    for (std::uint32_t t : quantized_types()) {
      const BlockTypeInfo* info = find_block_type(t);
      ASSERT_NE(info, nullptr);
      std::vector<std::uint8_t> w = random_rows(*info, n_rows, n_cols, rng);
      if (t >= type_id::kWqBase) {
        for (std::size_t b = 0; b < w.size(); b += info->block_bytes) w[b + 2] = static_cast<std::uint8_t>(rng());
      }
      const std::size_t row_bytes = w.size() / static_cast<std::size_t>(n_rows);
      DeviceArray<std::uint8_t> dw(w);
      DeviceArray<float> dy(static_cast<std::size_t>(n_tok * n_rows)), dz(static_cast<std::size_t>(n_tok * n_rows));
      const DeviceMatrix m{dw.p, t, n_cols, n_rows, row_bytes};
      launch_matmul_q(m, dact.p, n_tok, dy.p, n_rows, nullptr);
      launch_matmul_q_mma(m, dact.p, n_tok, dz.p, n_rows, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << info->name;
      const std::vector<float> y = dy.get(static_cast<std::size_t>(n_tok * n_rows));
      const std::vector<float> z = dz.get(static_cast<std::size_t>(n_tok * n_rows));
      for (std::size_t i = 0; i < y.size(); ++i) {
        const bool both_nan = std::isnan(y[i]) && std::isnan(z[i]);
        ASSERT_TRUE(both_nan || std::memcmp(&y[i], &z[i], 4) == 0)
            << info->name << " n_cols " << n_cols << " token " << i / n_rows << " row " << i % n_rows << ": " << z[i]
            << " vs " << y[i];
      }
    }
  }
}

TEST(CudaDevice, FloatMatmulEqualsTheHostEmulationOfItsOrder) {
  REQUIRE_DEVICE();
  std::mt19937 rng(2);
  const std::int64_t n_rows = 19, n_cols = 512, n_tok = 9;
  std::vector<float> x(static_cast<std::size_t>(n_tok * n_cols));
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (auto& v : x) v = g(rng);
  DeviceArray<float> dx(x);
  for (std::uint32_t t : {type_id::kF32, type_id::kF16, type_id::kBF16}) {
    const BlockTypeInfo* info = find_block_type(t);
    std::vector<float> src(static_cast<std::size_t>(n_rows * n_cols));
    for (auto& v : src) v = g(rng);
    const std::size_t row_bytes = info->block_bytes * static_cast<std::size_t>(n_cols);
    std::vector<std::uint8_t> w(row_bytes * static_cast<std::size_t>(n_rows));
    for (std::int64_t r = 0; r < n_rows; ++r) info->quantize(src.data() + r * n_cols, w.data() + r * row_bytes, n_cols);
    DeviceArray<std::uint8_t> dw(w);
    DeviceArray<float> dy(static_cast<std::size_t>(n_tok * n_rows));
    launch_matmul_f({dw.p, t, n_cols, n_rows, row_bytes}, dx.p, n_cols, n_tok, dy.p, n_rows, nullptr);
    const std::vector<float> y = dy.get(static_cast<std::size_t>(n_tok * n_rows));
    for (std::int64_t tok = 0; tok < n_tok; ++tok) {
      for (std::int64_t r = 0; r < n_rows; ++r) {
        std::vector<float> dots;
        for (std::int64_t c = 0; c < n_cols / kChunk; ++c) {
          float wv[kChunk];
          float_chunk(t, w.data() + r * row_bytes, c, wv);
          float a = 0.0f;
          for (int j = 0; j < kChunk; ++j)
            a = std::fmaf(wv[j], x[static_cast<std::size_t>(tok * n_cols + c * kChunk + j)], a);
          dots.push_back(a);
        }
        const float want = emulate_row(dots);
        const float got = y[static_cast<std::size_t>(tok * n_rows + r)];
        ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << info->name << " token " << tok << " row " << r;
      }
    }
  }
}

std::vector<float> logits_of(Session& s, const std::vector<std::int32_t>& tokens, bool one_by_one) {
  std::vector<float> out;
  if (!one_by_one) {
    const std::span<const float> l = s.eval(tokens);
    return {l.begin(), l.end()};
  }
  for (std::int32_t t : tokens) {
    const std::span<const float> l = s.eval(std::span(&t, 1));
    out.assign(l.begin(), l.end());
  }
  return out;
}

TEST(CudaDevice, BatchedEqualsSoloBitForBitOnTheDevice) {
  REQUIRE_DEVICE();
  for (const char* arch : {"llama", "gemma3"}) {
    for (const char* kv : {"f16", "f32", "q8_0"}) {
      test::TinySpec spec;
      spec.arch = arch;
      if (spec.arch == "gemma3") spec.sliding_window = 8;
      auto model = Model::load(test::write_tiny_model(spec, std::string("cuda_inv_") + arch + ".gguf"));
      std::mt19937 rng(3);
      std::vector<std::int32_t> a(40), b(23);
      for (auto& t : a) t = static_cast<std::int32_t>(rng() % 100);
      for (auto& t : b) t = static_cast<std::int32_t>(rng() % 100);
      const EngineOptions eo{.n_threads = 1, .kv_tokens = 256, .kv_type = kv, .device = "cuda"};
      auto solo_engine = Engine::create(model, eo);
      Session solo(solo_engine);
      const std::vector<float> want = logits_of(solo, a, false);
      // The same tokens one by one, batched with another sequence's prompt at every step.
      auto engine = Engine::create(model, eo);
      Session s(engine), other(engine);
      std::vector<float> got;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const std::span<const std::int32_t> mine(&a[i], 1);
        const std::span<const std::int32_t> theirs(&b[i % b.size()], 1);
        engine->step({{&s, mine}, {&other, theirs}});
        got.assign(s.logits().begin(), s.logits().end());
      }
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << arch << " kv " << kv;
    }
  }
}

// StepGraph itself: staged data read through a replayed graph is each step's own; a key runs
// launch by launch the first time, is captured the second and replayed after; big steps are
// never graphed.
TEST(CudaDevice, StepGraphReplaysWithEachStepsStagedData) {
  REQUIRE_DEVICE();
  const std::int64_t n_cols = 64, n_src = 8, n = 4;
  std::vector<float> src(static_cast<std::size_t>(n_src * n_cols));
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
  DeviceArray<float> dsrc(src), ddst(static_cast<std::size_t>(n * n_cols));
  StepGraph g(true);
  for (int step = 0; step < 5; ++step) {
    std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = (i + step) % n_src;
    const auto* r = static_cast<const std::int64_t*>(g.stage(rows.data(), rows.size() * sizeof(std::int64_t), "rows"));
    LaunchKey k;
    k << 1 << r << n;
    float* dst = ddst.p;
    const float* s = dsrc.p;
    g.record(k, n, [=](cudaStream_t st) { launch_gather_rows(s, n_cols, r, n, dst, n_cols, n_cols, st); });
    g.flush();
    ASSERT_EQ(cudaStreamSynchronize(g.stream()), cudaSuccess);
    const std::vector<float> got = ddst.get(static_cast<std::size_t>(n * n_cols));
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[static_cast<std::size_t>(i * n_cols + 3)], src[static_cast<std::size_t>(rows[i] * n_cols + 3)])
          << "step " << step << " row " << i;
    }
  }
  EXPECT_EQ(g.counts().eager, 1u);  // the first sight of a key
  EXPECT_EQ(g.counts().captured, 1u);
  EXPECT_EQ(g.counts().replayed, 3u);
  LaunchKey big;
  big << 2;
  g.record(big, kGraphMaxRows + 1, [](cudaStream_t) {});
  g.flush();
  EXPECT_EQ(g.counts().eager, 2u);
}

// Decode with CUDA graphs and without (WISP_CUDA_GRAPHS=0): the same logits, bit for bit, over
// enough steps to cross KV block boundaries and a change of batch size.
TEST(CudaDevice, DecodeWithGraphsEqualsDecodeWithout) {
  REQUIRE_DEVICE();
  for (const char* arch : {"llama", "gemma3"}) {
    test::TinySpec spec;
    spec.arch = arch;
    if (spec.arch == "gemma3") spec.sliding_window = 8;
    auto model = Model::load(test::write_tiny_model(spec, std::string("cuda_graphs_") + arch + ".gguf"));
    std::mt19937 rng(6);
    std::vector<std::int32_t> a(50), b(30);
    for (auto& t : a) t = static_cast<std::int32_t>(rng() % 100);
    for (auto& t : b) t = static_cast<std::int32_t>(rng() % 100);
    auto run = [&](bool graphs) {
      setenv("WISP_CUDA_GRAPHS", graphs ? "1" : "0", 1);
      auto engine = Engine::create(model, {.n_threads = 1, .kv_tokens = 256, .device = "cuda"});
      unsetenv("WISP_CUDA_GRAPHS");
      Session s(engine), other(engine);
      std::vector<float> all;
      engine->step({{&s, std::span(a.data(), 5)}, {&other, std::span(b.data(), 3)}});  // prompts
      for (std::size_t i = 5; i < a.size(); ++i) {
        const std::span<const std::int32_t> mine(&a[i], 1);
        if (i < b.size()) {
          engine->step({{&s, mine}, {&other, std::span<const std::int32_t>(&b[i], 1)}});
          all.insert(all.end(), other.logits().begin(), other.logits().end());
        } else {
          engine->step({{&s, mine}});  // the batch shrinks: another graph
        }
        all.insert(all.end(), s.logits().begin(), s.logits().end());
      }
      return all;
    };
    const std::vector<float> with = run(true), without = run(false);
    ASSERT_EQ(with.size(), without.size());
    EXPECT_EQ(std::memcmp(with.data(), without.data(), with.size() * sizeof(float)), 0) << arch;
  }
}

TEST(CudaDevice, RealModelAgreesWithTheCpu) {
  REQUIRE_DEVICE();
  const char* env = std::getenv("WISP_DEVICE_MODEL");
  const std::string path = env ? env : std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "model not found: " << path;
  auto model = Model::load(path);
  std::mt19937 rng(4);
  std::vector<std::int32_t> tokens(128);
  for (auto& t : tokens) t = static_cast<std::int32_t>(rng() % static_cast<unsigned>(model->info().n_vocab));
  const auto n_vocab = static_cast<std::size_t>(model->info().n_vocab);
  for (const char* kv : {"f16", "q8_0"}) {  // each KV type against the CPU pool of the same type
    double kl = 0.0;
    int agree = 0;
    auto cpu = Engine::create(model, {.n_threads = 4, .kv_tokens = 256, .kv_type = kv, .device = "cpu"});
    auto gpu = Engine::create(model, {.kv_tokens = 256, .kv_type = kv, .device = "cuda"});
    Session sc(cpu), sg(gpu);
    cpu->step({{&sc, tokens, Logits::kAll}});
    gpu->step({{&sg, tokens, Logits::kAll}});
    for (std::size_t p = 0; p < tokens.size(); ++p) {
      const float* c = sc.logits().data() + p * n_vocab;
      const float* g = sg.logits().data() + p * n_vocab;
      const float mc = *std::max_element(c, c + n_vocab), mg = *std::max_element(g, g + n_vocab);
      double zc = 0, zg = 0;
      for (std::size_t i = 0; i < n_vocab; ++i) zc += std::exp(double(c[i]) - mc), zg += std::exp(double(g[i]) - mg);
      double k = 0;
      for (std::size_t i = 0; i < n_vocab; ++i) {
        const double lp = double(c[i]) - mc - std::log(zc), lq = double(g[i]) - mg - std::log(zg);
        k += std::exp(lp) * (lp - lq);
      }
      kl += k;
      agree += (std::max_element(c, c + n_vocab) - c) == (std::max_element(g, g + n_vocab) - g);
    }
    kl /= static_cast<double>(tokens.size());
    std::printf("device vs cpu on %s, %s KV: mean KL %.3g, top-1 %d/%zu\n", path.c_str(), kv, kl, agree, tokens.size());
    EXPECT_LE(kl, 1e-3) << kv;
    EXPECT_GE(agree, static_cast<int>(tokens.size() * 97 / 100)) << kv;
  }
}

TEST(CudaDevice, ClearErrorsForWhatTheDeviceCannotHold) {
  REQUIRE_DEVICE();
  auto model = Model::load(test::write_tiny_model({}, "cuda_errors.gguf"));
  try {
    Engine::create(model, {.kv_tokens = 64, .kv_type = "q4", .device = "cuda"});
    ADD_FAILURE() << "a q4 KV pool on the device was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q4"), std::string::npos) << e.what();
  }
  try {
    Engine::create(model, {.kv_tokens = std::size_t{1} << 40, .device = "cuda"});
    ADD_FAILURE() << "a pool larger than the device was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("free of"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wisp::cuda
