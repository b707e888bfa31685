#include "quantize/gptq.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "formats/half.h"
#include "quantize/row_quantizer.h"
#include "wisp/error.h"

namespace wisp::quantize {

// ---- Hessian accumulation -----------------------------------------------------------------------

HessianAccumulator::HessianAccumulator(std::int64_t n) : n_(n), upper_(static_cast<std::size_t>(n * n), 0.0) {
  if (n <= 0) throw Error("gptq: a Hessian needs at least one input channel");
}

void HessianAccumulator::add(const float* rows, std::int64_t m, int n_threads) {
  if (m <= 0) return;
  const std::int64_t n = n_;
  // Columns as contiguous vectors, so each entry of X^T X is one dot product the compiler vectorises.
  std::vector<float> xt(static_cast<std::size_t>(n * m));
  for (std::int64_t r = 0; r < m; ++r) {
    for (std::int64_t j = 0; j < n; ++j) xt[static_cast<std::size_t>(j * m + r)] = rows[r * n + j];
  }
  // Threads only for work that outweighs waking them (a busy machine makes each region costly).
  const bool big = static_cast<double>(n) * n * m > 8e6;
#pragma omp parallel for schedule(dynamic, 8) num_threads(std::max(1, n_threads)) if (big)
  for (std::int64_t i = 0; i < n; ++i) {
    const float* a = xt.data() + i * m;
    double* out = upper_.data() + i * n;
    for (std::int64_t j = i; j < n; ++j) {
      const float* b = xt.data() + j * m;
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (std::int64_t r = 0; r < m; ++r) s += a[r] * b[r];
      out[j] += s;
    }
  }
  rows_ += m;
}

std::vector<double> HessianAccumulator::hessian() const {
  const std::int64_t n = n_;
  std::vector<double> h(static_cast<std::size_t>(n * n));
  const double k = rows_ > 0 ? 2.0 / static_cast<double>(rows_) : 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i; j < n; ++j) {
      const double v = k * upper_[static_cast<std::size_t>(i * n + j)];
      h[static_cast<std::size_t>(i * n + j)] = v;
      h[static_cast<std::size_t>(j * n + i)] = v;
    }
  }
  return h;
}

// ---- the factor ---------------------------------------------------------------------------------

namespace {

// In-place lower Cholesky factor of a (n x n row-major, lower triangle read); false when a pivot
// is not positive. The upper triangle is zeroed. Row by row (each row needs only the rows above
// it), on one thread: a parallel region per column would wait on every busy core n times.
bool cholesky_lower(std::vector<double>& a, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    double* ri = a.data() + i * n;
    for (std::int64_t j = 0; j < i; ++j) {
      const double* rj = a.data() + j * n;
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (std::int64_t k = 0; k < j; ++k) s += ri[k] * rj[k];
      ri[j] = (ri[j] - s) / rj[j];
    }
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (std::int64_t k = 0; k < i; ++k) s += ri[k] * ri[k];
    const double d = ri[i] - s;
    if (!(d > 0) || !std::isfinite(d)) return false;
    ri[i] = std::sqrt(d);
  }
  for (std::int64_t i = 0; i < n; ++i) std::fill(a.begin() + i * n + i + 1, a.begin() + (i + 1) * n, 0.0);
  return true;
}

// The inverse of a lower triangular L, transposed: row j holds column j of L^-1 (so every sum
// below runs along rows).
std::vector<double> lower_inverse_transposed(const std::vector<double>& l, std::int64_t n, int n_threads) {
  std::vector<double> xt(static_cast<std::size_t>(n * n), 0.0);
#pragma omp parallel for schedule(dynamic, 4) num_threads(std::max(1, n_threads))
  for (std::int64_t j = 0; j < n; ++j) {
    double* c = xt.data() + j * n;  // (L^-1)[., j]
    c[j] = 1.0 / l[static_cast<std::size_t>(j * n + j)];
    for (std::int64_t i = j + 1; i < n; ++i) {
      const double* li = l.data() + i * n;
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (std::int64_t k = j; k < i; ++k) s += li[k] * c[k];
      c[i] = -s / li[i];
    }
  }
  return xt;
}

}  // namespace

GptqFactor gptq_factor(std::vector<double> h, std::int64_t n, const GptqOptions& opt, const std::string& what) {
  if (n <= 0 || static_cast<std::int64_t>(h.size()) != n * n) {
    throw Error("gptq: " + what + ": Hessian of " + std::to_string(h.size()) + " values for " + std::to_string(n) +
                " channels");
  }
  if (!(opt.damp >= 0)) throw Error("gptq: damping must be >= 0");
  GptqFactor f;
  f.n = n;
  f.dead.assign(static_cast<std::size_t>(n), false);
  double mean_diag = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    double& d = h[static_cast<std::size_t>(j * n + j)];
    if (!std::isfinite(d)) throw Error("gptq: " + what + ": the Hessian is not finite at channel " + std::to_string(j));
    if (d == 0) {
      // No activation ever reached this channel: its weights do not matter (they are zeroed).
      f.dead[static_cast<std::size_t>(j)] = true;
      d = 1;
    }
    mean_diag += d;
  }
  mean_diag /= static_cast<double>(n);
  for (std::int64_t j = 0; j < n; ++j) h[static_cast<std::size_t>(j * n + j)] += opt.damp * mean_diag;
  f.diag.resize(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) f.diag[static_cast<std::size_t>(j)] = h[static_cast<std::size_t>(j * n + j)];

  if (opt.refit_scales) f.h = h;  // the re-fit's objective (n^2 doubles more while the factor lives)
  f.perm.resize(static_cast<std::size_t>(n));
  std::iota(f.perm.begin(), f.perm.end(), 0);
  if (opt.act_order) {
    // Largest diag H first: the columns whose error matters most are quantized while the most
    // other columns remain to absorb it. Stable, so equal diagonals keep input order.
    std::stable_sort(f.perm.begin(), f.perm.end(), [&](std::int64_t a, std::int64_t b) {
      return f.diag[static_cast<std::size_t>(a)] > f.diag[static_cast<std::size_t>(b)];
    });
  }
  f.pos.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) f.pos[static_cast<std::size_t>(f.perm[static_cast<std::size_t>(i)])] = i;
  // U without forming H^-1: with J the order reversal, J H J = M M^T (M lower) gives
  // H^-1 = (J M^-1 J)^T (J M^-1 J), and J M^-1 J is upper triangular with a positive diagonal:
  // the upper Cholesky factor of H^-1. One factorisation and one triangular inverse.
  std::vector<double> hr(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t ci = f.perm[static_cast<std::size_t>(n - 1 - i)];
    for (std::int64_t j = 0; j < n; ++j) {
      hr[static_cast<std::size_t>(i * n + j)] =
          h[static_cast<std::size_t>(ci * n + f.perm[static_cast<std::size_t>(n - 1 - j)])];
    }
  }
  h.clear();
  h.shrink_to_fit();
  if (!cholesky_lower(hr, n)) {
    throw Error("gptq: " + what + ": the damped Hessian is not positive definite (raise --gptq-damp, now " +
                std::to_string(opt.damp) + ", or calibrate on more tokens)");
  }
  const std::vector<double> mt = lower_inverse_transposed(hr, n, opt.n_threads);  // mt[b][a] = (M^-1)[a][b]
  hr.clear();
  hr.shrink_to_fit();
  f.u.assign(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i; j < n; ++j) {
      f.u[static_cast<std::size_t>(i * n + j)] = mt[static_cast<std::size_t>((n - 1 - j) * n + (n - 1 - i))];
    }
  }
  return f;
}

// ---- quantizing rows ----------------------------------------------------------------------------

namespace {

void write_block(const WqParams& p, const std::uint8_t* codes, const WqFormat& f, std::uint8_t* block) {
  // The header as formats/FORMAT.md lays it out (and wq_encode_group writes it).
  const std::uint16_t s16 = f32_to_f16(p.scale);
  block[0] = static_cast<std::uint8_t>(s16 & 0xff);
  block[1] = static_cast<std::uint8_t>(s16 >> 8);
  block[2] = static_cast<std::uint8_t>(p.zero);
  block[3] = 0;
  wq_pack_codes(codes, f.bits, f.group, block + kWqHeaderBytes);
}

// Rows processed together share every read of U (the lazy update is a small matrix product).
constexpr std::int64_t kRowChunk = 16;

struct RowChunk {
  const GptqFactor& fac;
  const WqFormat& f;
  const GptqOptions& opt;
  std::int64_t k;  // outliers per row

  void run(const float* w_in, std::int64_t rows, std::uint8_t* blocks, std::uint32_t* idx, std::uint16_t* val) const {
    const std::int64_t n = fac.n, G = f.group, n_groups = n / G, B = std::max(1, opt.block_size);
    const std::size_t row_bytes = static_cast<std::size_t>(n_groups) * f.block_bytes();
    // w in processing order, as double (the updates accumulate many small terms).
    std::vector<double> w(static_cast<std::size_t>(rows * n));
    std::vector<std::uint8_t> kept(static_cast<std::size_t>(rows * n), 0);  // by input column
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* src = w_in + r * n;
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t c = fac.perm[static_cast<std::size_t>(i)];
        w[static_cast<std::size_t>(r * n + i)] = fac.dead[static_cast<std::size_t>(c)] ? 0.0 : src[c];
      }
      if (k > 0) {
        // The k largest |w| of the row as it came (after any AWQ scaling), in column order.
        std::vector<std::uint32_t> order(static_cast<std::size_t>(n));
        std::iota(order.begin(), order.end(), 0u);
        std::nth_element(order.begin(), order.begin() + (k - 1), order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return std::fabs(src[a]) > std::fabs(src[b]); });
        std::sort(order.begin(), order.begin() + k);
        for (std::int64_t t = 0; t < k; ++t) {
          kept[static_cast<std::size_t>(r * n + order[static_cast<std::size_t>(t)])] = 1;
          idx[r * k + t] = order[static_cast<std::size_t>(t)];
        }
      }
    }
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(rows * n));  // by input column
    std::vector<WqParams> params(static_cast<std::size_t>(rows * n_groups));
    std::vector<bool> started(static_cast<std::size_t>(n_groups), false);
    std::vector<double> err(static_cast<std::size_t>(rows * B));
    std::vector<float> residual(static_cast<std::size_t>(rows * n), 0.0f);      // f16 residuals of kept entries
    std::vector<float> kept_x(k > 0 ? static_cast<std::size_t>(rows * n) : 0);  // kept entries' values when rounded
    std::vector<float> gx(static_cast<std::size_t>(G)), gw(static_cast<std::size_t>(G));
    const double* u = fac.u.data();

    for (std::int64_t b0 = 0; b0 < n; b0 += B) {
      const std::int64_t b1 = std::min(n, b0 + B);
      for (std::int64_t i = b0; i < b1; ++i) {
        const std::int64_t c = fac.perm[static_cast<std::size_t>(i)];
        const std::int64_t g = c / G;
        if (!started[static_cast<std::size_t>(g)]) {
          started[static_cast<std::size_t>(g)] = true;
          for (std::int64_t r = 0; r < rows; ++r)
            params[static_cast<std::size_t>(r * n_groups + g)] = group_params(w, err, r, g, i, b0, b1, kept, gx, gw);
        }
        const double d = u[i * n + i];
        for (std::int64_t r = 0; r < rows; ++r) {
          double* wr = w.data() + r * n;
          const WqParams& p = params[static_cast<std::size_t>(r * n_groups + g)];
          const float x = static_cast<float>(wr[i]);
          const int q = wq_code(x, p, f.bits);
          codes[static_cast<std::size_t>(r * n + c)] = static_cast<std::uint8_t>(q);
          double rec = wq_value(q, p);
          if (kept[static_cast<std::size_t>(r * n + c)]) {
            const float res = f16_to_f32(f32_to_f16(x - static_cast<float>(rec)));
            residual[static_cast<std::size_t>(r * n + c)] = res;
            kept_x[static_cast<std::size_t>(r * n + c)] = x;
            rec = static_cast<double>(static_cast<float>(rec) + res);  // dense + sparse, as the model adds them
          }
          const double e = (wr[i] - rec) / d;
          err[static_cast<std::size_t>(r * B + (i - b0))] = e;
          const double* ui = u + i * n;
          for (std::int64_t t = i + 1; t < b1; ++t) wr[t] -= e * ui[t];
        }
      }
      // The block's errors onto every later column at once.
      if (b1 < n) {
        for (std::int64_t r = 0; r < rows; ++r) {
          double* wr = w.data() + r * n;
          const double* er = err.data() + r * B;
          for (std::int64_t i = b0; i < b1; ++i) {
            const double e = er[i - b0];
            const double* ui = u + i * n;
#pragma omp simd
            for (std::int64_t t = b1; t < n; ++t) wr[t] -= e * ui[t];
          }
        }
      }
    }

    if (opt.refit_scales) {
      for (std::int64_t r = 0; r < rows; ++r) {
        if (!refit_row(w_in + r * n, codes.data() + r * n, params.data() + r * n_groups, kept.data() + r * n,
                       k > 0 ? kept_x.data() + r * n : nullptr))
          continue;
        // A kept entry's residual completes its slot's new value to the value it had (dense + sparse).
        for (std::int64_t c = 0; k > 0 && c < n; ++c) {
          if (!kept[static_cast<std::size_t>(r * n + c)]) continue;
          const float rec = wq_value(codes[static_cast<std::size_t>(r * n + c)],
                                     params[static_cast<std::size_t>(r * n_groups + c / G)]);
          residual[static_cast<std::size_t>(r * n + c)] =
              f16_to_f32(f32_to_f16(kept_x[static_cast<std::size_t>(r * n + c)] - rec));
        }
      }
    }

    for (std::int64_t r = 0; r < rows; ++r) {
      std::uint8_t* out = blocks + static_cast<std::size_t>(r) * row_bytes;
      for (std::int64_t g = 0; g < n_groups; ++g) {
        write_block(params[static_cast<std::size_t>(r * n_groups + g)], codes.data() + r * n + g * G, f,
                    out + static_cast<std::size_t>(g) * f.block_bytes());
      }
      for (std::int64_t t = 0; t < k; ++t) {
        val[r * k + t] = f32_to_f16(residual[static_cast<std::size_t>(r * n + idx[r * k + t])]);
      }
    }
  }

  // The scale re-fit of one row (gptq.h): src the row as it came (input order), codes/kept by
  // input column, params its groups'. Returns whether the scales changed.
  bool refit_row(const float* src, const std::uint8_t* codes, WqParams* params, const std::uint8_t* kept,
                 const float* kept_x) const {
    const std::int64_t n = fac.n, G = f.group, n_groups = n / G;
    const double* h = fac.h.data();
    // d = the row minus its fixed part (kept entries reconstruct their own value); a = q - z on the
    // columns the scales multiply.
    std::vector<double> d(static_cast<std::size_t>(n)), a(static_cast<std::size_t>(n), 0.0);
    std::vector<std::int64_t> var;  // groups with a nonzero code offset: the unknowns
    for (std::int64_t g = 0; g < n_groups; ++g) {
      bool any = false;
      for (std::int64_t c = g * G; c < (g + 1) * G; ++c) {
        const bool dead = fac.dead[static_cast<std::size_t>(c)];
        d[static_cast<std::size_t>(c)] = dead ? 0.0 : src[c];
        if (kept[c]) {
          d[static_cast<std::size_t>(c)] -= kept_x[c];
        } else {
          a[static_cast<std::size_t>(c)] = codes[c] - params[g].zero;
          any = any || a[static_cast<std::size_t>(c)] != 0;
        }
      }
      if (any) var.push_back(g);
    }
    const auto m = static_cast<std::int64_t>(var.size());
    if (m == 0) return false;
    // V row v = sum over group var[v]'s columns j of a_j H[j, .] (H symmetric: its rows are its
    // columns); hd = H d. Then M = A^T H A and b = A^T H d.
    std::vector<double> v(static_cast<std::size_t>(m * n), 0.0), hd(static_cast<std::size_t>(n), 0.0);
    for (std::int64_t t = 0; t < m; ++t) {
      double* vt = v.data() + t * n;
      for (std::int64_t j = var[static_cast<std::size_t>(t)] * G; j < (var[static_cast<std::size_t>(t)] + 1) * G; ++j) {
        const double aj = a[static_cast<std::size_t>(j)];
        if (aj == 0) continue;
        const double* hj = h + j * n;
#pragma omp simd
        for (std::int64_t i = 0; i < n; ++i) vt[i] += aj * hj[i];
      }
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const double dj = d[static_cast<std::size_t>(j)];
      if (dj == 0) continue;
      const double* hj = h + j * n;
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) hd[static_cast<std::size_t>(i)] += dj * hj[i];
    }
    std::vector<double> mm(static_cast<std::size_t>(m * m)), b(static_cast<std::size_t>(m));
    for (std::int64_t t = 0; t < m; ++t) {
      const std::int64_t g = var[static_cast<std::size_t>(t)];
      double sb = 0;
      for (std::int64_t j = g * G; j < (g + 1) * G; ++j)
        sb += a[static_cast<std::size_t>(j)] * hd[static_cast<std::size_t>(j)];
      b[static_cast<std::size_t>(t)] = sb;
      for (std::int64_t u2 = 0; u2 < m; ++u2) {
        const double* vu = v.data() + u2 * n;
        double sm = 0;
        for (std::int64_t j = g * G; j < (g + 1) * G; ++j) sm += a[static_cast<std::size_t>(j)] * vu[j];
        mm[static_cast<std::size_t>(t * m + u2)] = sm;
      }
    }
    // The error up to a constant: s^T M s - 2 b^T s.
    const auto objective = [&](const std::vector<double>& sv) {
      double e = 0;
      for (std::int64_t t = 0; t < m; ++t) {
        double ms = 0;
        for (std::int64_t u2 = 0; u2 < m; ++u2)
          ms += mm[static_cast<std::size_t>(t * m + u2)] * sv[static_cast<std::size_t>(u2)];
        e += sv[static_cast<std::size_t>(t)] * (ms - 2 * b[static_cast<std::size_t>(t)]);
      }
      return e;
    };
    std::vector<double> s_old(static_cast<std::size_t>(m));
    for (std::int64_t t = 0; t < m; ++t)
      s_old[static_cast<std::size_t>(t)] = params[var[static_cast<std::size_t>(t)]].scale;
    std::vector<double> s_new = b;
    if (!solve_spd(mm, m, s_new)) return false;
    for (std::int64_t t = 0; t < m; ++t) {
      // As the block stores it; a scale that is not positive and finite keeps the old one.
      const double x =
          static_cast<double>(f16_to_f32(f32_to_f16(static_cast<float>(s_new[static_cast<std::size_t>(t)]))));
      s_new[static_cast<std::size_t>(t)] = x > 0 && std::isfinite(x) ? x : s_old[static_cast<std::size_t>(t)];
    }
    if (!(objective(s_new) < objective(s_old))) return false;
    for (std::int64_t t = 0; t < m; ++t)
      params[var[static_cast<std::size_t>(t)]].scale = static_cast<float>(s_new[static_cast<std::size_t>(t)]);
    return true;
  }

  // Solves M x = b in place (b -> x) for a symmetric positive definite m x m M by Cholesky; false
  // when a pivot is not positive (the system is then left alone).
  static bool solve_spd(std::vector<double> mm, std::int64_t m, std::vector<double>& x) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j <= i; ++j) {
        double sum = mm[static_cast<std::size_t>(i * m + j)];
        for (std::int64_t t = 0; t < j; ++t)
          sum -= mm[static_cast<std::size_t>(i * m + t)] * mm[static_cast<std::size_t>(j * m + t)];
        if (i == j) {
          if (!(sum > 0) || !std::isfinite(sum)) return false;
          mm[static_cast<std::size_t>(i * m + i)] = std::sqrt(sum);
        } else {
          mm[static_cast<std::size_t>(i * m + j)] = sum / mm[static_cast<std::size_t>(j * m + j)];
        }
      }
    }
    for (std::int64_t i = 0; i < m; ++i) {  // L y = b
      double sum = x[static_cast<std::size_t>(i)];
      for (std::int64_t t = 0; t < i; ++t)
        sum -= mm[static_cast<std::size_t>(i * m + t)] * x[static_cast<std::size_t>(t)];
      x[static_cast<std::size_t>(i)] = sum / mm[static_cast<std::size_t>(i * m + i)];
    }
    for (std::int64_t i = m - 1; i >= 0; --i) {  // L^T x = y
      double sum = x[static_cast<std::size_t>(i)];
      for (std::int64_t t = i + 1; t < m; ++t)
        sum -= mm[static_cast<std::size_t>(t * m + i)] * x[static_cast<std::size_t>(t)];
      x[static_cast<std::size_t>(i)] = sum / mm[static_cast<std::size_t>(i * m + i)];
    }
    return true;
  }

  // The parameters of group g of row r from its columns' current values: those in the current
  // block (positions [i, b1)) are up to date; those past it still owe the block's pending updates.
  WqParams group_params(const std::vector<double>& w, const std::vector<double>& err, std::int64_t r, std::int64_t g,
                        std::int64_t i, std::int64_t b0, std::int64_t b1, const std::vector<std::uint8_t>& kept,
                        std::vector<float>& gx, std::vector<float>& gw) const {
    const std::int64_t n = fac.n, G = f.group, B = std::max(1, opt.block_size);
    float lo = INFINITY, hi = -INFINITY;
    for (std::int64_t j = 0; j < G; ++j) {
      const std::int64_t c = g * G + j, p = fac.pos[static_cast<std::size_t>(c)];
      double v = w[static_cast<std::size_t>(r * n + p)];
      if (p >= b1) {
        for (std::int64_t t = b0; t < i; ++t)
          v -= err[static_cast<std::size_t>(r * B + (t - b0))] * fac.u[static_cast<std::size_t>(t * n + p)];
      }
      gx[static_cast<std::size_t>(j)] = static_cast<float>(v);
      gw[static_cast<std::size_t>(j)] =
          kept[static_cast<std::size_t>(r * n + c)] ? 0.0f : static_cast<float>(fac.diag[static_cast<std::size_t>(c)]);
      if (!kept[static_cast<std::size_t>(r * n + c)])
        lo = std::min(lo, gx[static_cast<std::size_t>(j)]), hi = std::max(hi, gx[static_cast<std::size_t>(j)]);
    }
    if (k > 0) {
      // Kept entries must not set the range: they sit at a value inside it (0 clamped in).
      for (std::int64_t j = 0; j < G; ++j) {
        if (kept[static_cast<std::size_t>(r * n + g * G + j)])
          gx[static_cast<std::size_t>(j)] = lo > hi ? 0.0f : std::clamp(0.0f, lo, hi);
      }
    }
    if (opt.range_search) return search_group_params(gx.data(), gw.data(), f.bits, static_cast<int>(G));
    const auto [mn, mx] = std::minmax_element(gx.begin(), gx.end());
    return wq_stored_params(*mn, *mx, f.bits);
  }
};

}  // namespace

void gptq_quantize_rows(const GptqFactor& fac, const WqFormat& f, const float* w, std::int64_t rows,
                        std::uint8_t* blocks, const GptqOptions& opt, std::int64_t k, std::uint32_t* idx,
                        std::uint16_t* val) {
  const std::int64_t n = fac.n;
  if (f.bits == 0 || n % f.group != 0) {
    throw Error("gptq: rows of " + std::to_string(n) + " values are not whole groups of " + std::to_string(f.group));
  }
  if (k < 0 || k > n || (k > 0 && (idx == nullptr || val == nullptr)))
    throw Error("gptq: bad outlier count " + std::to_string(k));
  const std::size_t row_bytes = static_cast<std::size_t>(n / f.group) * f.block_bytes();
  const RowChunk chunk{fac, f, opt, k};
  const std::int64_t n_chunks = (rows + kRowChunk - 1) / kRowChunk;
  std::string failure;
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, opt.n_threads))
  for (std::int64_t ch = 0; ch < n_chunks; ++ch) {
    const std::int64_t r0 = ch * kRowChunk, m = std::min(kRowChunk, rows - r0);
    try {
      chunk.run(w + r0 * n, m, blocks + static_cast<std::size_t>(r0) * row_bytes, k > 0 ? idx + r0 * k : nullptr,
                k > 0 ? val + r0 * k : nullptr);
    } catch (const std::exception& e) {
#pragma omp critical(wisp_gptq_failure)
      failure = e.what();
    }
  }
  if (!failure.empty()) throw Error("gptq: " + failure);
}

double hessian_relative_error(std::span<const double> h, const float* w, const float* w_hat, std::int64_t rows,
                              std::int64_t n) {
  double num = 0, den = 0;
  std::vector<double> e(static_cast<std::size_t>(n)), x(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < n; ++j) {
      x[static_cast<std::size_t>(j)] = w[r * n + j];
      e[static_cast<std::size_t>(j)] = static_cast<double>(w[r * n + j]) - w_hat[r * n + j];
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const double* hi = h.data() + i * n;
      double se = 0, sx = 0;
      for (std::int64_t j = 0; j < n; ++j)
        se += hi[j] * e[static_cast<std::size_t>(j)], sx += hi[j] * x[static_cast<std::size_t>(j)];
      num += e[static_cast<std::size_t>(i)] * se;
      den += x[static_cast<std::size_t>(i)] * sx;
    }
  }
  return den > 0 ? num / den : 0.0;
}

}  // namespace wisp::quantize
