// A WQ group's stored scale and zero-point chosen by a grid search over (s, z) against a weighted
// squared error (`wisp quantize --gptq --gptq-search`, docs/quantization.md).
//
// Why not the range search (row_quantizer.h): that one only shrinks the min/max clipping range,
// so z always follows from the range's ends. At 2-3 bits the code grid has 4-8 levels, and
// where it sits (z) matters as much as its step: a grid one step off centre wastes a level on
// values that are not there. The candidates here are every f16 scale
//   s_k = f16((max - min) / (2^b - 1) * (50 - k) / 50),  k = 0 .. kGridScales - 1
// (1.0 down to 0.4 of the min/max step, the range widened to contain 0 as the format requires)
// times every zero-point z in [0, 2^b - 1], plus the min/max parameters themselves; the best one
// then gets one weighted least-squares refit of s with its codes fixed. Strict improvements only,
// in that order, so ties keep the earlier candidate (scripts/gen_golden_gptq.py follows the same
// order to the bit).
#pragma once

#include "formats/wq_format.h"

namespace wisp::quantize {

inline constexpr int kGridScales = 31;
// Above 4 bits (32+ levels) where the grid sits matters little and the z candidates multiply: those
// groups take the range search (row_quantizer.h) under the same weights.
inline constexpr int kGridMaxBits = 4;

// `w` weights each value's squared error (nullptr: uniform). A constant group keeps its exact
// min/max parameters.
WqParams grid_search_group_params(const float* x, const float* w, int bits, int group);

// sum_j w_j (x_j - dequant(code(x_j)))^2 for parameters p, in double, j ascending (the search's measure).
double weighted_group_error(const float* x, const float* w, int bits, int group, const WqParams& p);

}  // namespace wisp::quantize
