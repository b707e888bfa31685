#!/usr/bin/env python3
"""The pre-tokenizer names llama.cpp's vocabulary loader knows, read from its source.

Parses src/llama-vocab.cpp of the llama.cpp that llama-cpp-python 0.3.36 vendors (the sdist under
.cache/llamacpp/) for two tables:
  - tokenizer.ggml.pre name -> LLAMA_VOCAB_PRE_TYPE_* (the if/else chain in llama_vocab's loader,
    with whether that branch sets ignore_merges or clears clean_spaces);
  - LLAMA_VOCAB_PRE_TYPE_* -> the regex list its BPE tokenizer splits with (the switch in
    llm_tokenizer_bpe's constructor; types it does not list use the default branch), and whether
    that branch turns GPT-2's byte encoding off;
  - the pre types the loader forces BOS on for, and those whose words of line breaks are looked
    up whole.
and writes tests/golden/tokenizer/llamacpp_pre_tokenizers.json. The regexes are kept as they are
spelled in the C++ source (escapes and all): the test only compares them with each other, to
check that the names wisp maps to one scanner are the names llama.cpp splits with one regex.

Usage:  python3 scripts/gen_pre_tokenizer_names.py [--vocab-cpp PATH]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SRC = ROOT / ".cache/llamacpp/llama_cpp_python-0.3.36/vendor/llama.cpp/src/llama-vocab.cpp"
OUT = ROOT / "tests/golden/tokenizer/llamacpp_pre_tokenizers.json"

C_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def name_table(src: str) -> list[dict]:
    start = src.index('tokenizer_pre == "default"')
    end = src.index("unknown pre-tokenizer type", start)
    out, pending = [], []
    # Each branch: names compared with ==, then the body up to the next "} else if" / "} else {".
    for branch in re.split(r"\}\s*else\s+if\s*\(|\}\s*else\s*\{", src[start - 40:end]):
        names = re.findall(r'tokenizer_pre\s*==\s*"([^"]*)"', branch)
        m = re.search(r"pre_type\s*=\s*(LLAMA_VOCAB_PRE_TYPE_[A-Z0-9_]+)", branch)
        pending += names
        if not m:
            continue
        ignore = re.search(r"ignore_merges\s*=\s*true", branch) is not None
        escape = re.search(r"escape_whitespaces\s*=\s*true", branch) is not None
        # clean_spaces starts true for BPE vocabularies; branches only ever turn it off.
        clean = re.search(r"clean_spaces\s*=\s*false", branch) is None
        for n in pending:
            out.append({"name": n, "pre_type": m.group(1), "ignore_merges": ignore, "clean_spaces": clean,
                        "escape_whitespaces": escape})
        pending = []
    if pending:
        raise SystemExit(f"names without a pre_type: {pending}")
    return out


def raw_utf8_types(src: str) -> set[str]:
    """Pre types whose switch branch sets byte_encode = false (BPE over raw UTF-8, not GPT-2 bytes)."""
    at = src.index("switch (vocab.get_pre_type())")
    body_end = src.index("default:", at)
    out, labels = set(), []
    for part in re.split(r"(case\s+LLAMA_VOCAB_PRE_TYPE_[A-Z0-9_]+\s*:)", src[at:body_end]):
        m = re.match(r"case\s+(LLAMA_VOCAB_PRE_TYPE_[A-Z0-9_]+)\s*:", part)
        if m:
            labels.append(m.group(1))
            continue
        if re.search(r"regex_exprs\s*=", part) and labels:
            if re.search(r"byte_encode\s*=\s*false", part):
                out.update(labels)
            labels = []
    return out


def regex_table(src: str) -> dict[str, list[str]]:
    at = src.index("switch (vocab.get_pre_type())")
    body_end = src.index("default:", at)
    default_end = src.index("break;", body_end)
    table, labels = {}, []
    for part in re.split(r"(case\s+LLAMA_VOCAB_PRE_TYPE_[A-Z0-9_]+\s*:)", src[at:body_end]):
        m = re.match(r"case\s+(LLAMA_VOCAB_PRE_TYPE_[A-Z0-9_]+)\s*:", part)
        if m:
            labels.append(m.group(1))
            continue
        r = re.search(r"regex_exprs\s*=\s*\{(.*?)\};", part, re.S)
        if r and labels:
            exprs = C_STRING.findall(re.sub(r"//[^\n]*", "", r.group(1)))
            for lab in labels:
                table[lab] = exprs
            labels = []
    r = re.search(r"regex_exprs\s*=\s*\{(.*?)\};", src[body_end:default_end + 10], re.S)
    table["default"] = C_STRING.findall(re.sub(r"//[^\n]*", "", r.group(1)))
    return table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab-cpp", type=Path, default=DEFAULT_SRC)
    args = ap.parse_args()
    src = args.vocab_cpp.read_text(encoding="utf-8")
    names = name_table(src)
    regexes = regex_table(src)
    raw = raw_utf8_types(src)
    # Pre types llama.cpp special-cases outside the regex table: BOS forced on after the file's
    # add_bos_token is read, and a word of line breaks looked up whole.
    forced_bos = set(re.findall(r"pre_type\s*==\s*(LLAMA_VOCAB_PRE_TYPE_[A-Z0-9_]+)\s*&&\s*!add_bos", src))
    whole_newlines = set(re.findall(r"tok_pre\s*==\s*(LLAMA_VOCAB_PRE_TYPE_[A-Z0-9_]+)\s*&&\s*word\.find_first_not_of\('\\n'\)",
                                    src))
    for n in names:
        n["regex"] = regexes.get(n["pre_type"], regexes["default"])
        n["byte_encode"] = n["pre_type"] not in raw
        n["forces_bos"] = n["pre_type"] in forced_bos
        n["newline_runs_whole"] = n["pre_type"] in whole_newlines
    OUT.parent.mkdir(parents=True, exist_ok=True)
    doc = {"generator": "scripts/gen_pre_tokenizer_names.py", "source": "llama.cpp (llama-cpp-python 0.3.36) src/llama-vocab.cpp",
           "names": names}
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(names)} names, {len({n['pre_type'] for n in names})} pre types -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
