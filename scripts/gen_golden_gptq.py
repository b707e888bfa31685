#!/usr/bin/env python3
"""Golden data for wisp's GPTQ (src/quantize/gptq.*): a numpy implementation of the same algorithm.

The oracle is written from the GPTQ paper's description, independently of the C++ code, and in
its plain form: after every column the whole remaining matrix is updated (no lazy blocks), the
inverse Hessian comes from numpy.linalg.inv and its factor from numpy.linalg.cholesky. The WQ
rounding follows the project's conventions (formats/wq_format.h): float32 arithmetic,
s = (max - min) / (2^b - 1) with the range widened to contain 0, s rounded to half precision,
z = clip(round(-min / s)) from that s, q = clip(round(r / s) + z), round = floor(x + 0.5), a
constant group stored with s = |c|. A group's range is fixed when its first column (in processing
order) is quantized, from the group's values as the earlier columns' updates left them.

The layer: X (N x n activation rows) holds multiples of 1/16 with |16 x| <= 127, so X^T X is exact in
float32 and float64 alike and the C++ accumulator must reproduce H = (2 / N) * X^T X bit for bit;
it has correlated channels, a few salient (4x) channels and one dead (all-zero) channel. W (rows
x n) is float32 with a few planted large weights.

Writes tests/golden/gptq/layer.txt (or --out): whitespace-separated sections
  n ROWS N / X (N*n integers, 16 x) / W (rows*n floats) / hsum (sum of H's entries, float64 repr)
  cases K, then per case: bits group act_order damp, codes (rows*n), scales (f16 bits per group),
  zeros (per group).
Deterministic (fixed seed). Usage: python3 scripts/gen_golden_gptq.py [--out tests/golden/gptq/layer.txt]
"""
import argparse
import os

import numpy as np

F32 = np.float32


def round_half_up(x):
    return np.floor(F32(x) + F32(0.5)).astype(F32)


def wq_params(mn, mx, bits):
    qmax = F32(2 ** bits - 1)
    mn, mx = F32(mn), F32(mx)
    if mn == mx:
        scale = F32(abs(mn))
    else:
        scale = F32((mx - mn) / qmax)
    zero = 0
    if scale > 0:
        zero = int(np.clip(round_half_up(F32(-mn / scale)), F32(0), qmax))
    return scale, zero


def wq_stored_params(mn, mx, bits):
    mn, mx = F32(mn), F32(mx)
    if mn != mx:
        mn, mx = min(mn, F32(0)), max(mx, F32(0))
    scale, zero = wq_params(mn, mx, bits)
    s = F32(np.float16(min(scale, F32(65504))))
    if s == scale:
        return scale, zero
    if mn == mx:
        return s, zero
    qmax = F32(2 ** bits - 1)
    z = int(np.clip(round_half_up(F32(-mn / s)), F32(0), qmax)) if s > 0 else 0
    return s, z


def wq_code(r, scale, zero, bits):
    qmax = 2 ** bits - 1
    if not scale > 0:
        return zero
    q = round_half_up(F32(F32(r) / scale)) + F32(zero)
    return int(np.clip(q, F32(0), F32(qmax)))


def gptq(W, H, bits, group, act_order, damp):
    rows, n = W.shape
    W = W.astype(np.float64).copy()
    H = H.copy()
    dead = np.diag(H) == 0
    H[dead, dead] = 1.0
    W[:, dead] = 0.0
    H += damp * np.mean(np.diag(H)) * np.eye(n)
    perm = np.argsort(-np.diag(H), kind="stable") if act_order else np.arange(n)
    pos = np.empty(n, dtype=np.int64)
    pos[perm] = np.arange(n)
    Hp = H[np.ix_(perm, perm)]
    U = np.linalg.cholesky(np.linalg.inv(Hp)).T  # upper: inv(Hp) = U^T U
    Wp = W[:, perm]
    n_groups = n // group
    scales = np.zeros((rows, n_groups), dtype=F32)
    zeros = np.zeros((rows, n_groups), dtype=np.int64)
    started = np.zeros(n_groups, dtype=bool)
    codes = np.zeros((rows, n), dtype=np.int64)
    for i in range(n):
        c = perm[i]
        g = c // group
        if not started[g]:
            started[g] = True
            cols = pos[g * group:(g + 1) * group]
            for r in range(rows):
                vals = Wp[r, cols].astype(F32)
                scales[r, g], zeros[r, g] = wq_stored_params(vals.min(), vals.max(), bits)
        err = np.empty(rows)
        for r in range(rows):
            s, z = scales[r, g], zeros[r, g]
            q = wq_code(Wp[r, i], s, z, bits)
            codes[r, c] = q
            dq = F32(s * F32(q - z))
            err[r] = (Wp[r, i] - float(dq)) / U[i, i]
        Wp[:, i + 1:] -= np.outer(err, U[i, i + 1:])
    return codes, scales, zeros


def make_layer(rng, n=128, rows=8, N=256):
    A = np.eye(n) + 0.35 * rng.standard_normal((n, n)) / np.sqrt(n) + 0.5 * np.tril(np.ones((n, n)), -1) / n
    Z = rng.standard_normal((N, n)) @ A
    Z[:, [5, 40, 77, 100]] *= 4.0  # salient channels
    Xi = np.clip(np.round(16 * Z), -127, 127).astype(np.int64)
    Xi[:, 63] = 0  # a dead channel
    W = (0.05 * rng.standard_normal((rows, n))).astype(F32)
    for r in range(rows):
        W[r, rng.integers(0, n, 2)] *= 8  # planted large weights
    return Xi, W


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "gptq", "layer.txt"))
    a = ap.parse_args()
    rng = np.random.default_rng(20261201)
    Xi, W = make_layer(rng)
    N, n = Xi.shape
    X = Xi.astype(np.float64) / 16.0
    H = (2.0 / N) * (X.T @ X)
    cases = [(4, 32, False, 0.01), (3, 64, True, 0.01), (2, 32, True, 0.1), (3, 32, False, 1.0)]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("# generated by scripts/gen_golden_gptq.py (numpy GPTQ oracle); do not edit\n")
        f.write(f"n {n} rows {W.shape[0]} N {N}\n")
        f.write("X " + " ".join(str(v) for v in Xi.ravel()) + "\n")
        f.write("W " + " ".join(repr(float(v)) for v in W.ravel()) + "\n")
        f.write(f"hsum {float(H.sum())!r}\n")
        f.write(f"cases {len(cases)}\n")
        for bits, group, act, damp in cases:
            codes, scales, zeros = gptq(W, H, bits, group, act, damp)
            f.write(f"case {bits} {group} {int(act)} {damp!r}\n")
            f.write("codes " + " ".join(str(v) for v in codes.ravel()) + "\n")
            f.write("scales " + " ".join(str(int(np.float16(v).view(np.uint16))) for v in scales.ravel()) + "\n")
            f.write("zeros " + " ".join(str(v) for v in zeros.ravel()) + "\n")
    print("wrote", a.out)


if __name__ == "__main__":
    main()
