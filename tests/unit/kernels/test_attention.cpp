// Paged attention against a plain reference in double: keys scattered over non-contiguous blocks
// of an odd block size, a partly filled last block, GQA, a batch of queries at increasing
// positions (causal), a sliding window, and the half-precision rounding mode. Then bit equality:
// the tiled prefill (several queries per pass over the cache) against each query alone, and the
// ISA forms of attention's row loops against their portable forms.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "formats/half.h"
#include "formats/half_rows.h"
#include "kernels/kernel_set.h"
#include "wisp/error.h"

namespace wisp {
namespace {

struct Fixture {
  static constexpr int kBlock = 5, kDim = 8, kKvHeads = 2, kHeads = 6, kPhysBlocks = 8;
  std::vector<float> kmem, vmem;  // [block][kv_head][slot][dim]
  std::vector<int> table = {6, 1, 4, 0, 7, 3};
  std::vector<const float*> kptr, vptr;
  std::mt19937 rng{11};

  Fixture() {
    std::normal_distribution<float> n(0.0f, 1.0f);
    kmem.resize(kPhysBlocks * kKvHeads * kBlock * kDim);
    vmem.resize(kmem.size());
    for (auto& v : kmem) v = n(rng);
    for (auto& v : vmem) v = n(rng);
    for (int b : table) {
      kptr.push_back(kmem.data() + b * kKvHeads * kBlock * kDim);
      vptr.push_back(vmem.data() + b * kKvHeads * kBlock * kDim);
    }
  }
  kernels::PagedKv view() const { return {kptr, vptr, kBlock * kDim, kBlock, kDim}; }
  const float* key(int pos, int kvh) const { return kptr[pos / kBlock] + kvh * kBlock * kDim + (pos % kBlock) * kDim; }
  const float* val(int pos, int kvh) const { return vptr[pos / kBlock] + kvh * kBlock * kDim + (pos % kBlock) * kDim; }

  // Plain attention of one query head at position pos (keys [lo, pos]).
  std::vector<double> reference(const float* q, int pos, int h, float scale, int window) const {
    const int kvh = h / (kHeads / kKvHeads);
    const int lo = window > 0 ? std::max(0, pos - window + 1) : 0;
    std::vector<double> s;
    double m = -INFINITY;
    for (int p = lo; p <= pos; ++p) {
      double d = 0;
      for (int i = 0; i < kDim; ++i) d += double(q[i]) * key(p, kvh)[i];
      s.push_back(d * scale);
      m = std::max(m, s.back());
    }
    double z = 0;
    for (double& v : s) z += (v = std::exp(v - m));
    std::vector<double> out(kDim, 0.0);
    for (int p = lo; p <= pos; ++p) {
      for (int i = 0; i < kDim; ++i) out[i] += s[p - lo] / z * val(p, kvh)[i];
    }
    return out;
  }
};

void check(const Fixture& f, int pos0, int n_tok, int window, bool round_f16, double tol, int threads) {
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0.0f, 1.0f);
  const int width = Fixture::kHeads * Fixture::kDim;
  std::vector<float> q(n_tok * width);
  for (auto& v : q) v = n(rng);
  std::vector<float> out(n_tok * width, NAN);
  kernels::AttentionParams p;
  p.n_heads = Fixture::kHeads;
  p.n_kv_heads = Fixture::kKvHeads;
  p.kq_scale = 0.35f;
  p.window = window;
  p.round_f16 = round_f16;
  ThreadPool pool(threads);
  kernels::attention(q.data(), width, n_tok, pos0, f.view(), p, out.data(), width, pool);
  for (int t = 0; t < n_tok; ++t) {
    for (int h = 0; h < Fixture::kHeads; ++h) {
      const auto ref = f.reference(q.data() + t * width + h * Fixture::kDim, pos0 + t, h, 0.35f, window);
      for (int i = 0; i < Fixture::kDim; ++i) {
        ASSERT_NEAR(out[t * width + h * Fixture::kDim + i], ref[i], tol)
            << "token " << t << " head " << h << " dim " << i;
      }
    }
  }
}

TEST(Attention, PagedCausalBatchMatchesReference) {
  Fixture f;
  check(f, 0, 27, 0, false, 1e-5, 1);  // a whole prompt: 27 tokens over 6 blocks of 5
  check(f, 20, 7, 0, false, 1e-5, 2);  // a later batch
  check(f, 26, 1, 0, false, 1e-5, 2);  // one decode step at an odd position
}

TEST(Attention, SlidingWindow) {
  Fixture f;
  check(f, 0, 27, 4, false, 1e-5, 2);
  check(f, 25, 2, 1, false, 1e-5, 1);  // window 1: each token sees only itself
}

TEST(Attention, HalfRoundingStaysClose) {
  Fixture f;
  check(f, 0, 27, 0, true, 3e-3, 2);
}

TEST(Attention, RejectsBadShapes) {
  Fixture f;
  std::vector<float> q(6 * 8), out(6 * 8);
  kernels::AttentionParams p;
  p.n_heads = 6;
  p.n_kv_heads = 4;  // does not divide
  ThreadPool pool(1);
  EXPECT_THROW(kernels::attention(q.data(), 48, 1, 0, f.view(), p, out.data(), 48, pool), Error);
  p.n_kv_heads = 2;
  EXPECT_THROW(kernels::attention(q.data(), 48, 1, 30, f.view(), p, out.data(), 48, pool), Error);  // past the table
}

// A cache of random K/V rows for `n_kv` heads of head_dim d over `n_pos` positions in shuffled
// blocks of 16, as f32 planes (values already half-rounded) and as f16 rows.
struct Cache {
  static constexpr std::int64_t kBlock = 16;
  std::int64_t d;
  std::vector<float> kf, vf;
  std::vector<std::uint16_t> kh, vh;
  std::vector<const float*> kp, vp;
  std::vector<const std::byte*> kc, vc;

  Cache(std::int64_t n_pos, int n_kv, std::int64_t dim, std::mt19937& rng) : d(dim) {
    const std::int64_t blocks = (n_pos + kBlock - 1) / kBlock;
    std::normal_distribution<float> nd(0.0f, 1.0f);
    kf.resize(static_cast<std::size_t>(blocks * n_kv * kBlock * d));
    vf.resize(kf.size());
    for (float& x : kf) x = 2.0f * nd(rng);
    for (float& x : vf) x = nd(rng);
    kh.resize(kf.size());
    vh.resize(kf.size());
    f32_to_f16_row(kf.data(), kh.data(), static_cast<std::int64_t>(kf.size()));
    f32_to_f16_row(vf.data(), vh.data(), static_cast<std::int64_t>(vf.size()));
    round_to_f16_row(kf.data(), static_cast<std::int64_t>(kf.size()));
    round_to_f16_row(vf.data(), static_cast<std::int64_t>(vf.size()));
    for (std::int64_t i = 0; i < blocks; ++i) {
      const std::int64_t b = (i * 5 + 3) % blocks;  // a permutation when blocks % 5 != 0
      const std::int64_t at = (blocks % 5 == 0 ? i : b) * n_kv * kBlock * d;
      kp.push_back(kf.data() + at);
      vp.push_back(vf.data() + at);
      kc.push_back(reinterpret_cast<const std::byte*>(kh.data() + at));
      vc.push_back(reinterpret_cast<const std::byte*>(vh.data() + at));
    }
  }
  kernels::PagedKv f32() const { return {kp, vp, kBlock * d, kBlock, d}; }
  // decode: f16_bytes_to_f32_row (the f16 cache's decoder: read in place as halves) or another
  // function that converts the same halves (decoded into f32 rows first).
  kernels::PagedKvRows coded(kernels::KvRowDecoder decode) const {
    kernels::PagedKvRows kv;
    kv.k_blocks = kc;
    kv.v_blocks = vc;
    kv.head_stride = kBlock * d * 2;
    kv.row_bytes = d * 2;
    kv.block_size = kBlock;
    kv.head_dim = d;
    kv.decode = decode;
    return kv;
  }
};

void decode_halves_elsewhere(const std::byte* row, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    out[i] = f16_to_f32(h);
  }
}

enum class KvForm { kF32, kHalfInPlace, kDecoded };

// The n_tok queries from pos0 in one call, and each through `split` calls of its own (1: each
// query alone): every output bit-equal, or the first that is not named.
template <class Kv>
void expect_same_bits(const Kv& kv, const kernels::AttentionParams& p, std::int64_t d, std::int64_t n_tok,
                      std::int64_t pos0, std::int64_t split, const std::string& what) {
  std::mt19937 rng(static_cast<unsigned>(n_tok * 131 + pos0));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::int64_t width = p.n_heads * d;
  std::vector<float> q(static_cast<std::size_t>(n_tok * width));
  for (float& x : q) x = nd(rng);
  std::vector<float> all(q.size(), NAN), parts(q.size(), NAN);
  ThreadPool pool(2);
  kernels::attention(q.data(), width, n_tok, pos0, kv, p, all.data(), width, pool);
  for (std::int64_t t = 0; t < n_tok; t += split) {
    const std::int64_t n = std::min(split, n_tok - t);
    kernels::attention(q.data() + t * width, width, n, pos0 + t, kv, p, parts.data() + t * width, width, pool);
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(std::memcmp(&all[i], &parts[i], 4), 0)
        << what << ": token " << static_cast<std::int64_t>(i) / width << " head " << (i % width) / d << " dim " << i % d
        << ": " << all[i] << " in the batch, " << parts[i] << " in calls of " << split;
  }
}

struct TiledCase {
  std::int64_t d;
  int heads, kv_heads;
  std::int64_t window = 0;
  float softcap = 0.0f;
  bool sinks = false;
};

void check_tiled(const TiledCase& c, bool invariant, kernels::ggml::Simd isa, std::int64_t split) {
  std::mt19937 rng(static_cast<unsigned>(c.d * 7 + c.heads));
  // Queries 0..44 from position 0 (a prompt) and 45 queries from position 290 (a later chunk),
  // neither a multiple of any tile; the cache long enough to span several passes at d = 256.
  const Cache cache(335, c.kv_heads, c.d, rng);
  std::vector<float> sinks(static_cast<std::size_t>(c.heads));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (float& x : sinks) x = nd(rng);
  kernels::AttentionParams p;
  p.n_heads = c.heads;
  p.n_kv_heads = c.kv_heads;
  p.kq_scale = 0.3f;
  p.window = c.window;
  p.logit_softcap = c.softcap;
  p.sinks = c.sinks ? sinks.data() : nullptr;
  p.batch_invariant = invariant;
  p.isa = isa;
  const std::string what = "d " + std::to_string(c.d) + ", " + std::to_string(c.heads) + "/" +
                           std::to_string(c.kv_heads) + " heads, window " + std::to_string(c.window) +
                           (c.softcap > 0 ? ", softcap" : "") + (c.sinks ? ", sinks" : "");
  for (const std::int64_t pos0 : {std::int64_t{0}, std::int64_t{290}}) {
    expect_same_bits(cache.f32(), p, c.d, 45, pos0, split, what + ", f32 cache");
    expect_same_bits(cache.coded(&f16_bytes_to_f32_row), p, c.d, 45, pos0, split, what + ", f16 cache in place");
    expect_same_bits(cache.coded(&decode_halves_elsewhere), p, c.d, 45, pos0, split, what + ", f16 rows decoded");
  }
}

const TiledCase kTiledCases[] = {
    {64, 32, 8},                // the 1B shape's heads: GQA 4
    {64, 9, 3},                 // SmolLM2's: GQA 3
    {128, 8, 8},                // no GQA
    {256, 8, 1},                // one kv head for 8 query heads
    {80, 6, 2},                 // head_dim not a multiple of 64 (ggml's dot tail) nor 32
    {128, 4, 2, 23},            // a sliding window
    {256, 8, 4, 0, 50.0f},      // gemma 2's softcap
    {64, 8, 2, 0, 0.0f, true},  // gpt-oss's sinks
    {64, 8, 2, 100, 0.0f, true},
    // Passes of 64 positions (head_dim 1024, tiles of 2 tokens): the second token's window starts
    // inside the first pass less than 64 positions before its end, so its lanes start at 0 first.
    {1024, 2, 2, 100},
};

// The default numerics: every query in the one-token order, however many share the call.
TEST(Attention, TiledQueriesEqualEachQueryAloneBitForBit) {
  for (const TiledCase& c : kTiledCases) {
    check_tiled(c, true, kernels::ggml::Simd::kAvx512, 1);
    check_tiled(c, true, kernels::ggml::Simd::kAvx2, 1);
  }
}

// ggml's batched order (the exact path's prefill) is one order per query too, whatever the tile:
// a 45-token call against calls of 3 tokens.
TEST(Attention, TiledBatchedOrderDoesNotDependOnTheTile) {
  for (const TiledCase& c : kTiledCases) {
    check_tiled(c, false, kernels::ggml::Simd::kAvx512, 3);
    check_tiled(c, false, kernels::ggml::Simd::kAvx2, 3);
  }
}

// A batched step of three sequences in one call (a prompt from position 0, a later chunk, one
// decoding token), each with its own cache: every query's bits are those of the query alone.
template <class Kv>
void expect_segments_equal_alone(const std::vector<Kv>& kvs, const kernels::AttentionParams& p, std::int64_t d,
                                 const std::string& what) {
  const std::int64_t n_tok[] = {37, 21, 1}, pos0[] = {0, 130, 250};
  const std::int64_t width = p.n_heads * d;
  std::mt19937 rng(17);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<std::vector<float>> q(3), all(3), alone(3);
  std::vector<kernels::AttentionSegment<Kv>> segs;
  for (int i = 0; i < 3; ++i) {
    q[i].resize(static_cast<std::size_t>(n_tok[i] * width));
    for (float& x : q[i]) x = nd(rng);
    all[i].assign(q[i].size(), NAN);
    alone[i].assign(q[i].size(), NAN);
    segs.push_back({q[i].data(), width, n_tok[i], pos0[i], kvs[i], all[i].data(), width});
  }
  ThreadPool pool(2);
  kernels::attention(std::span<const kernels::AttentionSegment<Kv>>(segs), p, pool);
  for (int i = 0; i < 3; ++i) {
    for (std::int64_t t = 0; t < n_tok[i]; ++t) {
      kernels::attention(q[i].data() + t * width, width, 1, pos0[i] + t, kvs[i], p, alone[i].data() + t * width, width,
                         pool);
    }
    for (std::size_t j = 0; j < all[i].size(); ++j) {
      ASSERT_EQ(std::memcmp(&all[i][j], &alone[i][j], 4), 0)
          << what << ": sequence " << i << " token " << static_cast<std::int64_t>(j) / width << " head "
          << (j % width) / d << " dim " << j % d << ": " << all[i][j] << " in the batch, " << alone[i][j] << " alone";
    }
  }
}

TEST(Attention, SegmentsOfABatchEqualEachQueryAloneBitForBit) {
  for (const std::int64_t d : {64, 128}) {
    std::mt19937 rng(static_cast<unsigned>(d));
    const std::vector<Cache> caches = [&] {
      std::vector<Cache> c;
      c.reserve(3);  // a Cache points into its own vectors: built in place
      for (int i = 0; i < 3; ++i) c.emplace_back(260, 2, d, rng);
      return c;
    }();
    kernels::AttentionParams p;
    p.n_heads = 8;
    p.n_kv_heads = 2;
    p.kq_scale = 0.2f;
    p.batch_invariant = true;
    const std::string what = "d " + std::to_string(d);
    std::vector<kernels::PagedKv> f32;
    std::vector<kernels::PagedKvRows> half;
    for (const Cache& c : caches) {
      f32.push_back(c.f32());
      half.push_back(c.coded(&f16_bytes_to_f32_row));
    }
    expect_segments_equal_alone(f32, p, d, what + ", f32 caches");
    expect_segments_equal_alone(half, p, d, what + ", f16 caches in place");
  }
}

// Every ISA's dot_vec_rows and fma_lanes (kernel_set.h) give the portable forms' bits.
TEST(Attention, RowLoopsOfEveryIsaEqualThePortableForms) {
  const kernels::Ggml16Ops& ref = kernels::kernel_set_for(Isa::kScalar)->ggml16;
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  int checked = 0;
  for (const Isa isa : {Isa::kAvx2, Isa::kAvx512, Isa::kNeon, Isa::kNeonDotprod}) {
    const kernels::KernelSet* ks = kernels::kernel_set_for(isa);
    if (ks == nullptr) continue;
    ++checked;
    const kernels::Ggml16Ops& ops = ks->ggml16;
    for (const std::int64_t d : {16, 48, 64, 80, 128, 200, 256}) {
      const std::int64_t n_rows = 90;
      std::vector<float> rf(static_cast<std::size_t>(n_rows * d)), q(static_cast<std::size_t>(6 * d));
      for (float& x : rf) x = nd(rng);
      for (float& x : q) x = nd(rng);
      std::vector<std::uint16_t> rh(rf.size());
      f32_to_f16_row(rf.data(), rh.data(), static_cast<std::int64_t>(rf.size()));
      for (const bool half : {false, true}) {
        std::vector<const void*> rows;
        for (std::int64_t r = 0; r < n_rows; ++r) {
          rows.push_back(half ? static_cast<const void*>(rh.data() + r * d)
                              : static_cast<const void*>(rf.data() + r * d));
        }
        for (const std::int64_t n : {1, 15, 16, 17, 33, 90}) {
          for (const int n_q : {1, 3, 4, 6}) {
            std::vector<const float*> qs;
            for (int m = 0; m < n_q; ++m) qs.push_back(q.data() + m * d);
            std::vector<float> a(static_cast<std::size_t>(n_q * n)), b(a.size());
            std::vector<float*> pa, pb;
            for (int m = 0; m < n_q; ++m) {
              pa.push_back(a.data() + m * n);
              pb.push_back(b.data() + m * n);
            }
            ops.dot_vec_rows(qs.data(), n_q, rows.data(), half, n, d, 0.37f, pa.data());
            ref.dot_vec_rows(qs.data(), n_q, rows.data(), half, n, d, 0.37f, pb.data());
            ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0)
                << isa_name(isa) << " dot_vec_rows d " << d << " n " << n << " queries " << n_q << " half " << half;
          }
        }
        for (const std::int64_t lanes : {8, 16, 32, 64}) {
          for (const int n_m : {1, 3, 4, 6}) {
            for (const std::int64_t t0 : {0, 5, 70}) {
              const std::int64_t n = n_rows - (t0 % 7);
              std::vector<float> probs(static_cast<std::size_t>(n_m * (t0 + n)));
              for (float& x : probs) x = nd(rng);
              std::vector<const float*> pm;
              for (int m = 0; m < n_m; ++m) pm.push_back(probs.data() + m * (t0 + n));
              std::vector<float> acc_a(static_cast<std::size_t>(n_m * lanes * d)), acc_b(acc_a.size());
              for (float& x : acc_a) x = nd(rng);
              for (const bool init : {false, true}) {
                acc_b = acc_a;
                std::vector<float> start = acc_a;
                std::vector<float*> pa, pb;
                for (int m = 0; m < n_m; ++m) {
                  pa.push_back(acc_a.data() + m * lanes * d);
                  pb.push_back(acc_b.data() + m * lanes * d);
                }
                ops.fma_lanes(pm.data(), n_m, rows.data(), half, t0, n, d, lanes, init, pa.data());
                ref.fma_lanes(pm.data(), n_m, rows.data(), half, t0, n, d, lanes, init, pb.data());
                ASSERT_EQ(std::memcmp(acc_a.data(), acc_b.data(), acc_a.size() * 4), 0)
                    << isa_name(isa) << " fma_lanes d " << d << " lanes " << lanes << " queries " << n_m << " t0 " << t0
                    << " half " << half << " init " << init;
                ASSERT_NE(acc_a, start);
                acc_a = start;
              }
            }
          }
        }
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no SIMD kernel bundle on this CPU";
}

}  // namespace
}  // namespace wisp
