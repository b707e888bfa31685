#include "model/outlier_tables.h"

#include "formats/block_types.h"
#include "wisp/error.h"

namespace wisp::model {

std::string outlier_rowptr_name(const std::string& weight) { return weight + ".outlier_rowptr"; }
std::string outlier_idx_name(const std::string& weight) { return weight + ".outlier_idx"; }
std::string outlier_val_name(const std::string& weight) { return weight + ".outlier_val"; }

namespace {

[[noreturn]] void fail(const GgufFile& f, const std::string& name, const std::string& what) {
  throw Error(f.path() + ": tensor '" + name + "' " + what);
}

// A 1-D tensor of `n` elements in container type `type` (the side tables keep integers as raw bit
// patterns in F16/F32 containers: see FORMAT.md for why).
const GgufTensor& one_d(const GgufFile& f, const std::string& name, std::int64_t n, GgmlType type,
                        const std::string& weight) {
  const GgufTensor* t = f.find_tensor(name);
  if (t == nullptr) fail(f, name, "is missing (the sparse outlier table of '" + weight + "' is partial)");
  if (t->n_dims != 1 || t->ne[0] != n) {
    fail(f, name, "has shape " + t->shape_string() + ", expected [" + std::to_string(n) + "]");
  }
  if (t->type_id != static_cast<std::uint32_t>(type)) {
    fail(f, name, std::string("has type ") + t->type->name + ", expected " + block_type(type).name);
  }
  const std::size_t align = type == GgmlType::kF32 ? 4 : 2;
  if (reinterpret_cast<std::uintptr_t>(t->data) % align != 0) fail(f, name, "data is not aligned");
  return *t;
}

}  // namespace

const kernels::SparseRows* bind_outlier_table(const GgufFile& f, const std::string& weight, std::int64_t n_cols,
                                              std::int64_t n_rows,
                                              std::vector<std::unique_ptr<kernels::SparseRows>>& store,
                                              std::set<std::string>& used) {
  const std::string rp_name = outlier_rowptr_name(weight), idx_name = outlier_idx_name(weight),
                    val_name = outlier_val_name(weight);
  if (f.find_tensor(rp_name) == nullptr) {
    if (f.find_tensor(idx_name) != nullptr || f.find_tensor(val_name) != nullptr) {
      fail(f, rp_name, "is missing (the sparse outlier table of '" + weight + "' is partial)");
    }
    return nullptr;
  }
  auto s = std::make_unique<kernels::SparseRows>();
  s->n_rows = n_rows;
  s->n_cols = n_cols;
  const GgufTensor& rp = one_d(f, rp_name, n_rows + 1, GgmlType::kF32, weight);
  s->rowptr = reinterpret_cast<const std::uint32_t*>(rp.data);
  if (s->rowptr[0] != 0) fail(f, rp_name, "does not start at 0");
  for (std::int64_t r = 0; r < n_rows; ++r) {
    if (s->rowptr[r + 1] < s->rowptr[r]) fail(f, rp_name, "decreases at row " + std::to_string(r));
  }
  const std::int64_t nnz = s->rowptr[n_rows];
  const bool narrow = n_cols <= 65536;
  const GgufTensor& idx = one_d(f, idx_name, nnz, narrow ? GgmlType::kF16 : GgmlType::kF32, weight);
  const GgufTensor& val = one_d(f, val_name, nnz, GgmlType::kF16, weight);
  if (narrow) {
    s->idx16 = reinterpret_cast<const std::uint16_t*>(idx.data);
  } else {
    s->idx32 = reinterpret_cast<const std::uint32_t*>(idx.data);
  }
  s->val = reinterpret_cast<const std::uint16_t*>(val.data);
  for (std::int64_t k = 0; k < nnz; ++k) {
    const std::uint32_t c = narrow ? s->idx16[k] : s->idx32[k];
    if (c >= static_cast<std::uint64_t>(n_cols)) {
      fail(f, idx_name,
           "entry " + std::to_string(k) + " is column " + std::to_string(c) + ", outside the " +
               std::to_string(n_cols) + " columns of '" + weight + "'");
    }
  }
  used.insert(rp_name);
  used.insert(idx_name);
  used.insert(val_name);
  store.push_back(std::move(s));
  return store.back().get();
}

}  // namespace wisp::model
