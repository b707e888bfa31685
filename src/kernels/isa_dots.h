// The interface between the dot table (dot_table.cpp) and the per-ISA kernel files.
//
// Each ISA's kernels live in their own translation units compiled with that ISA's -m flags
// (src/kernels/avx2/, src/kernels/avx512/, src/kernels/neon/). They export only plain function
// pointers through this header, never inline code: an inline function compiled with AVX-512
// flags could otherwise be the copy the linker keeps for a scalar caller. The table starts from
// the scalar kernels and replaces the functions an ISA provides (null: keep the scalar one).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dot.h"

namespace wisp::kernels {

struct IsaDots {
  std::uint32_t weight_type;
  DotFn dot;
  DotFn dot_batched;
  DotFn dot_repacked;
  DotFn dot_repacked_x4;
  DotFn dot_invariant = nullptr;  // wisp's own order (DotKernel::dot_invariant), on act_invariant
  ActFormat act_invariant = ActFormat::kF32;
};

// The kernels of each x86 ISA (count in *n); call only when the CPU supports the ISA.
const IsaDots* avx2_dots(std::size_t* n);
const IsaDots* avx512_dots(std::size_t* n);
// The AArch64 kernels: plain Advanced SIMD (ARMv8.0), and the same kernels built with the
// dot-product extension (SDOT); call the latter only when the CPU has it.
const IsaDots* neon_dots(std::size_t* n);
const IsaDots* neon_dotprod_dots(std::size_t* n);

}  // namespace wisp::kernels
