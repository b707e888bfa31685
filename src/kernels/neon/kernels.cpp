// The plain NEON dot kernels (ARMv8.0 Advanced SIMD, every AArch64 CPU): the kernel bodies of
// this folder compiled without the dot-product extension, exported as a table for dot_table.cpp.
#include "formats/block_types.h"
#include "kernels/isa_dots.h"
#include "kernels/neon/kquant_dots.h"
#include "kernels/neon/legacy_dots.h"

#if defined(__ARM_FEATURE_DOTPROD)
#error "kernels.cpp is the fallback for CPUs without SDOT: build it without +dotprod"
#endif

#define WISP_ISA_TABLE neon_dots
#include "kernels/neon/dot_table.inc"
