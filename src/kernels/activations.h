// Element-wise activations of the FFN and the output, with ggml's numerics.
#pragma once

#include <cstdint>

#include "kernels/ggml_order.h"

namespace wisp::kernels {

// out = silu(gate) * up, silu(x) = x / (1 + e^-x), with ggml's vector exp (ggml_order.h) of the
// `isa` build: whole vectors through it, the tail through libm. out may alias gate or up.
void silu_mul(const float* gate, const float* up, float* out, std::int64_t n, ggml::Simd isa = ggml::Simd::kAvx512);

// out = gelu_tanh(gate) * up (GeGLU). ggml evaluates gelu through a table indexed by the input
// rounded to half precision, and stores the table in half precision; this reproduces that exactly
// (inputs beyond +-10 are 0 or identity, as there). out may alias gate or up.
void gelu_tanh_mul(const float* gate, const float* up, float* out, std::int64_t n);

// The tanh-approximated GELU in float, without the half-precision table (reference, tests).
float gelu_tanh(float x);

// x = cap * tanh(x / cap): Gemma's final-logit soft-capping.
void softcap(float* x, std::int64_t n, float cap);

// x *= s.
void scale(float* x, std::int64_t n, float s);
// y += x.
void add(const float* x, float* y, std::int64_t n);

// In-place softmax of n values in ggml's order: max-subtracted exponentials (ggml's vector exp)
// summed per group of 16 (AVX-512 build) or 8 (AVX2), the group sums added in double, the tail
// through libm, then everything scaled by the float reciprocal of the sum. Index 0 starts a
// group: pass whole KV rows (masked entries as -inf).
void softmax(float* x, std::int64_t n, ggml::Simd isa = ggml::Simd::kAvx512);
// The same with a sink (gpt-oss's attention): a logit outside x that joins the max and adds
// exp(sink - max) to the sum in double after the groups, as ggml's soft_max with sinks does.
void softmax_with_sink(float* x, std::int64_t n, float sink, ggml::Simd isa = ggml::Simd::kAvx512);

// gpt-oss's clamped SwiGLU (ggml_swiglu_oai with llama.cpp's alpha 1.702 and limit 7):
// out = g / (1 + exp(-alpha g)) * (u + 1) with g = min(gate, limit), u = clamp(up, -limit, limit).
void swiglu_oai_mul(const float* gate, const float* up, float* out, std::int64_t n, float alpha = 1.702f,
                    float limit = 7.0f);

}  // namespace wisp::kernels
