// The avx512 kernel bundle's exports (kernel_set.h): the tables of this folder's other files.
// Plain pointer stores only, so nothing here is inline code a scalar caller could share.
#include "kernels/kernel_set.h"

namespace wisp::kernels {

void avx512_kernels(IsaKernels& k) {
  k.dots = avx512_dots(&k.n_dots);
  k.wq_dots = avx512_wq_dots(&k.n_wq_dots);
  k.multi_dots = avx512_multi_dots(&k.n_multi_dots);
  k.float_gemms = avx512_float_gemms(&k.n_float_gemms);
  k.act_quant = *avx512_act_quant();
  k.ggml16 = *avx512_ggml16();
}

}  // namespace wisp::kernels
