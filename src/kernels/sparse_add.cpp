#include "kernels/sparse_add.h"

#include "formats/half.h"

namespace wisp::kernels {

namespace {

template <typename Idx>
void add_rows(const SparseRows& s, const Idx* idx, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
              std::int64_t y_stride) {
  for (std::int64_t t = 0; t < n_tok; ++t) {
    const float* xt = x + t * x_stride;
    float* yt = y + t * y_stride;
    for (std::int64_t r = 0; r < s.n_rows; ++r) {
      float acc = 0.0f;
      for (std::uint32_t k = s.rowptr[r]; k < s.rowptr[r + 1]; ++k) acc += f16_to_f32(s.val[k]) * xt[idx[k]];
      yt[r] += acc;
    }
  }
}

}  // namespace

void sparse_add(const SparseRows& s, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
                std::int64_t y_stride) {
  if (s.rowptr == nullptr) return;
  // A handful of entries per row (0.1-1% of the weights): scalar and single-threaded, this is
  // about 1.7 ms per token for SmolLM2 at 0.5% (555k entries) against ~40 ms of dense decode.
  if (s.idx16 != nullptr) {
    add_rows(s, s.idx16, x, x_stride, n_tok, y, y_stride);
  } else {
    add_rows(s, s.idx32, x, x_stride, n_tok, y, y_stride);
  }
}

}  // namespace wisp::kernels
