#include "kernels/matmul.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "kernels/float_gemm.h"
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
// The float GEMM's unit from kGemmMinTokens tokens on: each call reads every token's activations
// once, so 64 rows per call read them a quarter as often as 16; 64 rows of a 2048-column block
// widen to 512 KiB, which stays in L2 (x86/float_gemm512-inl.h). On the 1B shape's F16 matrices
// at 512 tokens, one thread: 2048x2048 ~100 -> ~125 GFLOP/s (bench/RESULTS.md, 2026-12-03).
constexpr std::int64_t kFloatGemmRowChunk = 64, kGemmMinTokens = 4;

// One weight matrix's part of a matmul call: its kernel, the activations converted for it, and
// the per-token choice of dot function (ggml's can depend on the token's place in the batch:
// repacked GEMM/GEMV).
struct Job {
  const MatrixView* w = nullptr;
  float* y = nullptr;
  std::int64_t y_stride = 0;
  const DotKernel* k = nullptr;
  std::size_t act_bytes = 0;
  std::uint8_t* act = nullptr;  // n_tok rows of act_bytes
  std::vector<DotFn> dots;
  std::vector<const MultiDot*> multis;
  std::int64_t n_chunks = 0;
  DotOrder order = DotOrder::kGgml;
  FloatGemmFn float_gemm = nullptr;     // wisp's float order as register tiles (float_gemm.h), or null
  DotGemm8Fn gemm8 = nullptr;           // every token's one function as 8- or 16-row tiles (multi_dots.h), or null
  int gemm_rows = 8;                    // rows per gemm8 call
  std::int64_t chunk_rows = kRowChunk;  // rows per unit of work
};

const DotKernel& checked_kernel(const MatrixView& w) {
  const DotKernel* k = find_dot_kernel(w.type_id);
  if (k == nullptr) throw Error("matmul: no kernel for weight type " + type_name(w.type_id));
  const std::int64_t block = act_block_elems(k->act);
  if (w.n_cols % block != 0) {
    throw Error("matmul: " + type_name(w.type_id) + " weight rows of " + std::to_string(w.n_cols) +
                " values are not a multiple of the activation block (" + std::to_string(block) + ")");
  }
  return *k;
}

// Everything of a job but the activation memory and its conversion.
Job plan_job(const MatmulOutput& out, std::int64_t n_tok, DotOrder order) {
  Job j;
  j.order = order;
  j.w = out.w;
  j.y = out.y;
  j.y_stride = out.y_stride;
  j.k = &checked_kernel(*out.w);
  const std::int64_t n_rows = out.w->n_rows;
  j.act_bytes = act_row_bytes(j.k->act_for(n_rows, n_tok, 0, order), out.w->n_cols);
  j.dots.resize(static_cast<std::size_t>(n_tok));
  j.multis.resize(static_cast<std::size_t>(n_tok));
  for (std::int64_t t = 0; t < n_tok; ++t) {
    const auto i = static_cast<std::size_t>(t);
    j.dots[i] = j.k->select(n_rows, n_tok, t, order);
    j.multis[i] = t > 0 && j.dots[i] == j.dots[i - 1] ? j.multis[i - 1] : find_multi_dot(*j.k, j.dots[i]);
  }
  if (order == DotOrder::kBatchInvariant) j.float_gemm = find_float_gemm(*j.k);
  if (j.float_gemm != nullptr && n_tok >= kGemmMinTokens) j.chunk_rows = kFloatGemmRowChunk;
  j.n_chunks = (n_rows + j.chunk_rows - 1) / j.chunk_rows;
  if (order == DotOrder::kBatchInvariant && n_tok > 0 && j.multis[0] != nullptr &&
      std::all_of(j.dots.begin(), j.dots.end(), [&](DotFn f) { return f == j.dots[0]; })) {
    j.gemm8 = j.multis[0]->gemm8;
    j.gemm_rows = j.multis[0]->gemm_rows;
  }
  return j;
}

// Tokens [t0, n_tok) of weight row r: four per call where a four-token variant exists (the
// weight blocks unpacked once for four tokens), else one.
void tokens_of_row(const Job& j, std::int64_t n_tok, std::int64_t r, std::int64_t t0) {
  const std::uint8_t* wr = j.w->row(r);
  const auto act_row = [&](std::int64_t t) { return j.act + static_cast<std::size_t>(t) * j.act_bytes; };
  float o[4];
  std::int64_t t = t0;
  while (t < n_tok) {
    const auto i = static_cast<std::size_t>(t);
    const MultiDot* m = j.multis[i];
    if (m != nullptr && m->tok4 != nullptr && t + 4 <= n_tok && j.dots[i] == j.dots[i + 1] &&
        j.dots[i] == j.dots[i + 2] && j.dots[i] == j.dots[i + 3]) {
      m->tok4(wr, act_row(t), j.act_bytes, j.w->n_cols, o);
      for (int q = 0; q < 4; ++q) j.y[(t + q) * j.y_stride + r] = o[q];
      t += 4;
    } else {
      j.y[t * j.y_stride + r] = j.dots[i](wr, act_row(t), j.w->n_cols);
      ++t;
    }
  }
}

// Rows [c * j.chunk_rows, ...) of one job for every token.
void run_chunk(const Job& j, std::int64_t n_tok, std::int64_t c) {
  const MatrixView& w = *j.w;
  const std::int64_t r0 = c * j.chunk_rows;
  const std::int64_t r1 = std::min(w.n_rows, r0 + j.chunk_rows);
  if (j.float_gemm != nullptr) {  // every token of the chunk's rows, tiled; outputs equal dot_invariant's
    j.float_gemm(w.row(r0), w.row_bytes, r1 - r0, reinterpret_cast<const float*>(j.act), j.act_bytes / sizeof(float),
                 n_tok, w.n_cols, j.y + r0, j.y_stride);
    return;
  }
  if (j.gemm8 != nullptr && n_tok >= 4) {  // every token against 8 or 16 rows at a time; outputs equal dot_invariant's
    const auto tile = std::make_unique_for_overwrite<std::uint8_t[]>(gemm8_scratch_bytes(w.n_cols, j.gemm_rows));
    for (std::int64_t r = r0; r < r1; r += j.gemm_rows) {
      j.gemm8(w.row(r), w.row_bytes, static_cast<int>(std::min<std::int64_t>(j.gemm_rows, r1 - r)), j.act, j.act_bytes,
              n_tok, w.n_cols, j.y + r, j.y_stride, tile.get());
    }
    return;
  }
  const auto act_row = [&](std::int64_t t) { return j.act + static_cast<std::size_t>(t) * j.act_bytes; };
  // Four tokens share one kernel (and so one multi-output variant) when their DotFn is the same.
  const auto same4 = [&](std::int64_t t) {
    const auto i = static_cast<std::size_t>(t);
    return j.dots[i] == j.dots[i + 1] && j.dots[i] == j.dots[i + 2] && j.dots[i] == j.dots[i + 3];
  };
  float o[4];
  if (n_tok >= 4) {
    // Token-inner: one chunk of weight rows stays in cache while every token passes over it.
    // Four rows by four tokens per call where a tile kernel exists (weight blocks unpacked once
    // for four tokens, activation blocks loaded once for four rows), else four tokens per call.
    std::int64_t r = r0;
    float tile[16];
    for (; r + 4 <= r1; r += 4) {
      std::int64_t t = 0;
      while (t + 4 <= n_tok) {
        const MultiDot* m = j.multis[static_cast<std::size_t>(t)];
        if (m == nullptr || m->tile4x4 == nullptr || !same4(t)) break;
        m->tile4x4(w.row(r), w.row_bytes, act_row(t), j.act_bytes, w.n_cols, tile);
        for (int a = 0; a < 4; ++a) {
          for (int q = 0; q < 4; ++q) j.y[(t + q) * j.y_stride + r + a] = tile[4 * a + q];
        }
        t += 4;
      }
      if (t == n_tok) continue;
      // Tokens the tiles did not cover: four tokens per call along each row where a four-token
      // variant exists, else four rows per call along each token, else one output per call.
      const MultiDot* m = j.multis[static_cast<std::size_t>(t)];
      if (m != nullptr && m->tok4 == nullptr && m->row4 != nullptr) {
        for (; t < n_tok; ++t) {
          const auto i = static_cast<std::size_t>(t);
          if (j.multis[i] != m) break;
          m->row4(w.row(r), w.row_bytes, act_row(t), w.n_cols, o);
          for (int q = 0; q < 4; ++q) j.y[t * j.y_stride + r + q] = o[q];
        }
        if (t == n_tok) continue;
      }
      for (std::int64_t rr = r; rr < r + 4; ++rr) tokens_of_row(j, n_tok, rr, t);
    }
    for (; r < r1; ++r) tokens_of_row(j, n_tok, r, 0);
    return;
  }
  // Few tokens (decode): four weight rows per call, four independent FMA chains.
  for (std::int64_t t = 0; t < n_tok; ++t) {
    const MultiDot* m = j.multis[static_cast<std::size_t>(t)];
    std::int64_t r = r0;
    if (m != nullptr && m->row4 != nullptr) {
      for (; r + 4 <= r1; r += 4) {
        m->row4(w.row(r), w.row_bytes, act_row(t), w.n_cols, o);
        for (int q = 0; q < 4; ++q) j.y[t * j.y_stride + r + q] = o[q];
      }
    }
    for (; r < r1; ++r) j.y[t * j.y_stride + r] = j.dots[static_cast<std::size_t>(t)](w.row(r), act_row(t), w.n_cols);
  }
}

// The matmuls of `outs`, all reading x, over a parallel-for: for_each(n, enabled, body) runs
// body(i) for i < n, split across the pool's threads when `enabled` (each i on one thread, so
// results never depend on the split). Weights whose kernels read the same activation
// format share one conversion; all row chunks of all weights form one parallel job.
template <class ForEach>
void matmul_impl(std::span<const MatmulOutput> outs, const float* x, std::int64_t x_stride, std::int64_t n_tok,
                 MatmulScratch& scratch, DotOrder order, ForEach&& for_each) {
  std::vector<Job> jobs;
  jobs.reserve(outs.size());
  for (const MatmulOutput& o : outs) jobs.push_back(plan_job(o, n_tok, order));  // checks every weight first
  if (n_tok <= 0) return;

  // Activation memory: one region per distinct (format, row length). Only repacked Q4_K under
  // ggml's order picks a format per token (Q8_Kx4 for its groups of four, starting at token 0);
  // such a job gets a region of its own.
  const auto format = [&](const Job& j) { return j.k->act_for(j.w->n_rows, n_tok, 0, order); };
  const auto uniform = [&](const Job& j) {
    return order == DotOrder::kBatchInvariant || j.k->act_for(j.w->n_rows, n_tok, 0, order) == j.k->act;
  };
  std::vector<const Job*> owners;  // the job that converts each region
  std::vector<std::size_t> offsets;
  std::vector<std::size_t> job_region(jobs.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    std::size_t found = owners.size();
    for (std::size_t r = 0; r < owners.size() && uniform(j); ++r) {
      if (uniform(*owners[r]) && format(*owners[r]) == format(j) && owners[r]->w->n_cols == j.w->n_cols) found = r;
    }
    if (found == owners.size()) {
      owners.push_back(&j);
      offsets.push_back(total);
      total += j.act_bytes * static_cast<std::size_t>(n_tok);
    }
    job_region[i] = found;
  }
  std::uint8_t* mem = scratch.reserve(total);
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].act = mem + offsets[job_region[i]];

  for (const Job* owner : owners) {
    const Job& j = *owner;
    for_each(n_tok, n_tok > 1, [&](std::int64_t t) {
      convert_act_row(j.k->act_for(j.w->n_rows, n_tok, t, order), x + t * x_stride,
                      j.act + static_cast<std::size_t>(t) * j.act_bytes, j.w->n_cols);
    });
  }

  std::vector<std::int64_t> first_chunk(jobs.size() + 1, 0);
  for (std::size_t i = 0; i < jobs.size(); ++i) first_chunk[i + 1] = first_chunk[i] + jobs[i].n_chunks;
  for_each(first_chunk.back(), true, [&](std::int64_t c) {
    std::size_t i = 0;
    while (c >= first_chunk[i + 1]) ++i;
    run_chunk(jobs[i], n_tok, c - first_chunk[i]);
  });
}

auto pool_for_each(ThreadPool& pool) {
  return [&pool](std::int64_t n, bool enabled, auto&& body) {
    if (!enabled) {
      for (std::int64_t i = 0; i < n; ++i) body(i);
      return;
    }
    pool.parallel_for(n, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) body(i);
    });
  };
}

}  // namespace

void matmul(const MatrixView& w, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
            std::int64_t y_stride, MatmulScratch& scratch, ThreadPool& pool, DotOrder order) {
  const MatmulOutput out{&w, y, y_stride};
  matmul_impl(std::span(&out, 1), x, x_stride, n_tok, scratch, order, pool_for_each(pool));
}

void matmul_group(std::span<const MatmulOutput> outs, const float* x, std::int64_t x_stride, std::int64_t n_tok,
                  MatmulScratch& scratch, ThreadPool& pool, DotOrder order) {
  matmul_impl(outs, x, x_stride, n_tok, scratch, order, pool_for_each(pool));
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
