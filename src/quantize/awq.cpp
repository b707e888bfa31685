#include "quantize/awq.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "wisp/error.h"

namespace wisp::quantize {

void apply_transform(const TensorTransform& tr, std::int64_t r, float* row, std::int64_t n) {
  if (!tr.col_scale.empty()) {
    for (std::int64_t j = 0; j < n; ++j) row[j] *= tr.col_scale[static_cast<std::size_t>(j)];
  }
  if (!tr.row_scale.empty()) {
    const float k = tr.row_scale[static_cast<std::size_t>(r)];
    for (std::int64_t j = 0; j < n; ++j) row[j] *= k;
  }
}

namespace {

enum class Fold { kNormColumns, kRowsOf };

struct GroupDef {
  const char* name;
  std::vector<const char*> weights;  // the first one's statistics are the group's input
  Fold fold;
  const char* target;       // the tensor 1/s is folded into
  const char* target_bias;  // its bias, scaled alike when present (kRowsOf)
  bool gqa_tie;             // attn_output: one scale per kv-head channel
};

const std::vector<GroupDef>& group_defs() {
  static const std::vector<GroupDef> defs = {
      {"attn_qkv",
       {"attn_q.weight", "attn_k.weight", "attn_v.weight"},
       Fold::kNormColumns,
       "attn_norm.weight",
       nullptr,
       false},
      {"ffn_gate_up", {"ffn_gate.weight", "ffn_up.weight"}, Fold::kNormColumns, "ffn_norm.weight", nullptr, false},
      {"ffn_down", {"ffn_down.weight"}, Fold::kRowsOf, "ffn_up.weight", nullptr, false},
      {"attn_output", {"attn_output.weight"}, Fold::kRowsOf, "attn_v.weight", "attn_v.bias", true},
  };
  return defs;
}

struct WeightSample {
  const BlockTypeInfo* type;
  std::int64_t rows;
  std::vector<float> w;  // rows x n
};

// Output error sum_t sum_r (e_r . x_t)^2 of quantizing the sampled weight rows with scales s.
double scaled_error(const std::vector<WeightSample>& ws, const std::vector<float>& x, std::int64_t n,
                    const std::vector<float>& s, const std::vector<float>& mean_sq, const AwqOptions& opt) {
  const std::int64_t m = static_cast<std::int64_t>(x.size()) / n;
  std::vector<float> imp;
  RowOptions ro;
  ro.range_search = opt.range_search;
  if (opt.use_importance) {
    // The scaled weight's input is x / s: its importance is mean x^2 / s^2.
    imp.resize(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) imp[j] = mean_sq[j] / (s[j] * s[j]);
    ro.importance = imp;
  }
  std::vector<float> row(static_cast<std::size_t>(n)), e(static_cast<std::size_t>(n));
  std::vector<std::uint8_t> q;
  double err = 0;
  for (const WeightSample& w : ws) {
    q.resize(w.type->row_bytes(n));
    for (std::int64_t r = 0; r < w.rows; ++r) {
      const float* src = w.w.data() + r * n;
      for (std::int64_t j = 0; j < n; ++j) row[j] = src[j] * s[j];
      quantize_row(*w.type, row.data(), q.data(), n, ro, nullptr);
      w.type->dequantize(q.data(), row.data(), n);
      for (std::int64_t j = 0; j < n; ++j) e[j] = row[j] / s[j] - src[j];
      for (std::int64_t t = 0; t < m; ++t) {
        const float* xt = x.data() + t * n;
        float d = 0;
        for (std::int64_t j = 0; j < n; ++j) d += e[j] * xt[j];
        err += static_cast<double>(d) * d;
      }
    }
  }
  return err;
}

// s_j = m_j^alpha, normalised so that sqrt(max s * min s) = 1 (the overall size of s does not
// change the rounding; keeping it near 1 keeps the folded norms in a sane range).
std::vector<float> scales_for(const std::vector<float>& m, float alpha) {
  std::vector<float> s(m.size());
  float lo = INFINITY, hi = 0;
  for (std::size_t j = 0; j < m.size(); ++j) {
    s[j] = std::pow(m[j], alpha);
    lo = std::min(lo, s[j]);
    hi = std::max(hi, s[j]);
  }
  const float norm = std::sqrt(lo * hi);
  for (float& v : s) v /= norm;
  return s;
}

std::vector<float> evenly_spaced_rows(const SourceTensor& t, std::int64_t max_rows, std::int64_t* n_out) {
  const std::int64_t rows = t.n_rows(), n = t.ne[0];
  const std::int64_t take = std::min(rows, max_rows);
  std::vector<float> out(static_cast<std::size_t>(take * n));
  for (std::int64_t i = 0; i < take; ++i) t.read_row(i * rows / take, out.data() + i * n);
  *n_out = take;
  return out;
}

}  // namespace

AwqPlan plan_awq(const Source& src, const model::ActivationStats& stats, const TypePolicy& policy,
                 const AwqOptions& opt) {
  std::map<std::string, const SourceTensor*> by_name;
  for (const SourceTensor& t : src.tensors()) by_name[t.name] = &t;
  AwqPlan plan;
  auto transform_of = [&](const std::string& name) -> TensorTransform& { return plan.transforms[name]; };
  auto times = [](std::vector<float>& v, std::size_t n, float k, std::size_t i) {
    if (v.empty()) v.assign(n, 1.0f);
    v[i] *= k;
  };

  for (std::int64_t il = 0;; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    if (!by_name.contains(p + "attn_q.weight")) break;
    for (const GroupDef& g : group_defs()) {
      std::vector<const SourceTensor*> ws;
      for (const char* w : g.weights) {
        auto it = by_name.find(p + w);
        if (it != by_name.end()) ws.push_back(it->second);
      }
      auto target_it = by_name.find(p + g.target);
      const model::ChannelStats* cs = stats.find(p + g.weights[0]);
      if (ws.size() != g.weights.size() || target_it == by_name.end() || cs == nullptr || cs->n_rows == 0) continue;
      const std::int64_t n = ws[0]->ne[0];
      if (cs->cols() != n) {
        throw Error("--awq: tensor " + ws[0]->name + " has rows of " + std::to_string(n) +
                    " values, its calibration statistics " + std::to_string(cs->cols()));
      }
      bool lossy = false;
      std::vector<WeightSample> samples;
      for (const SourceTensor* t : ws) {
        const BlockTypeInfo& type = policy.choose(*t);
        lossy = lossy || type.block_elems > 1;
        WeightSample s{&type, 0, {}};
        s.w = evenly_spaced_rows(*t, opt.max_weight_rows, &s.rows);
        samples.push_back(std::move(s));
      }
      if (!lossy && opt.fixed_alpha < 0) continue;

      // Mean |x| per channel, tied across the q heads of a kv head for attn_output.
      std::vector<float> m = cs->mean_abs();
      const std::vector<float> msq = cs->mean_sq();
      const SourceTensor& target = *target_it->second;
      std::vector<std::int64_t> target_row(static_cast<std::size_t>(n));  // kRowsOf: row of target per channel
      for (std::int64_t j = 0; j < n; ++j) target_row[j] = j;
      if (g.gqa_tie) {
        const std::int64_t hd = stats.head_dim, nh = stats.n_head, nkv = stats.n_head_kv;
        if (hd <= 0 || nkv <= 0 || nh % nkv != 0 || nh * hd != n || target.n_rows() != nkv * hd) {
          throw Error("--awq: " + ws[0]->name + " does not fit the calibrated model's heads (" + std::to_string(nh) +
                      " x " + std::to_string(hd) + ", " + std::to_string(nkv) + " kv heads)");
        }
        std::vector<double> sum(static_cast<std::size_t>(nkv * hd), 0.0);
        for (std::int64_t j = 0; j < n; ++j) {
          target_row[j] = (j / hd) / (nh / nkv) * hd + j % hd;
          sum[target_row[j]] += m[j];
        }
        for (std::int64_t j = 0; j < n; ++j) m[j] = static_cast<float>(sum[target_row[j]] / (nh / nkv));
      } else if (g.fold == Fold::kRowsOf && target.n_rows() != n) {
        throw Error("--awq: " + target.name + " has " + std::to_string(target.n_rows()) + " rows, " + ws[0]->name +
                    " has rows of " + std::to_string(n));
      }
      const float mmax = *std::max_element(m.begin(), m.end());
      if (!(mmax > 0)) continue;
      for (float& v : m) v = std::max(v, 1e-4f * mmax);  // a dead channel must not get s = 0

      // Calibration rows for the search.
      const std::int64_t avail = cs->sample_rows(), take = std::min(avail, opt.max_act_rows);
      std::vector<float> x(static_cast<std::size_t>(take * n));
      for (std::int64_t i = 0; i < take; ++i) {
        std::copy_n(cs->sample.data() + (i * avail / take) * n, n, x.data() + i * n);
      }

      std::vector<float> alphas;
      if (opt.fixed_alpha >= 0) {
        alphas = {0.0f, opt.fixed_alpha};
      } else {
        for (int i = 0; i < opt.grid; ++i) alphas.push_back(static_cast<float>(i) / static_cast<float>(opt.grid - 1));
      }
      std::vector<double> err(alphas.size(), 0.0);
      {
        const int workers = std::clamp<int>(opt.n_threads, 1, static_cast<int>(alphas.size()));
        std::vector<std::thread> pool;
        std::vector<std::string> errors(static_cast<std::size_t>(workers));
        auto work = [&](int w) {
          try {
            for (std::size_t a = static_cast<std::size_t>(w); a < alphas.size();
                 a += static_cast<std::size_t>(workers)) {
              err[a] = scaled_error(samples, x, n, scales_for(m, alphas[a]), msq, opt);
            }
          } catch (const std::exception& e) {
            errors[static_cast<std::size_t>(w)] = e.what();
          }
        };
        for (int w = 1; w < workers; ++w) pool.emplace_back(work, w);
        work(0);
        for (auto& t : pool) t.join();
        for (const auto& e : errors) {
          if (!e.empty()) throw Error("--awq: " + p + g.name + ": " + e);
        }
      }
      std::size_t best = 0;
      if (opt.fixed_alpha >= 0) {
        best = 1;
      } else {
        for (std::size_t a = 1; a < alphas.size(); ++a) {
          if (err[a] < err[best]) best = a;
        }
      }
      plan.groups.push_back({p + g.name, alphas[best], err[0], err[best]});
      if (opt.log) {
        std::fprintf(opt.log, "awq: %-22s alpha %.2f  output error %.4g -> %.4g (%+.1f%%)\n", (p + g.name).c_str(),
                     alphas[best], err[0], err[best], err[0] > 0 ? 100.0 * (err[best] / err[0] - 1.0) : 0.0);
      }
      if (alphas[best] == 0.0f) continue;  // scaling does not help this group: leave it alone

      const std::vector<float> s = scales_for(m, alphas[best]);
      for (const SourceTensor* t : ws) {
        for (std::int64_t j = 0; j < n; ++j)
          times(transform_of(t->name).col_scale, static_cast<std::size_t>(n), s[j], j);
      }
      if (g.fold == Fold::kNormColumns) {
        if (target.n_rows() != 1 || target.ne[0] != n) {
          throw Error("--awq: " + target.name + " is not a vector of " + std::to_string(n) + " values");
        }
        for (std::int64_t j = 0; j < n; ++j)
          times(transform_of(target.name).col_scale, static_cast<std::size_t>(n), 1.0f / s[j], j);
      } else {
        const auto rows = static_cast<std::size_t>(target.n_rows());
        std::vector<float> inv(rows, 1.0f);
        for (std::int64_t j = 0; j < n; ++j) inv[static_cast<std::size_t>(target_row[j])] = 1.0f / s[j];
        for (std::size_t r = 0; r < rows; ++r) times(transform_of(target.name).row_scale, rows, inv[r], r);
        if (g.target_bias != nullptr) {
          if (auto b = by_name.find(p + g.target_bias); b != by_name.end()) {
            for (std::size_t r = 0; r < rows; ++r) times(transform_of(b->second->name).col_scale, rows, inv[r], r);
          }
        }
      }
    }
  }
  return plan;
}

}  // namespace wisp::quantize

namespace wisp::quantize {

std::map<std::string, std::vector<float>> calibration_importance(const model::ActivationStats& stats,
                                                                 const AwqPlan& plan) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, cs] : stats.by_tensor) {
    if (cs == nullptr || cs->n_rows == 0) continue;
    std::vector<float> imp = cs->mean_sq();
    if (auto it = plan.transforms.find(name); it != plan.transforms.end() && !it->second.col_scale.empty()) {
      const std::vector<float>& s = it->second.col_scale;
      for (std::size_t j = 0; j < imp.size() && j < s.size(); ++j) imp[j] /= s[j] * s[j];
    }
    out[name] = std::move(imp);
  }
  return out;
}

std::vector<SourceTensor> transformed_tensors(const std::vector<SourceTensor>& tensors, const AwqPlan& plan) {
  std::vector<SourceTensor> out = tensors;
  for (SourceTensor& t : out) {
    auto it = plan.transforms.find(t.name);
    if (it == plan.transforms.end()) continue;
    const TensorTransform& tr = it->second;
    if ((!tr.col_scale.empty() && static_cast<std::int64_t>(tr.col_scale.size()) != t.ne[0]) ||
        (!tr.row_scale.empty() && static_cast<std::int64_t>(tr.row_scale.size()) != t.n_rows())) {
      throw Error("--awq: tensor " + t.name + ": scale vector does not match its shape");
    }
    const std::int64_t n = t.ne[0];
    t.read_row = [read = t.read_row, &tr, n](std::int64_t r, float* row) {
      read(r, row);
      apply_transform(tr, r, row, n);
    };
  }
  return out;
}

}  // namespace wisp::quantize
