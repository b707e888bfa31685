#!/usr/bin/env python3
"""Dump a GGUF file's structure as JSON using the `gguf` Python package (the format's own reader).

wisp's tests compare their own parse of a file against this dump, so the reference is the
format's official implementation, not wisp. Output (stdout or -o FILE):
  {"version", "alignment", "data_offset", "kv": [{"key", "types": [..], "value"|"len"+"fnv1a"}],
   "tensors": [{"name", "type", "ne": [...], "offset", "n_bytes", "fnv1a"?}]}
Arrays longer than 16 elements are summarised by length and the FNV-1a-64 hash of a canonical
byte form so the JSON stays small: numeric arrays as their little-endian element bytes in the
stored type, string arrays as (u64 byte length, UTF-8 bytes) per element.
"""
import argparse
import json
import sys

import gguf
import numpy as np

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def fnv1a(data: bytes) -> str:
    h = FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


NUMPY_TYPES = {
    gguf.GGUFValueType.UINT8: "<u1", gguf.GGUFValueType.INT8: "<i1", gguf.GGUFValueType.UINT16: "<u2",
    gguf.GGUFValueType.INT16: "<i2", gguf.GGUFValueType.UINT32: "<u4", gguf.GGUFValueType.INT32: "<i4",
    gguf.GGUFValueType.FLOAT32: "<f4", gguf.GGUFValueType.BOOL: "<u1", gguf.GGUFValueType.UINT64: "<u8",
    gguf.GGUFValueType.INT64: "<i8", gguf.GGUFValueType.FLOAT64: "<f8",
}


def canonical_bytes(elem_type, items):
    if elem_type == gguf.GGUFValueType.STRING:
        out = bytearray()
        for s in items:
            b = s.encode("utf-8")
            out += len(b).to_bytes(8, "little") + b
        return bytes(out)
    return np.asarray(items, dtype=NUMPY_TYPES[elem_type]).tobytes()


def field_value(field):
    types = [t.name for t in field.types]
    vt = field.types[0]
    if vt == gguf.GGUFValueType.ARRAY:
        items = field.contents()
        out = {"types": types, "len": len(items)}
        if len(items) <= 16:
            out["value"] = items
        else:
            out["fnv1a"] = fnv1a(canonical_bytes(field.types[1], items))
        return out
    v = field.contents()
    if isinstance(v, float) or vt in (gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.FLOAT64):
        v = float(np.float32(v)) if vt == gguf.GGUFValueType.FLOAT32 else float(v)
    return {"types": types, "value": v}


def dump(path):
    r = gguf.GGUFReader(path)
    out = {"version": int(r.fields["GGUF.version"].contents()), "alignment": int(r.alignment),
           "data_offset": int(r.data_offset), "kv": [], "tensors": []}
    for key, field in r.fields.items():
        if key.startswith("GGUF."):
            continue
        d = {"key": key}
        d.update(field_value(field))
        out["kv"].append(d)
    for t in r.tensors:
        td = {"name": t.name, "type": t.tensor_type.name, "type_id": int(t.tensor_type),
              "ne": [int(x) for x in t.shape], "offset": int(t.data_offset), "n_bytes": int(t.n_bytes)}
        out["tensors"].append(td)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    js = json.dumps(dump(args.file), indent=1, ensure_ascii=False)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(js + "\n")
    else:
        sys.stdout.write(js + "\n")


if __name__ == "__main__":
    main()
