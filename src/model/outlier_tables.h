// Binds a weight's sparse outlier side table (formats/FORMAT.md, "Sparse outlier side tables"):
// the three tensors <weight>.outlier_rowptr / .outlier_idx / .outlier_val, checked for shape,
// container type and index range at load, so a bad table fails here naming the tensor rather than
// reading out of bounds mid-eval.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "formats/gguf_file.h"
#include "kernels/sparse_add.h"

namespace wisp::model {

// The table of `weight` (n_rows x n_cols), or nullptr when the file has none. The view is kept in
// `store` (the MatrixView points at it); the names of the tensors bound are added to `used`.
// Throws wisp::Error naming the file and tensor for a partial or inconsistent table.
const kernels::SparseRows* bind_outlier_table(const GgufFile& f, const std::string& weight, std::int64_t n_cols,
                                              std::int64_t n_rows,
                                              std::vector<std::unique_ptr<kernels::SparseRows>>& store,
                                              std::set<std::string>& used);

// The names of the side-table tensors of `weight`.
std::string outlier_rowptr_name(const std::string& weight);
std::string outlier_idx_name(const std::string& weight);
std::string outlier_val_name(const std::string& weight);

}  // namespace wisp::model
