// Paged attention against a plain reference in double: keys scattered over non-contiguous blocks
// of an odd block size, a partly filled last block, GQA, a batch of queries at increasing
// positions (causal), a sliding window, and the half-precision rounding mode. Then bit equality:
// the ISA forms of attention's row loops against their portable forms.
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
      std::vector<float> rf(static_cast<std::size_t>(n_rows * d)), q(static_cast<std::size_t>(d));
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
          std::vector<float> a(static_cast<std::size_t>(n)), b(a.size());
          ops.dot_vec_rows(q.data(), rows.data(), half, n, d, 0.37f, a.data());
          ref.dot_vec_rows(q.data(), rows.data(), half, n, d, 0.37f, b.data());
          ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0)
              << isa_name(isa) << " dot_vec_rows d " << d << " n " << n << " half " << half;
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
