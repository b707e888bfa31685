#include "quantize/converter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "formats/wq_format.h"
#include "model/outlier_tables.h"
#include "quantize/awq.h"
#include "quantize/gptq_tensors.h"
#include "quantize/outliers.h"
#include "quantize/source.h"
#include "quantize/target_bpw.h"
#include "wisp/error.h"

namespace wisp::quantize {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// llama.cpp's LLAMA_FTYPE for a uniform standard type (its tools show it); -1 when none applies.
int llama_file_type(const BlockTypeInfo& t) {
  switch (static_cast<GgmlType>(t.id)) {
    case GgmlType::kF32: return 0;
    case GgmlType::kF16: return 1;
    case GgmlType::kQ4_0: return 2;
    case GgmlType::kQ4_1: return 3;
    case GgmlType::kQ8_0: return 7;
    case GgmlType::kQ5_0: return 8;
    case GgmlType::kQ5_1: return 9;
    case GgmlType::kBF16: return 32;
    default: return -1;
  }
}

// Quantizes every row of `t` into `out` on n_threads threads; returns the summed error statistics.
ErrorStats quantize_tensor(const SourceTensor& t, const BlockTypeInfo& type, std::span<std::uint8_t> out,
                           const RowOptions& ro, int n_threads, bool want_stats, OutlierTable* sparse = nullptr) {
  const std::int64_t rows = t.n_rows(), n = t.ne[0];
  const std::size_t row_bytes = type.row_bytes(n);
  if (out.size() != row_bytes * static_cast<std::size_t>(rows)) {
    throw Error("tensor " + t.name + ": writer expects " + std::to_string(out.size()) + " bytes, type " + type.name +
                " needs " + std::to_string(row_bytes * rows));
  }
  const int workers = static_cast<int>(std::clamp<std::int64_t>(rows / 4, 1, n_threads));
  std::vector<ErrorStats> stats(static_cast<std::size_t>(workers));
  std::vector<std::string> errors(static_cast<std::size_t>(workers));
  std::atomic<std::int64_t> next{0};
  auto work = [&](int w) {
    try {
      std::vector<float> row(static_cast<std::size_t>(n));
      for (std::int64_t r; (r = next.fetch_add(1)) < rows;) {
        t.read_row(r, row.data());
        ErrorStats* st = want_stats ? &stats[static_cast<std::size_t>(w)] : nullptr;
        if (sparse != nullptr) {
          const auto at = static_cast<std::size_t>(r * sparse->per_row);
          quantize_row_with_outliers(type, row.data(), out.data() + static_cast<std::size_t>(r) * row_bytes, n, ro,
                                     sparse->per_row, sparse->idx.data() + at, sparse->val.data() + at, st);
        } else {
          quantize_row(type, row.data(), out.data() + static_cast<std::size_t>(r) * row_bytes, n, ro, st);
        }
      }
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(w)] = e.what();
      next = rows;
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& th : pool) th.join();
  for (const auto& e : errors) {
    if (!e.empty()) throw Error("tensor " + t.name + ": " + e);
  }
  ErrorStats total;
  for (const auto& s : stats) total.merge(s);
  return total;
}

// The type of `t`: from the --target-bpw plan when there is one, else from the policy.
const BlockTypeInfo& choose_type(const TypePolicy& policy, const TargetBpwPlan& plan, const SourceTensor& t,
                                 std::string* reason) {
  if (auto it = plan.choices.find(t.name); it != plan.choices.end()) {
    *reason = it->second.reason;
    return *it->second.type;
  }
  return policy.choose(t, reason);
}

void check_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(path + ": output folder " + dir.string() + " does not exist");
  if (fs::is_directory(p, ec)) throw Error(path + ": output path is a directory");
}

}  // namespace

ConvertReport convert(const ConvertOptions& opt) {
  check_output_path(opt.output);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Source> src = open_source(opt.input);
  const int n_threads = opt.n_threads > 0 ? opt.n_threads : std::max(1u, std::thread::hardware_concurrency());
  if (opt.log)
    std::fprintf(opt.log, "quantize: %s -> %s (%s, %d threads)\n", src->description().c_str(), opt.output.c_str(),
                 opt.policy.base->name, n_threads);

  GgufWriter writer;
  src->write_metadata(writer);
  const int ftype = opt.target_bpw > 0 ? -1 : llama_file_type(*opt.policy.base);
  if (ftype >= 0) writer.set_u32("general.file_type", static_cast<std::uint32_t>(ftype));
  if (opt.policy.base->block_elems > 1) writer.set_u32("general.quantization_version", 2);
  writer.set_string("wisp.quantize.type", opt.target_bpw > 0 ? "mixed" : opt.policy.base->name);
  if (opt.target_bpw > 0) writer.set_f32("wisp.quantize.target_bpw", static_cast<float>(opt.target_bpw));
  writer.set_bool("wisp.quantize.range_search", opt.range_search);

  // Calibrated outlier handling: AWQ scales (applied as rows are read) and importance.
  AwqPlan awq;
  if (opt.awq) {
    if (!opt.calib) throw Error("--awq needs --calib FILE (the scales come from calibration activations)");
    AwqOptions ao;
    ao.fixed_alpha = opt.awq_alpha;
    ao.range_search = opt.range_search;
    ao.use_importance = true;
    ao.n_threads = n_threads;
    ao.log = opt.verbose ? opt.log : nullptr;
    awq = plan_awq(*src, *opt.calib, opt.policy, ao);
    writer.set_bool("wisp.quantize.awq", true);
  }
  std::map<std::string, std::vector<float>> importance = opt.importance;
  if (opt.calib) importance.merge(calibration_importance(*opt.calib, awq));  // keeps entries already there
  if (opt.outlier_fraction > 0)
    writer.set_f32("wisp.quantize.outlier_fraction", static_cast<float>(opt.outlier_fraction));
  std::vector<SourceTensor> tensors = transformed_tensors(src->tensors(), awq);
  if (opt.sequential) {
    if (!opt.gptq) throw Error("--gptq-sequential needs --gptq");
    if (opt.awq) throw Error("--gptq-sequential does not work with --awq yet (the folded norms are not swapped in)");
    // Layer by layer (the writer fills tensors in this order): layer L's Hessians need every
    // earlier layer's quantized weights. Tensors outside the blocks first; the file's order is free.
    std::stable_sort(tensors.begin(), tensors.end(), [](const SourceTensor& a, const SourceTensor& b) {
      return SequentialHessians::layer_of(a.name) < SequentialHessians::layer_of(b.name);
    });
  }
  std::unique_ptr<GptqTensors> gptq;
  if (opt.gptq) {
    GptqOptions go = opt.gptq_opt;
    go.range_search = opt.range_search;
    go.n_threads = n_threads;
    gptq = std::make_unique<GptqTensors>(opt.calib, awq, go, opt.log);
    writer.set_bool("wisp.quantize.gptq", true);
    writer.set_f32("wisp.quantize.gptq_damp", static_cast<float>(go.damp));
    writer.set_bool("wisp.quantize.gptq_act_order", go.act_order);
    writer.set_bool("wisp.quantize.gptq_refit", go.refit_scales);
  }

  ConvertReport report;
  report.tensors.resize(tensors.size());
  bool warned = false;
  // --target-bpw: measure every candidate type per tensor, then the least-error choice within the
  // size budget (target_bpw.h); --type-override and 1-D tensors keep the policy's type.
  TargetBpwPlan bpw_plan;
  if (opt.target_bpw > 0) {
    TargetBpwOptions to;
    to.target_bpw = opt.target_bpw;
    to.range_search = opt.range_search;
    to.importance = &importance;
    to.outlier_fraction = opt.outlier_fraction;
    to.gptq = gptq.get();  // the candidates GPTQ will quantize are measured by their GPTQ error
    to.n_threads = n_threads;
    const auto p0 = std::chrono::steady_clock::now();
    bpw_plan = plan_target_bpw(tensors, opt.policy, to);
    if (opt.log) {
      std::map<std::string, int> counts;
      for (const auto& [name, c] : bpw_plan.choices) ++counts[c.type->name];
      std::string mix;
      for (const auto& [name, n] : counts) mix += (mix.empty() ? "" : ", ") + name + " x" + std::to_string(n);
      std::fprintf(opt.log, "target %.3f bits/weight: plan %.3f bits/weight (%s; measured in %.1f s)\n", opt.target_bpw,
                   bpw_plan.bits_per_weight(), mix.c_str(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count());
    }
  }
  // After the plan, whose probes use the calibration statistics' Hessians.
  std::unique_ptr<SequentialHessians> seq;
  if (opt.sequential) {
    seq = std::make_unique<SequentialHessians>(*opt.sequential, n_threads, opt.log);
    gptq->use_sequential(seq.get());
    writer.set_bool("wisp.quantize.gptq_sequential", true);
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const SourceTensor& t = tensors[i];
    if (t.stored_quantized && !warned && opt.log) {
      std::fprintf(opt.log, "warning: %s is stored as %s: re-quantizing a quantized tensor compounds its error\n",
                   t.name.c_str(), t.stored_type.c_str());
      warned = true;
    }
    if (t.name.find(".outlier_") != std::string::npos) {
      throw Error(opt.input + ": tensor " + t.name +
                  " is a sparse outlier table: quantize from the unquantized source");
    }
    TensorReport& rep = report.tensors[i];
    const BlockTypeInfo& type = choose_type(opt.policy, bpw_plan, t, &rep.reason);
    std::shared_ptr<OutlierTable> sparse;
    if (opt.outlier_fraction > 0 && outlier_eligible(t.name, t.n_rows(), type)) {
      sparse = std::make_shared<OutlierTable>(t.n_rows(), t.ne[0], outliers_per_row(opt.outlier_fraction, t.ne[0]));
    }
    const bool by_gptq = gptq && gptq->handles(t, type);
    if (by_gptq) gptq->expect(t);
    rep.name = t.name;
    rep.type = type.name;
    rep.n_elements = t.n_elements();
    rep.bytes = type.row_bytes(t.ne[0]) * static_cast<std::uint64_t>(t.n_rows());
    report.total_bytes += rep.bytes;
    report.total_elements += rep.n_elements;
    const std::size_t idx = i, count = tensors.size();
    writer.add_tensor(
        t.name, type.id, t.ne, [&, idx, count, by_gptq, &type = type, sparse](std::span<std::uint8_t> out) {
          const SourceTensor& st = tensors[idx];
          TensorReport& r = report.tensors[idx];
          RowOptions ro;
          ro.range_search = opt.range_search;
          if (auto it = importance.find(st.name); it != importance.end()) {
            if (static_cast<std::int64_t>(it->second.size()) != st.ne[0]) {
              throw Error("tensor " + st.name + ": calibration statistics have " + std::to_string(it->second.size()) +
                          " channels, the tensor's rows have " + std::to_string(st.ne[0]));
            }
            ro.importance = it->second;
          }
          const auto s0 = std::chrono::steady_clock::now();
          double h_err = -1;
          if (by_gptq) {
            gptq->quantize(st, type, out, sparse.get(), opt.verbose ? &r.error : nullptr,
                           opt.verbose ? &h_err : nullptr);
          } else {
            r.error = quantize_tensor(st, type, out, ro, n_threads, opt.verbose, sparse.get());
          }
          if (seq && SequentialHessians::layer_of(st.name) >= 0) seq->record(st.name, type, out, sparse.get());
          const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
          if (opt.log) {
            std::fprintf(opt.log, "[%4zu/%4zu] %-32s %-5s -> %-8s %10.2f MiB %8.1f Mparam/s%s", idx + 1, count,
                         st.name.c_str(), st.stored_type.c_str(), type.name, static_cast<double>(out.size()) / kMiB,
                         static_cast<double>(st.n_elements()) / 1e6 / std::max(dt, 1e-9), by_gptq ? "  gptq" : "");
            if (opt.verbose) {
              std::fprintf(opt.log, "  rmse %.3e  max|err| %.3e  rel %.4f", r.error.rmse(), r.error.max_abs_err,
                           r.error.relative_rmse());
              if (h_err >= 0) std::fprintf(opt.log, "  H-weighted rel %.4e", h_err);
            }
            std::fprintf(opt.log, "\n");
          }
        });
    if (sparse) {
      // The side table follows its weight (FORMAT.md): filled by the weight's callback above,
      // which the writer runs first.
      const auto nnz = sparse->nnz();
      const auto idx_type = sparse->narrow_idx() ? GgmlType::kF16 : GgmlType::kF32;
      writer.add_tensor(model::outlier_rowptr_name(t.name), static_cast<std::uint32_t>(GgmlType::kF32),
                        {t.n_rows() + 1}, [sparse](std::span<std::uint8_t> out) { sparse->write_rowptr(out.data()); });
      writer.add_tensor(model::outlier_idx_name(t.name), static_cast<std::uint32_t>(idx_type), {nnz},
                        [sparse](std::span<std::uint8_t> out) { sparse->write_idx(out.data()); });
      writer.add_tensor(model::outlier_val_name(t.name), static_cast<std::uint32_t>(GgmlType::kF16), {nnz},
                        [sparse](std::span<std::uint8_t> out) { sparse->write_val(out.data()); });
      const std::uint64_t extra = 4ull * (t.n_rows() + 1) + (sparse->narrow_idx() ? 2ull : 4ull) * nnz + 2ull * nnz;
      rep.bytes += extra;
      report.total_bytes += extra;
    }
  }
  writer.write(opt.output);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.log) {
    std::fprintf(opt.log, "wrote %s: %.2f MiB of tensors, %.3f bits/weight, %.1f s\n", opt.output.c_str(),
                 static_cast<double>(report.total_bytes) / kMiB, report.bits_per_weight(), report.seconds);
  }
  return report;
}

}  // namespace wisp::quantize
