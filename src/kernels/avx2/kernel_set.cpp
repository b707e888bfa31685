// The avx2 kernel bundle's exports (kernel_set.h): the tables of this folder's other files.
// Plain pointer stores only, so nothing here is inline code a scalar caller could share.
#include "kernels/kernel_set.h"

namespace wisp::kernels {

void avx2_kernels(IsaKernels& k) {
  k.dots = avx2_dots(&k.n_dots);
  k.wq_dots = avx2_wq_dots(&k.n_wq_dots);
  k.multi_dots = avx2_multi_dots(&k.n_multi_dots);
  k.float_gemms = avx2_float_gemms(&k.n_float_gemms);
  k.act_quant = *avx2_act_quant();
  // ggml's 16-lane float paths: the portable forms (no AVX2 form yet).
}

}  // namespace wisp::kernels
