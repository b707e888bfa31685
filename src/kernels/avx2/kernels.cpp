// The avx2 dot kernels: the x86 kernel bodies (src/kernels/x86/) compiled with this ISA's flags
// (set per file in CMakeLists.txt), exported as a table for this ISA's kernel_set.cpp.
#include "formats/block_types.h"
#include "kernels/kernel_set.h"
#include "kernels/x86/blocks8_dots-inl.h"
#include "kernels/x86/codebook8_dots-inl.h"
#include "kernels/x86/float_dots-inl.h"
#include "kernels/x86/grid_dots-inl.h"
#include "kernels/x86/kquant_dots-inl.h"
#include "kernels/x86/kquant_super8_dots-inl.h"
#include "kernels/x86/legacy_dots-inl.h"
#include "kernels/x86/nonlinear_dots-inl.h"
#include "kernels/x86/ternary_dots-inl.h"

#define WISP_ISA_TABLE avx2_dots
#include "kernels/x86/dot_table.inc"
