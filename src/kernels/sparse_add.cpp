#include "kernels/sparse_add.h"

#include "formats/half.h"

namespace wisp::kernels {

void sparse_add(const SparseRows& s, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
                std::int64_t y_stride) {
  if (s.rowptr == nullptr) return;
  // A handful of entries per row (0.1-1% of the weights): a scalar loop is a small fraction of the
  // dense matmul's time, so it stays single-threaded and simple.
  for (std::int64_t t = 0; t < n_tok; ++t) {
    const float* xt = x + t * x_stride;
    float* yt = y + t * y_stride;
    for (std::int64_t r = 0; r < s.n_rows; ++r) {
      float acc = 0.0f;
      for (std::uint32_t k = s.rowptr[r]; k < s.rowptr[r + 1]; ++k) {
        const std::uint32_t c = s.idx16 != nullptr ? s.idx16[k] : s.idx32[k];
        acc += f16_to_f32(s.val[k]) * xt[c];
      }
      yt[r] += acc;
    }
  }
}

}  // namespace wisp::kernels
