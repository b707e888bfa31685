// Scalar dot kernels for wisp's group-wise WQ types (formats/wq_format.h), registered behind the
// dot-kernel table (dot_table.cpp falls back to find_wq_dot_kernel for type ids it lacks).
// The activation stays F32: a WQ group is decoded to floats and multiplied in place. This is the
// reference the SIMD kernels of the fast-kernels issue will be tested against, not a fast path.
#pragma once

#include <cstdint>

#include "kernels/dot.h"

namespace wisp::kernels {

// The kernel for a WQ type id, or nullptr when `type_id` is not one.
const DotKernel* find_wq_dot_kernel(std::uint32_t type_id);

}  // namespace wisp::kernels
