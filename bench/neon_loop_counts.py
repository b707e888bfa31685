#!/usr/bin/env python3
"""Counts, in the disassembly of the AArch64 kernel objects, the inner-loop instructions per weight
block and token of the NEON one-token kernels and of the prefill GEMMs of the same order, so that
"the GEMM is faster" is counted where no AArch64 machine is at hand (qemu's speed says nothing
about a core's). Static counts, not timings: one instruction is not one cycle, and the count
leaves out the loads' cache behaviour; it shows how much work the loop does per output.

  python3 bench/neon_loop_counts.py [build-arm]

reads build-arm/CMakeFiles/wisp_kernels.dir/**/neon/kernels.cpp.o (plain NEON) and
kernels_dotprod.cpp.o (SDOT), runs aarch64-linux-gnu-nm and -objdump on them, and prints a
markdown table:
- one-token: the main loop of blocks8_dot<Block> (8 blocks of one row for one token) / 8;
- GEMM: the innermost loop with the most multiplies (one block of the 8 rows for a group of tokens,
  the group read from the multiplies per token: 16 SDOT or 32 SMULL/SMLAL), plus the loop after it
  that is the minimum's chain (Q4_1, Q5_1, with 2 FMLA per token), / (8 rows x tokens);
- pack: the per-call loop that unpacks and transposes one block of the 8 rows (TRN1) / 8, paid once
  per call, i.e. spread over the call's tokens.
Identical functions folded by the compiler keep one name each in nm, so every type is found.
"""
import collections
import glob
import os
import re
import subprocess
import sys

MULS = ("sdot", "smlal", "smlal2", "smull", "smull2")
TYPES = ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "IQ4_NL", "MXFP4")


def functions(obj):
    """(demangled name, [(address, mnemonic, operands)]) of the blocks8 dot, GEMM and token functions."""
    nm = subprocess.run(["aarch64-linux-gnu-nm", "-C", "-S", obj], capture_output=True, text=True, check=True).stdout
    for line in nm.splitlines():
        p = line.split(" ", 3)
        if len(p) < 4 or p[2] not in "tT" or not re.search(r"blocks8_(dot|gemm|tokens)<", p[3]):
            continue
        start, size = int(p[0], 16), int(p[1], 16)
        out = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", obj, f"--start-address={start}",
                              f"--stop-address={start + size}"], capture_output=True, text=True, check=True).stdout
        ins = []
        for l in out.splitlines():
            m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", l)
            if m:
                ins.append((int(m.group(1), 16), m.group(2), m.group(3)))
        if ins:
            yield p[3], ins


def inner_loops(ins):
    """The innermost loops (a backward branch's range that holds no other), as (mnemonic counts, body)."""
    addr = [a for a, _, _ in ins]
    loops = []
    for i, (a, mn, ops) in enumerate(ins):
        if mn.startswith("b.") or mn in ("b", "cbnz", "cbz", "tbz", "tbnz"):
            m = re.search(r"\b([0-9a-f]+) <", ops)
            if m and addr[0] <= int(m.group(1), 16) <= a:
                j = addr.index(int(m.group(1), 16))
                loops.append((ins[j][0], a, collections.Counter(x[1] for x in ins[j:i + 1]), ins[j:i + 1]))
    inner = [l for l in loops if not any(o is not l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]
    return [(h, body) for _, _, h, body in inner]


def muls(h):
    return sum(h[k] for k in MULS)


def tokens(h):
    return muls(h) // (16 if h["sdot"] else 32)


def calls(body):
    return sum(1 for _, mn, _ in body if mn == "bl")


def count(obj, ty):
    one = gemm = mloop = pack = None
    for name, ins in functions(obj):
        loops = inner_loops(ins)
        if f"blocks8_dot<wisp::Block{ty}," in name:
            main = [l for l in loops if l[0]["prfm"]]
            one = len(main[0][1])
            assert calls(main[0][1]) == 0, (ty, "a call in the one-token loop")
        if re.search(rf"blocks8_(gemm|tokens)<wisp::kernels::neon::\(anonymous namespace\)::{ty}Traits", name):
            for i, (h, body) in enumerate(loops):
                if h["trn1"]:
                    pack = len(body)
                if muls(h) and (gemm is None or muls(h) > muls(gemm[0])):
                    gemm = (h, body)
                    nxt = loops[i + 1] if i + 1 < len(loops) else None
                    is_min = nxt and not muls(nxt[0]) and nxt[0]["fmla"] == 2 * tokens(h) and len(nxt[1]) < 30
                    mloop = nxt if is_min else None
    if one is None or gemm is None:
        return None
    assert calls(gemm[1]) == 0, (ty, "a call in the GEMM loop")
    t = tokens(gemm[0])
    g = len(gemm[1]) + (len(mloop[1]) if mloop else 0)
    return one, gemm, mloop, t, g, pack


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build-arm"
    objs = {}
    for b, f in (("plain", "kernels.cpp.o"), ("SDOT", "kernels_dotprod.cpp.o")):
        found = glob.glob(os.path.join(build, "CMakeFiles", "wisp_kernels.dir", "**", "neon", f), recursive=True)
        if not found:
            sys.exit(f"no {f} under {build}: build it (ninja -C {build} test_kernels)")
        objs[b] = found[0]
    print("| type | bundle | one-token loop (8 blocks) | per block and token | GEMM loop (+ minimum) | tokens | "
          "per block and token | ratio | pack per row-block |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ty in TYPES:
        for b, obj in objs.items():
            r = count(obj, ty)
            if r is None:
                continue
            one, gemm, mloop, t, g, pack = r
            gs = f"{len(gemm[1])}" + (f" + {len(mloop[1])}" if mloop else "")
            print(f"| {ty} | {b} | {one} | {one / 8:.2f} | {gs} | {t} | {g / (8 * t):.2f} | "
                  f"{one / 8 / (g / (8 * t)):.2f}x | {pack / 8:.1f} |")


if __name__ == "__main__":
    main()
