// Scalar dot kernels for wisp's group-wise WQ types (formats/wq_format.h), registered behind the
// dot-kernel table (dot_table.cpp falls back to find_wq_dot_kernel for type ids it lacks).
// The activation stays F32: a WQ group's codes are unpacked in registers and multiplied in place.
// The float order is documented in dot_wq.cpp; the SIMD kernels (src/kernels/x86/wq_dots.h) keep it.
#pragma once

#include <cstdint>

#include "kernels/dot.h"

namespace wisp::kernels {

// The scalar reference kernel for a WQ type id, or nullptr when `type_id` is not one.
const DotKernel* find_wq_dot_kernel(std::uint32_t type_id);
// The kernel built for `isa` (types or ISAs without SIMD kernels keep the scalar one).
const DotKernel* find_wq_dot_kernel_for(std::uint32_t type_id, Isa isa);

}  // namespace wisp::kernels
