// The avx512 multi-output dots: the x86 bodies (src/kernels/x86/multi_dots-inl.h) compiled with this
// ISA's flags (set per file in CMakeLists.txt), exported as a table for this ISA's kernel_set.cpp.
#include "kernels/kernel_set.h"
#include "kernels/x86/codebook8_gemm-inl.h"
#include "kernels/x86/kquant_super8_gemm-inl.h"
#include "kernels/x86/multi_dots-inl.h"
#include "kernels/x86/wq_blocks8_gemm-inl.h"
#include "kernels/x86/wq_multi_dots-inl.h"

#define WISP_MULTI_TABLE avx512_multi_dots
#include "kernels/x86/multi_dot_table.inc"
