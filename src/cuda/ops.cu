// The CUDA backend's row-wise and element-wise ops. Each row is reduced by one thread block in a
// fixed order (threads stride over the row, then a fixed tree), so a row's result depends on the
// row alone.
#include <cstdint>

#include "cuda/cuda_check.h"
#include "cuda/device_kernels.h"

namespace wisp::cuda {

namespace {

constexpr int kBlock = 256;

__global__ void rmsnorm_kernel(const float* x, std::int64_t x_stride, const float* w, float eps, float* y,
                               std::int64_t y_stride, std::int64_t n_cols) {
  __shared__ double part[kBlock];
  const float* xr = x + blockIdx.x * x_stride;
  float* yr = y + blockIdx.x * y_stride;
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < n_cols; i += kBlock) sum += static_cast<double>(xr[i] * xr[i]);
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int n = kBlock / 2; n > 0; n /= 2) {
    if (static_cast<int>(threadIdx.x) < n) part[threadIdx.x] += part[threadIdx.x + n];
    __syncthreads();
  }
  const float mean = static_cast<float>(part[0] / static_cast<double>(n_cols));
  const float scale = 1.0f / sqrtf(mean + eps);
  for (std::int64_t i = threadIdx.x; i < n_cols; i += kBlock) {
    const float v = hd_mul(xr[i], scale);
    yr[i] = w != nullptr ? hd_mul(v, w[i]) : v;
  }
}

__global__ void add_rows_kernel(const float* bias, float* y, std::int64_t y_stride, std::int64_t n_rows,
                                std::int64_t n_cols) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_rows * n_cols) return;
  float& v = y[(i / n_cols) * y_stride + i % n_cols];
  v = hd_add(bias[i % n_cols], v);
}

__global__ void add_kernel(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride, std::int64_t n_rows,
                           std::int64_t n_cols) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_rows * n_cols) return;
  const std::int64_t r = i / n_cols, c = i % n_cols;
  y[r * y_stride + c] = hd_add(y[r * y_stride + c], x[r * x_stride + c]);
}

__global__ void scale_kernel(float* x, std::int64_t stride, std::int64_t n_rows, std::int64_t n_cols, float v) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_rows * n_cols) return;
  float& e = x[(i / n_cols) * stride + i % n_cols];
  e = hd_mul(e, v);
}

__global__ void softcap_kernel(float* x, std::int64_t stride, std::int64_t n_rows, std::int64_t n_cols, float cap) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_rows * n_cols) return;
  float& e = x[(i / n_cols) * stride + i % n_cols];
  e = hd_mul(tanhf(hd_mul(e, 1.0f / cap)), cap);
}

__device__ float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoef = 0.044715f;
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

__global__ void glu_kernel(bool gelu, const float* gate, std::int64_t g_stride, const float* up, std::int64_t u_stride,
                           float* out, std::int64_t o_stride, std::int64_t n_rows, std::int64_t n_cols) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_rows * n_cols) return;
  const std::int64_t r = i / n_cols, c = i % n_cols;
  const float g = gate[r * g_stride + c];
  float act;
  if (gelu) {
    // The CPU's GELU: the input rounded to half, gelu_tanh of it rounded to half (ggml's table).
    act = g <= -10.0f  ? 0.0f
          : g >= 10.0f ? g
                       : __half2float(__float2half_rn(gelu_tanh(__half2float(__float2half_rn(g)))));
  } else {
    act = __fdiv_rn(g, hd_add(1.0f, expf(-g)));
  }
  out[r * o_stride + c] = hd_mul(act, up[r * u_stride + c]);
}

__global__ void gather_kernel(const float* src, std::int64_t s_stride, const std::int64_t* rows, std::int64_t n,
                              float* dst, std::int64_t d_stride, std::int64_t n_cols) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n * n_cols) return;
  const std::int64_t r = i / n_cols, c = i % n_cols;
  dst[r * d_stride + c] = src[rows[r] * s_stride + c];
}

__global__ void weighted_sum_kernel(const float* src, std::int64_t s_stride, const std::int64_t* rows,
                                    const float* weights, std::int64_t k, float* out, std::int64_t o_stride,
                                    std::int64_t n_rows, std::int64_t n_cols) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_rows * n_cols) return;
  const std::int64_t t = i / n_cols, c = i % n_cols;
  float acc = hd_mul(src[rows[t * k] * s_stride + c], weights[t * k]);
  for (std::int64_t e = 1; e < k; ++e)
    acc = hd_add(acc, hd_mul(src[rows[t * k + e] * s_stride + c], weights[t * k + e]));
  out[t * o_stride + c] = acc;
}

// One thread per rotated pair; the CPU's formulas (x0 c - x1 s, x0 s + x1 c) in its rounding.
__global__ void rope_kernel(float* x, std::int64_t stride, std::int64_t n_tok, std::int64_t n_heads,
                            std::int64_t head_dim, int n_dims, bool neox, const float* cos_sin) {
  const int half = n_dims / 2;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_tok * n_heads * half) return;
  const std::int64_t t = i / (n_heads * half);
  const std::int64_t h = (i / half) % n_heads;
  const int p = static_cast<int>(i % half);
  const float c = cos_sin[t * n_dims + 2 * p];
  const float s = cos_sin[t * n_dims + 2 * p + 1];
  float* a = x + t * stride + h * head_dim + (neox ? p : 2 * p);
  const int offset = neox ? half : 1;
  const float x0 = a[0], x1 = a[offset];
  a[0] = __fsub_rn(hd_mul(x0, c), hd_mul(x1, s));
  a[offset] = hd_add(hd_mul(x0, s), hd_mul(x1, c));
}

unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

}  // namespace

void launch_rmsnorm(const float* x, std::int64_t x_stride, const float* w, float eps, float* y, std::int64_t y_stride,
                    std::int64_t n_rows, std::int64_t n_cols, cudaStream_t s) {
  rmsnorm_kernel<<<static_cast<unsigned>(n_rows), kBlock, 0, s>>>(x, x_stride, w, eps, y, y_stride, n_cols);
  check(cudaGetLastError(), "rmsnorm launch");
}

void launch_add_rows(const float* bias, float* y, std::int64_t y_stride, std::int64_t n_rows, std::int64_t n_cols,
                     cudaStream_t s) {
  add_rows_kernel<<<blocks_for(n_rows * n_cols), kBlock, 0, s>>>(bias, y, y_stride, n_rows, n_cols);
  check(cudaGetLastError(), "bias launch");
}

void launch_add(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride, std::int64_t n_rows,
                std::int64_t n_cols, cudaStream_t s) {
  add_kernel<<<blocks_for(n_rows * n_cols), kBlock, 0, s>>>(x, x_stride, y, y_stride, n_rows, n_cols);
  check(cudaGetLastError(), "add launch");
}

void launch_scale(float* x, std::int64_t stride, std::int64_t n_rows, std::int64_t n_cols, float v, cudaStream_t s) {
  scale_kernel<<<blocks_for(n_rows * n_cols), kBlock, 0, s>>>(x, stride, n_rows, n_cols, v);
  check(cudaGetLastError(), "scale launch");
}

void launch_softcap(float* x, std::int64_t stride, std::int64_t n_rows, std::int64_t n_cols, float cap,
                    cudaStream_t s) {
  softcap_kernel<<<blocks_for(n_rows * n_cols), kBlock, 0, s>>>(x, stride, n_rows, n_cols, cap);
  check(cudaGetLastError(), "softcap launch");
}

void launch_glu(bool gelu, const float* gate, std::int64_t g_stride, const float* up, std::int64_t u_stride, float* out,
                std::int64_t o_stride, std::int64_t n_rows, std::int64_t n_cols, cudaStream_t s) {
  glu_kernel<<<blocks_for(n_rows * n_cols), kBlock, 0, s>>>(gelu, gate, g_stride, up, u_stride, out, o_stride, n_rows,
                                                            n_cols);
  check(cudaGetLastError(), "glu launch");
}

void launch_gather_rows(const float* src, std::int64_t s_stride, const std::int64_t* rows, std::int64_t n, float* dst,
                        std::int64_t d_stride, std::int64_t n_cols, cudaStream_t s) {
  gather_kernel<<<blocks_for(n * n_cols), kBlock, 0, s>>>(src, s_stride, rows, n, dst, d_stride, n_cols);
  check(cudaGetLastError(), "gather launch");
}

void launch_weighted_sum_rows(const float* src, std::int64_t s_stride, const std::int64_t* rows, const float* weights,
                              std::int64_t k, float* out, std::int64_t o_stride, std::int64_t n_rows,
                              std::int64_t n_cols, cudaStream_t s) {
  weighted_sum_kernel<<<blocks_for(n_rows * n_cols), kBlock, 0, s>>>(src, s_stride, rows, weights, k, out, o_stride,
                                                                     n_rows, n_cols);
  check(cudaGetLastError(), "weighted sum launch");
}

void launch_rope(float* x, std::int64_t stride, std::int64_t n_tok, std::int64_t n_heads, std::int64_t head_dim,
                 int n_dims, bool neox, const float* cos_sin, cudaStream_t s) {
  rope_kernel<<<blocks_for(n_tok * n_heads * (n_dims / 2)), kBlock, 0, s>>>(x, stride, n_tok, n_heads, head_dim, n_dims,
                                                                            neox, cos_sin);
  check(cudaGetLastError(), "rope launch");
}

}  // namespace wisp::cuda
