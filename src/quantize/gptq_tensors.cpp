#include "quantize/gptq_tensors.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "formats/half.h"
#include "formats/wq_format.h"
#include "wisp/error.h"

namespace wisp::quantize {

GptqTensors::GptqTensors(std::shared_ptr<const model::ActivationStats> stats, const AwqPlan& awq,
                         const GptqOptions& opt, std::FILE* log)
    : stats_(std::move(stats)), awq_(awq), opt_(opt), log_(log) {
  if (!stats_) throw Error("--gptq needs --calib FILE (the Hessians come from calibration activations)");
}

bool GptqTensors::handles(const SourceTensor& t, const BlockTypeInfo& type) const {
  if (wq_format(type.id).bits == 0 || t.ne.size() < 2 || t.n_rows() < 1) return false;
  if (t.name == "token_embd.weight" || t.name == "output.weight") return false;
  const model::ChannelStats* cs = stats_->find(t.name);
  return cs != nullptr && cs->cols() == t.ne[0] && cs->sample_rows() > 0;
}

void GptqTensors::expect(const SourceTensor& t) { ++shared_[stats_->find(t.name)].users; }

std::vector<double> GptqTensors::hessian(const SourceTensor& t) {
  if (seq_ != nullptr) {
    if (awq_.transforms.count(t.name) != 0) throw Error("gptq: --gptq-sequential does not take AWQ-scaled tensors");
    return seq_->hessian(t.name);
  }
  const model::ChannelStats* cs = stats_->find(t.name);
  if (cs == nullptr || cs->cols() != t.ne[0])
    throw Error("gptq: tensor " + t.name + " has no calibration rows of its width");
  const std::int64_t n = t.ne[0], m = cs->sample_rows();
  HessianAccumulator acc(n);
  constexpr std::int64_t kChunk = 256;
  for (std::int64_t r0 = 0; r0 < m; r0 += kChunk) {
    acc.add(cs->sample.data() + r0 * n, std::min(kChunk, m - r0), opt_.n_threads);
  }
  std::vector<double> h = acc.hessian();
  // AWQ multiplied column j by s_j, so the scaled weight's input is x_j / s_j.
  if (auto it = awq_.transforms.find(t.name); it != awq_.transforms.end() && !it->second.col_scale.empty()) {
    const std::vector<float>& s = it->second.col_scale;
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        h[static_cast<std::size_t>(i * n + j)] /=
            static_cast<double>(s[static_cast<std::size_t>(i)]) * s[static_cast<std::size_t>(j)];
      }
    }
  }
  return h;
}

std::unique_ptr<GptqFactor> GptqTensors::make_factor(const SourceTensor& t, std::vector<double> h,
                                                     const char* what) const {
  const auto t0 = std::chrono::steady_clock::now();
  auto fac = std::make_unique<GptqFactor>(gptq_factor(std::move(h), t.ne[0], opt_, t.name));
  if (log_) {
    std::fprintf(log_, "gptq: Hessian of %s's input (%lld x %lld from %lld rows) factored%s in %.1f s\n",
                 t.name.c_str(), static_cast<long long>(t.ne[0]), static_cast<long long>(t.ne[0]),
                 static_cast<long long>(seq_ ? seq_->n_tokens() : stats_->find(t.name)->sample_rows()), what,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return fac;
}

const GptqFactor& GptqTensors::factor(const SourceTensor& t) {
  Shared& sh = shared_[stats_->find(t.name)];
  if (!sh.factor) sh.factor = make_factor(t, hessian(t), "");
  return *sh.factor;
}

double GptqTensors::probe_error(const SourceTensor& t, const BlockTypeInfo& type, const float* w, std::int64_t rows,
                                std::int64_t k) {
  if (!handles(t, type)) throw Error("gptq: tensor " + t.name + " in " + type.name + " is not quantized by GPTQ");
  const model::ChannelStats* group = stats_->find(t.name);
  if (probe_.group != group || !probe_.factor) {
    probe_.factor.reset();  // the previous group's n^2 doubles go before the next group's arrive
    probe_.h = hessian(t);
    probe_.factor = make_factor(t, probe_.h, " for --target-bpw");
    probe_.group = group;
  }
  const WqFormat f = wq_format(type.id);
  const std::int64_t n = t.ne[0];
  const std::size_t rb = type.row_bytes(n);
  std::vector<std::uint8_t> q(rb * static_cast<std::size_t>(rows));
  std::vector<std::uint32_t> idx(static_cast<std::size_t>(rows * k));
  std::vector<std::uint16_t> val(static_cast<std::size_t>(rows * k));
  try {
    gptq_quantize_rows(*probe_.factor, f, w, rows, q.data(), opt_, k, k > 0 ? idx.data() : nullptr,
                       k > 0 ? val.data() : nullptr);
  } catch (const Error& e) {
    throw Error("tensor " + t.name + ": " + e.what());
  }
  std::vector<float> y(static_cast<std::size_t>(rows * n));
  for (std::int64_t r = 0; r < rows; ++r) {
    type.dequantize(q.data() + static_cast<std::size_t>(r) * rb, y.data() + r * n, n);
    for (std::int64_t i = 0; i < k; ++i) {
      const std::size_t at = static_cast<std::size_t>(r * k + i);
      y[static_cast<std::size_t>(r * n + idx[at])] += f16_to_f32(val[at]);
    }
  }
  return hessian_relative_error(probe_.h, w, y.data(), rows, n);
}

void GptqTensors::end_probes() { probe_ = Probe{}; }

void GptqTensors::quantize(const SourceTensor& t, const BlockTypeInfo& type, std::span<std::uint8_t> out,
                           OutlierTable* sparse, ErrorStats* stats, double* out_err) {
  const WqFormat f = wq_format(type.id);
  const std::int64_t rows = t.n_rows(), n = t.ne[0];
  if (out.size() != type.row_bytes(n) * static_cast<std::size_t>(rows)) {
    throw Error("tensor " + t.name + ": writer expects " + std::to_string(out.size()) + " bytes for " + type.name);
  }
  std::vector<float> w(static_cast<std::size_t>(rows * n));
  for (std::int64_t r = 0; r < rows; ++r) t.read_row(r, w.data() + r * n);
  const GptqFactor& fac = factor(t);
  try {
    gptq_quantize_rows(fac, f, w.data(), rows, out.data(), opt_, sparse ? sparse->per_row : 0,
                       sparse ? sparse->idx.data() : nullptr, sparse ? sparse->val.data() : nullptr);
  } catch (const Error& e) {
    throw Error("tensor " + t.name + ": " + e.what());
  }
  if (stats != nullptr || out_err != nullptr) {
    std::vector<float> y(static_cast<std::size_t>(rows * n));
    for (std::int64_t r = 0; r < rows; ++r) type.dequantize(out.data() + r * type.row_bytes(n), y.data() + r * n, n);
    if (sparse != nullptr) {
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t i = 0; i < sparse->per_row; ++i) {
          const std::size_t at = static_cast<std::size_t>(r * sparse->per_row + i);
          y[static_cast<std::size_t>(r * n + sparse->idx[at])] += f16_to_f32(sparse->val[at]);
        }
      }
    }
    if (stats != nullptr) {
      for (std::size_t i = 0; i < w.size(); ++i) {
        const double d = static_cast<double>(w[i]) - y[i];
        stats->sum_sq_err += d * d;
        stats->sum_sq_ref += static_cast<double>(w[i]) * w[i];
        stats->max_abs_err = std::max(stats->max_abs_err, std::fabs(d));
      }
      stats->n += rows * n;
    }
    if (out_err != nullptr) *out_err = hessian_relative_error(hessian(t), w.data(), y.data(), rows, n);
  }
  Shared& sh = shared_[stats_->find(t.name)];
  if (--sh.users <= 0) sh.factor.reset();  // its last user: free n^2 doubles
}

}  // namespace wisp::quantize
