// The NEON dot kernels built with the ARMv8.2 dot-product extension (SDOT: 4 int8 products summed
// into an int32 lane in one instruction), compiled with -march=armv8.2-a+dotprod (set per file in
// CMakeLists.txt) and chosen at run time only where HWCAP_ASIMDDP says the CPU has it.
#include "formats/block_types.h"
#include "kernels/kernel_set.h"
#include "kernels/neon/blocks8_dots-inl.h"
#include "kernels/neon/blocks8_gemm-inl.h"
#include "kernels/neon/codebook8_dots-inl.h"
#include "kernels/neon/codebook8_gemm-inl.h"
#include "kernels/neon/float_lanes8-inl.h"
#include "kernels/neon/grid_dots-inl.h"
#include "kernels/neon/kquant_dots-inl.h"
#include "kernels/neon/kquant_super8_dots-inl.h"
#include "kernels/neon/kquant_super8_gemm-inl.h"
#include "kernels/neon/legacy_dots-inl.h"
#include "kernels/neon/nonlinear_dots-inl.h"
#include "kernels/neon/ternary_dots-inl.h"
#include "kernels/neon/wq_blocks8_gemm-inl.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "kernels_dotprod.cpp needs the dot-product extension: compile it with -march=armv8.2-a+dotprod"
#endif

#define WISP_ISA_TABLE neon_dotprod_dots
#include "kernels/neon/dot_table.inc"

namespace wisp::kernels {

// The bundle: the GGML types' and the WQ types' dots, the prefill GEMMs (dot_table.inc's
// multi_dots: the 32-value types', the codebook types', Q4_K's, Q5_K's and the WQ types' 8-row
// integer GEMMs) and
// the float types' tiled GEMMs. The activation quantizers and ggml's 16-lane float paths keep the
// scalar references.
void neon_dotprod_kernels(IsaKernels& k) {
  k.dots = neon_dotprod_dots(&k.n_dots);
  k.wq_dots = wq_dots(&k.n_wq_dots);
  k.multi_dots = multi_dots(&k.n_multi_dots);
  k.float_gemms = float_gemms(&k.n_float_gemms);
}

}  // namespace wisp::kernels
