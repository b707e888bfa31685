// The avx2 WQ dots: the x86 bodies (src/kernels/x86/wq_dots-inl.h, wq_blocks8_dots-inl.h) compiled with this ISA's
// flags (set per file in CMakeLists.txt), exported as a table for this ISA's kernel_set.cpp.
#include "kernels/kernel_set.h"
#include "kernels/x86/wq_blocks8_dots-inl.h"
#include "kernels/x86/wq_dots-inl.h"

#define WISP_WQ_TABLE avx2_wq_dots
#include "kernels/x86/wq_dot_table.inc"
