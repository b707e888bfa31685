#include "plan/decode_reads.h"

#include <cmath>
#include <string>

#include "wisp/error.h"

namespace wisp::plan {
namespace {

// A merged expert tensor: "blk.N.ffn_{gate,up,down,gate_up}_exps.{weight,bias}".
bool is_expert_tensor(std::string_view name) {
  return name.rfind("blk.", 0) == 0 && name.find("_exps.") != std::string_view::npos;
}

}  // namespace

double expert_share_read(const DecodeReads& r, std::uint64_t batch) {
  if (batch == 0) throw Error("batch size must be positive");
  if (!r.moe()) return 1.0;
  const double k = static_cast<double>(r.n_expert_used), n = static_cast<double>(r.n_expert);
  if (batch == 1) return k / n;
  return 1.0 - std::pow(1.0 - k / n, static_cast<double>(batch));
}

std::uint64_t decode_bytes_read(const DecodeReads& r, std::uint64_t batch) {
  if (!r.moe()) return r.dense_bytes;
  if (batch == 1) return r.dense_bytes + r.expert_bytes / r.n_expert * r.n_expert_used;
  return r.dense_bytes +
         static_cast<std::uint64_t>(std::llround(static_cast<double>(r.expert_bytes) * expert_share_read(r, batch)));
}

double decode_params_read(const DecodeReads& r, std::uint64_t batch) {
  return r.dense_params + r.expert_params * expert_share_read(r, batch);
}

DecodeReads decode_reads_from_gguf(const GgufFile& f) {
  const std::string arch(f.architecture());
  DecodeReads r;
  r.n_expert = f.get_u64_opt(arch + ".expert_count").value_or(0);
  const bool untied = f.find_tensor("output.weight") != nullptr;
  for (const GgufTensor& t : f.tensors()) {
    const double elements = static_cast<double>(t.n_elements());
    if (is_expert_tensor(t.name)) {
      if (r.n_expert == 0) {
        throw Error(f.path() + ": tensor " + std::string(t.name) + " holds merged experts but " + arch +
                    ".expert_count is missing or 0");
      }
      if (t.n_dims < 2 || t.ne[t.n_dims - 1] != static_cast<std::int64_t>(r.n_expert)) {
        throw Error(f.path() + ": tensor " + std::string(t.name) + " has shape " + t.shape_string() +
                    ", its last dimension is not " + arch + ".expert_count = " + std::to_string(r.n_expert));
      }
      r.expert_params += elements;
      r.expert_bytes += t.n_bytes;
    } else if (untied && t.name == "token_embd.weight" && t.n_dims == 2) {
      // A step looks up one row per token; the output has its own matrix.
      r.dense_params += static_cast<double>(t.ne[0]);
      r.dense_bytes += t.row_bytes();
      r.embedding_one_row = true;
    } else {
      r.dense_params += elements;
      r.dense_bytes += t.n_bytes;
    }
  }
  if (r.expert_bytes == 0) r.n_expert = 0;  // the key without expert tensors: a dense model
  if (r.moe()) {
    const auto used = f.get_u64_opt(arch + ".expert_used_count");
    if (!used || *used == 0 || *used > r.n_expert) {
      throw Error(f.path() + ": " + arch + ".expert_used_count " +
                  (used ? "= " + std::to_string(*used) : "is missing") + "; it must be between 1 and " + arch +
                  ".expert_count = " + std::to_string(r.n_expert));
    }
    r.n_expert_used = *used;
  }
  return r;
}

}  // namespace wisp::plan
