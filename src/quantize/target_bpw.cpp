#include "quantize/target_bpw.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <regex>
#include <thread>

#include "formats/half.h"
#include "formats/wq_format.h"
#include "quantize/gptq_tensors.h"
#include "quantize/outliers.h"
#include "wisp/error.h"

namespace wisp::quantize {

namespace {

bool is_fixed(const SourceTensor& t, const TypePolicy& policy) {
  if (t.ne.size() < 2 || t.n_rows() == 1) return true;  // 1-D: the policy keeps these F32
  return std::any_of(policy.rules.begin(), policy.rules.end(),
                     [&](const TypeRule& r) { return std::regex_search(t.name, r.regex); });
}

std::vector<const BlockTypeInfo*> candidate_types(const SourceTensor& t, bool protect) {
  std::vector<const BlockTypeInfo*> out;
  const std::int64_t n = t.ne[0];
  for (int bits : kWqBits) {
    if (protect && bits < 6) continue;
    for (int group : kWqGroups) {
      if (n % group == 0) out.push_back(find_block_type(wq_type_id(bits, group)));
    }
  }
  if (protect && n % 32 == 0) out.push_back(&block_type(GgmlType::kQ8_0));
  // F16 for the protected tensors, and for rows no group divides (the policy's last fallback).
  if (protect || out.empty()) out.push_back(&block_type(GgmlType::kF16));
  return out;
}

// Outlier entries per row of `t` at `type` (0 when --outliers is off or the tensor gets no table).
std::int64_t outliers_of(const SourceTensor& t, const BlockTypeInfo& type, double fraction) {
  return fraction > 0 && outlier_eligible(t.name, t.n_rows(), type) ? outliers_per_row(fraction, t.ne[0]) : 0;
}

// Every byte `type` writes for `t`: the rows, plus the sparse side table (rowptr u32, idx u16 or
// u32, val f16: the layout OutlierTable writes).
std::uint64_t bytes_of(const SourceTensor& t, const BlockTypeInfo& type, double fraction) {
  const auto rows = static_cast<std::uint64_t>(t.n_rows());
  std::uint64_t b = type.row_bytes(t.ne[0]) * rows;
  if (const std::int64_t k = outliers_of(t, type, fraction); k > 0) {
    const std::uint64_t nnz = rows * static_cast<std::uint64_t>(k);
    b += 4 * (rows + 1) + (t.ne[0] <= 65536 ? 2 : 4) * nnz + 2 * nnz;
  }
  return b;
}

// The sampled rows of `t` measure_error() and the GPTQ probe read: s evenly spaced rows, so every
// part of the matrix is seen.
std::int64_t sample_count(const SourceTensor& t, std::int64_t sample_rows) {
  return std::min(t.n_rows(), std::max<std::int64_t>(1, sample_rows));
}
std::int64_t sample_row(const SourceTensor& t, std::int64_t i, std::int64_t s) { return i * t.n_rows() / s; }

// The relative (importance-weighted) squared error of `type` on the sampled rows of `t`.
double measure_error(const SourceTensor& t, const BlockTypeInfo& type, const RowOptions& ro, std::int64_t sample_rows,
                     double outlier_fraction) {
  const std::int64_t n = t.ne[0];
  const std::int64_t s = sample_count(t, sample_rows);
  const std::int64_t k = outliers_of(t, type, outlier_fraction);
  std::vector<float> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
  std::vector<std::uint8_t> q(type.row_bytes(n));
  std::vector<std::uint32_t> idx(static_cast<std::size_t>(k));
  std::vector<std::uint16_t> val(static_cast<std::size_t>(k));
  double err = 0, ref = 0;
  for (std::int64_t i = 0; i < s; ++i) {
    t.read_row(sample_row(t, i, s), x.data());
    if (k > 0) {
      quantize_row_with_outliers(type, x.data(), q.data(), n, ro, k, idx.data(), val.data(), nullptr);
    } else {
      quantize_row(type, x.data(), q.data(), n, ro, nullptr);
    }
    type.dequantize(q.data(), y.data(), n);
    for (std::int64_t j = 0; j < k; ++j)
      y[idx[static_cast<std::size_t>(j)]] += f16_to_f32(val[static_cast<std::size_t>(j)]);
    for (std::int64_t j = 0; j < n; ++j) {
      const double w = ro.importance.empty() ? 1.0 : ro.importance[static_cast<std::size_t>(j)];
      const double d = static_cast<double>(x[j]) - y[j];
      err += w * d * d;
      ref += w * static_cast<double>(x[j]) * x[j];
    }
  }
  return ref > 0 ? err / ref : 0.0;
}

struct Job {
  std::size_t tensor, cand;
};

// The GPTQ candidates, one input group at a time (its Hessian is factored once for all of its
// tensors' candidates, then freed), each tensor's sampled rows read once. Sequential: the GPTQ
// row loop runs on the converter's threads itself.
void measure_by_gptq(const std::vector<SourceTensor>& tensors, std::vector<BitItem>& items, std::vector<Job> jobs,
                     const TargetBpwOptions& opt) {
  std::map<const void*, std::size_t> group_rank;
  for (const Job& j : jobs) group_rank.emplace(opt.gptq->input_group(tensors[j.tensor]), group_rank.size());
  std::stable_sort(jobs.begin(), jobs.end(), [&](const Job& a, const Job& b) {
    return group_rank[opt.gptq->input_group(tensors[a.tensor])] < group_rank[opt.gptq->input_group(tensors[b.tensor])];
  });
  std::vector<float> w;
  std::size_t rows_of = tensors.size();
  for (const Job& j : jobs) {
    const SourceTensor& t = tensors[j.tensor];
    const std::int64_t n = t.ne[0], s = sample_count(t, opt.sample_rows);
    if (rows_of != j.tensor) {
      w.resize(static_cast<std::size_t>(s * n));
      for (std::int64_t i = 0; i < s; ++i) t.read_row(sample_row(t, i, s), w.data() + i * n);
      rows_of = j.tensor;
    }
    BitCandidate& c = items[j.tensor].candidates[j.cand];
    c.error = opt.gptq->probe_error(t, *c.type, w.data(), s, outliers_of(t, *c.type, opt.outlier_fraction));
  }
  opt.gptq->end_probes();
}

}  // namespace

std::vector<BitItem> target_bpw_candidates(const std::vector<SourceTensor>& tensors, const TypePolicy& policy,
                                           const TargetBpwOptions& opt) {
  std::vector<BitItem> items(tensors.size());
  std::vector<Job> jobs, gptq_jobs;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const SourceTensor& t = tensors[i];
    items[i].name = t.name;
    if (is_fixed(t, policy)) {
      const BlockTypeInfo& type = policy.choose(t);
      items[i].candidates.push_back({&type, bytes_of(t, type, opt.outlier_fraction), 0.0});
      continue;
    }
    const bool protect = policy.keep_embeddings_high && is_embedding_or_output(t.name);
    for (const BlockTypeInfo* type : candidate_types(t, protect)) {
      items[i].candidates.push_back({type, bytes_of(t, *type, opt.outlier_fraction), 0.0});
      const bool by_gptq = opt.gptq != nullptr && opt.gptq->handles(t, *type);
      (by_gptq ? gptq_jobs : jobs).push_back({i, items[i].candidates.size() - 1});
    }
  }
  // Measuring is the slow part (range search on every candidate): spread (tensor, type) pairs over threads.
  std::atomic<std::size_t> next{0};
  std::vector<std::string> errors(static_cast<std::size_t>(std::max(1, opt.n_threads)));
  auto work = [&](std::size_t w) {
    try {
      for (std::size_t j; (j = next.fetch_add(1)) < jobs.size();) {
        const SourceTensor& t = tensors[jobs[j].tensor];
        BitCandidate& c = items[jobs[j].tensor].candidates[jobs[j].cand];
        RowOptions ro;
        ro.range_search = opt.range_search;
        if (opt.importance != nullptr) {
          if (auto it = opt.importance->find(t.name);
              it != opt.importance->end() && static_cast<std::int64_t>(it->second.size()) == t.ne[0]) {
            ro.importance = it->second;
          }
        }
        c.error = measure_error(t, *c.type, ro, opt.sample_rows, opt.outlier_fraction);
      }
    } catch (const std::exception& e) {
      errors[w] = e.what();
      next = jobs.size();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < errors.size(); ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& th : pool) th.join();
  for (const auto& e : errors) {
    if (!e.empty()) throw Error("--target-bpw: measuring candidate types: " + e);
  }
  if (!gptq_jobs.empty()) {
    try {
      measure_by_gptq(tensors, items, std::move(gptq_jobs), opt);
    } catch (const Error& e) {
      throw Error(std::string("--target-bpw: measuring candidate types by GPTQ: ") + e.what());
    }
  }
  return items;
}

TargetBpwPlan plan_target_bpw(const std::vector<SourceTensor>& tensors, const TypePolicy& policy,
                              const TargetBpwOptions& opt) {
  if (!(opt.target_bpw > 1.0) || !std::isfinite(opt.target_bpw)) {
    throw Error("--target-bpw must be a number of bits per weight above 1 (e.g. 4.5), got " +
                std::to_string(opt.target_bpw));
  }
  std::int64_t elements = 0;
  for (const SourceTensor& t : tensors) elements += t.n_elements();
  const std::vector<BitItem> items = target_bpw_candidates(tensors, policy, opt);
  std::uint64_t floor_bytes = 0;
  for (const BitItem& it : items) {
    std::uint64_t lo = it.candidates[0].bytes;
    for (const BitCandidate& c : it.candidates) lo = std::min(lo, c.bytes);
    floor_bytes += lo;
  }
  const auto budget = static_cast<std::uint64_t>(std::floor(opt.target_bpw * static_cast<double>(elements) / 8.0));
  if (floor_bytes > budget) {
    // The --no-protect hint only where protection raised the floor.
    const bool protected_floor =
        policy.keep_embeddings_high && std::any_of(tensors.begin(), tensors.end(), [&](const SourceTensor& t) {
          return is_embedding_or_output(t.name) && !is_fixed(t, policy) && t.ne[0] % 32 == 0;
        });
    char buf[256];
    std::snprintf(
        buf, sizeof buf,
        "--target-bpw %.3g is below the smallest this model reaches with the candidate types: %.3f bits/weight%s",
        opt.target_bpw, 8.0 * static_cast<double>(floor_bytes) / static_cast<double>(elements),
        protected_floor ? " (token_embd/output kept at >= 6 bits; --no-protect lowers that)" : "");
    throw Error(buf);
  }
  const BitAllocation alloc = allocate_bits(items, budget);
  TargetBpwPlan plan;
  plan.elements = elements;
  plan.bytes = alloc.bytes;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const BitCandidate& c = items[i].candidates[static_cast<std::size_t>(alloc.choice[i])];
    TensorChoice& ch = plan.choices[items[i].name];
    ch.type = c.type;
    ch.error = c.error;
    if (is_fixed(tensors[i], policy)) {
      policy.choose(tensors[i], &ch.reason);
    } else {
      ch.reason = "target-bpw";
    }
  }
  return plan;
}

}  // namespace wisp::quantize
