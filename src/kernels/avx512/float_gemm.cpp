// The avx512 float GEMMs: x86/float_gemm512-inl.h (over float_tiles-inl.h) compiled with this ISA's flags
// (CMakeLists.txt), exported as a table for this ISA's kernel_set.cpp.
#include "formats/block_types.h"
#include "kernels/kernel_set.h"
#include "kernels/x86/float_gemm512-inl.h"

#define WISP_FLOAT_GEMM_TABLE avx512_float_gemms
#include "kernels/x86/float_gemm_table.inc"
