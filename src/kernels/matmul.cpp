#include "kernels/matmul.h"

#include <algorithm>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "kernels/multi_dots.h"
#include "wisp/error.h"

namespace wisp::kernels {

namespace {

std::string type_name(std::uint32_t type_id) {
  const BlockTypeInfo* t = find_block_type(type_id);
  return t ? std::string(t->name) : "type " + std::to_string(type_id);
}

// Rows per unit of work: enough to amortize scheduling, small enough to balance two to a few
// dozen threads on the narrowest matrices (a few hundred rows).
constexpr std::int64_t kRowChunk = 16;

// The matmul over a parallel-for: for_each(n, enabled, body) runs body(i) for i < n, split across
// threads when `enabled` (OpenMP or the ThreadPool; each i on one thread, so results never depend
// on the split).
template <class ForEach>
void matmul_impl(const MatrixView& w, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
                 std::int64_t y_stride, MatmulScratch& scratch, ForEach&& for_each) {
  const DotKernel* k = find_dot_kernel(w.type_id);
  if (k == nullptr) throw Error("matmul: no kernel for weight type " + type_name(w.type_id));
  const std::int64_t block = act_block_elems(k->act);
  if (w.n_cols % block != 0) {
    throw Error("matmul: " + type_name(w.type_id) + " weight rows of " + std::to_string(w.n_cols) +
                " values are not a multiple of the activation block (" + std::to_string(block) + ")");
  }
  if (n_tok <= 0 || w.n_rows == 0) return;

  const std::size_t act_bytes = act_row_bytes(k->act, w.n_cols);
  std::uint8_t* act = scratch.reserve(act_bytes * static_cast<std::size_t>(n_tok));
  const std::int64_t n_rows = w.n_rows;

  for_each(n_tok, n_tok > 1, [&](std::int64_t t) {
    convert_act_row(k->act_for(n_rows, n_tok, t), x + t * x_stride, act + static_cast<std::size_t>(t) * act_bytes,
                    w.n_cols);
  });

  const std::int64_t n_chunks = (w.n_rows + kRowChunk - 1) / kRowChunk;
  // ggml's choice of kernel can depend on the token's place in the batch (repacked GEMM/GEMV).
  std::vector<DotFn> dots(static_cast<std::size_t>(n_tok));
  std::vector<const MultiDot*> multis(static_cast<std::size_t>(n_tok));
  for (std::int64_t t = 0; t < n_tok; ++t) {
    dots[static_cast<std::size_t>(t)] = k->select(n_rows, n_tok, t);
    multis[static_cast<std::size_t>(t)] =
        t > 0 && dots[static_cast<std::size_t>(t)] == dots[static_cast<std::size_t>(t) - 1]
            ? multis[static_cast<std::size_t>(t) - 1]
            : find_multi_dot(*k, dots[static_cast<std::size_t>(t)]);
  }
  // Four tokens share one kernel (and so one multi-output variant) when their DotFn is the same.
  const auto same4 = [&](std::int64_t t) {
    const auto i = static_cast<std::size_t>(t);
    return dots[i] == dots[i + 1] && dots[i] == dots[i + 2] && dots[i] == dots[i + 3];
  };
  const auto act_row = [&](std::int64_t t) { return act + static_cast<std::size_t>(t) * act_bytes; };

  for_each(n_chunks, true, [&](std::int64_t c) {
    const std::int64_t r0 = c * kRowChunk;
    const std::int64_t r1 = std::min(w.n_rows, r0 + kRowChunk);
    float o[4];
    if (n_tok >= 4) {
      // Token-inner: one chunk of weight rows stays in cache while every token passes over it;
      // four tokens per call, so each weight block is unpacked once for four.
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::uint8_t* wr = w.row(r);
        std::int64_t t = 0;
        while (t < n_tok) {
          const MultiDot* m = multis[static_cast<std::size_t>(t)];
          if (m != nullptr && m->tok4 != nullptr && t + 4 <= n_tok && same4(t)) {
            m->tok4(wr, act_row(t), act_bytes, w.n_cols, o);
            for (int j = 0; j < 4; ++j) y[(t + j) * y_stride + r] = o[j];
            t += 4;
          } else {
            y[t * y_stride + r] = dots[static_cast<std::size_t>(t)](wr, act_row(t), w.n_cols);
            ++t;
          }
        }
      }
      return;
    }
    // Few tokens (decode): four weight rows per call, four independent FMA chains.
    for (std::int64_t t = 0; t < n_tok; ++t) {
      const MultiDot* m = multis[static_cast<std::size_t>(t)];
      std::int64_t r = r0;
      if (m != nullptr && m->row4 != nullptr) {
        for (; r + 4 <= r1; r += 4) {
          m->row4(w.row(r), w.row_bytes, act_row(t), w.n_cols, o);
          for (int j = 0; j < 4; ++j) y[t * y_stride + r + j] = o[j];
        }
      }
      for (; r < r1; ++r) y[t * y_stride + r] = dots[static_cast<std::size_t>(t)](w.row(r), act_row(t), w.n_cols);
    }
  });
}

}  // namespace

void matmul(const MatrixView& w, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
            std::int64_t y_stride, MatmulScratch& scratch, int n_threads) {
  const int threads = std::max(1, n_threads);
  matmul_impl(w, x, x_stride, n_tok, y, y_stride, scratch, [threads](std::int64_t n, bool enabled, auto&& body) {
#pragma omp parallel for num_threads(threads) schedule(static) if (enabled && threads > 1)
    for (std::int64_t i = 0; i < n; ++i) body(i);
  });
}

void matmul(const MatrixView& w, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
            std::int64_t y_stride, MatmulScratch& scratch, ThreadPool& pool) {
  matmul_impl(w, x, x_stride, n_tok, y, y_stride, scratch, [&pool](std::int64_t n, bool enabled, auto&& body) {
    if (!enabled) {
      for (std::int64_t i = 0; i < n; ++i) body(i);
      return;
    }
    pool.parallel_for(n, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) body(i);
    });
  });
}

void dequantize_row(const MatrixView& w, std::int64_t r, float* out) {
  const BlockTypeInfo* t = find_block_type(w.type_id);
  if (t == nullptr) throw Error("dequantize: unknown weight type " + std::to_string(w.type_id));
  if (r < 0 || r >= w.n_rows) {
    throw Error("dequantize: row " + std::to_string(r) + " out of range (" + std::to_string(w.n_rows) + " rows)");
  }
  t->dequantize(w.row(r), out, w.n_cols);
}

}  // namespace wisp::kernels
