#!/usr/bin/env python3
"""Writes the safetensors golden fixtures under tests/golden/safetensors/ (and the fuzz seeds).

The files are written by the `safetensors` package itself (the format's reference writer), never by
wisp, and the expected values in expected.json come from the numpy arrays we handed it, so the C++
reader is checked against an independent source:

  single/   config.json, model.safetensors (F32, F16, BF16, a scalar, an empty tensor, __metadata__),
            tokenizer.json, tokenizer_config.json
  sharded/  config.json, model.safetensors.index.json and two shards (no tokenizer files)
  expected.json  per checkpoint: every tensor's name, dtype, shape, shard file, byte count and the
            FNV-1a-64 hash of its raw bytes; plus each file's __metadata__

Seed inputs for tests/fuzz/fuzz_safetensors.cpp go to tests/fuzz/corpus/safetensors/: the valid
fixture files and a few malformed variants.

Run from anywhere:  python3 scripts/gen_golden_safetensors.py   (needs numpy and safetensors)
"""

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import safetensors
import safetensors.numpy

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "safetensors"
CORPUS = ROOT / "tests" / "fuzz" / "corpus" / "safetensors"

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def fnv1a64(data: bytes) -> str:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even, as torch does."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


class Tensor:
    """A tensor to write: its safetensors dtype name, logical shape and little-endian raw bytes."""

    def __init__(self, dtype: str, array: np.ndarray, shape=None):
        self.dtype = dtype
        self.array = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<")))
        self.shape = list(array.shape if shape is None else shape)

    @property
    def raw(self) -> bytes:
        return self.array.tobytes()


NUMPY_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def serialize_with_bf16(tensors: dict, metadata: dict) -> bytes:
    """safetensors.numpy cannot express bfloat16 (numpy has no such dtype), so files holding BF16
    go through the package's raw serializer, fed the bit patterns."""
    if hasattr(safetensors, "TensorSpec"):  # safetensors >= 0.7
        specs = {
            name: safetensors.TensorSpec(
                dtype=NUMPY_NAME[t.dtype], shape=t.shape, data_ptr=t.array.ctypes.data, data_len=t.array.nbytes
            )
            for name, t in tensors.items()
        }
        return bytes(safetensors.serialize(specs, metadata))  # `tensors` keeps the buffers alive
    raw = {name: {"dtype": NUMPY_NAME[t.dtype], "shape": t.shape, "data": t.raw} for name, t in tensors.items()}
    return bytes(safetensors.serialize(raw, metadata))


def check_round_trip(path: Path, tensors: dict, metadata: dict) -> None:
    """The reference reader must give back exactly what we meant to write."""
    data = path.read_bytes()
    got = {name: info for name, info in safetensors.deserialize(data)}
    assert set(got) == set(tensors), (path, sorted(got), sorted(tensors))
    for name, t in tensors.items():
        assert got[name]["dtype"] == t.dtype, (path, name, got[name]["dtype"])
        assert list(got[name]["shape"]) == t.shape, (path, name, got[name]["shape"])
        assert bytes(got[name]["data"]) == t.raw, (path, name)
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    assert header.get("__metadata__", {}) == metadata, (path, header.get("__metadata__"))


def write_file(path: Path, tensors: dict, metadata: dict) -> None:
    if all(t.dtype in ("F32", "F16") for t in tensors.values()):
        # The plain numpy API, as a user of the package would write it.
        safetensors.numpy.save_file({name: t.array.reshape(t.shape) for name, t in tensors.items()}, str(path), metadata)
    else:
        path.write_bytes(serialize_with_bf16(tensors, metadata))
    path.chmod(0o644)  # save_file creates 0600; fixtures are plain repo files
    check_round_trip(path, tensors, metadata)


def describe(tensors: dict, file_name: str) -> list:
    return [
        {
            "name": name,
            "dtype": t.dtype,
            "shape": t.shape,
            "file": file_name,
            "n_bytes": len(t.raw),
            "fnv1a64": fnv1a64(t.raw),
        }
        for name, t in tensors.items()
    ]


def config(arch: str, model_type: str, hidden: int) -> dict:
    return {"architectures": [arch], "model_type": model_type, "hidden_size": hidden, "torch_dtype": "bfloat16"}


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def make_single(rng) -> dict:
    d = GOLDEN / "single"
    d.mkdir(parents=True)
    tensors = {
        "model.embed_tokens.weight": Tensor("F32", rng.standard_normal((16, 8)).astype(np.float32)),
        "model.layers.0.self_attn.q_proj.weight": Tensor("F16", rng.standard_normal((8, 8)).astype(np.float16)),
        "model.norm.weight": Tensor("BF16", to_bf16_bits(1.0 + 0.1 * rng.standard_normal(8))),
        "model.layers.0.self_attn.rotary_scale": Tensor("F32", np.array(0.5, dtype=np.float32)),
        "model.empty": Tensor("F16", np.zeros((0, 4), dtype=np.float16)),
    }
    metadata = {"format": "pt", "producer": "wisp scripts/gen_golden_safetensors.py"}
    write_file(d / "model.safetensors", tensors, metadata)
    write_json(d / "config.json", config("LlamaForCausalLM", "llama", 8))
    write_json(d / "tokenizer.json", {"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}})
    write_json(d / "tokenizer_config.json", {"bos_token": "<s>", "eos_token": "</s>"})
    return {
        "sharded": False,
        "architecture": "LlamaForCausalLM",
        "model_type": "llama",
        "tokenizer_json": True,
        "tokenizer_config_json": True,
        "files": {"model.safetensors": {"metadata": metadata, "n_tensors": len(tensors)}},
        "tensors": sorted(describe(tensors, "model.safetensors"), key=lambda t: t["name"]),
    }


def make_sharded(rng) -> dict:
    d = GOLDEN / "sharded"
    d.mkdir(parents=True)
    shard_names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    shards = [
        {
            "model.embed_tokens.weight": Tensor("F32", rng.standard_normal((12, 6)).astype(np.float32)),
            "model.layers.0.mlp.up_proj.weight": Tensor("F16", rng.standard_normal((6, 12)).astype(np.float16)),
        },
        {
            "model.layers.1.mlp.up_proj.weight": Tensor(
                "BF16", to_bf16_bits(rng.standard_normal((6, 12))).reshape(6, 12)
            ),
            "model.norm.weight": Tensor("F32", np.ones(6, dtype=np.float32)),
        },
    ]
    metadata = [{"format": "pt"}, {"format": "pt", "shard": "2"}]
    files = {}
    described = []
    weight_map = {}
    total = 0
    for name, tensors, meta in zip(shard_names, shards, metadata):
        write_file(d / name, tensors, meta)
        files[name] = {"metadata": meta, "n_tensors": len(tensors)}
        described += describe(tensors, name)
        for t_name, t in tensors.items():
            weight_map[t_name] = name
            total += len(t.raw)
    write_json(d / "model.safetensors.index.json", {"metadata": {"total_size": total}, "weight_map": weight_map})
    write_json(d / "config.json", config("Qwen2ForCausalLM", "qwen2", 6))
    return {
        "sharded": True,
        "architecture": "Qwen2ForCausalLM",
        "model_type": "qwen2",
        "tokenizer_json": False,
        "tokenizer_config_json": False,
        "files": files,
        "tensors": sorted(described, key=lambda t: t["name"]),
    }


def with_header(header: bytes, data: bytes, declared_len=None) -> bytes:
    n = len(header) if declared_len is None else declared_len
    return struct.pack("<Q", n) + header + data


def make_corpus() -> None:
    CORPUS.mkdir(parents=True)
    shutil.copy(GOLDEN / "single" / "model.safetensors", CORPUS / "valid_single.safetensors")
    for i, shard in enumerate(sorted((GOLDEN / "sharded").glob("*.safetensors")), 1):
        shutil.copy(shard, CORPUS / f"valid_shard{i}.safetensors")
    valid = (GOLDEN / "single" / "model.safetensors").read_bytes()
    malformed = {
        "truncated.safetensors": valid[: len(valid) // 2],
        "header_past_eof.safetensors": with_header(b'{"a":{}}', b"", declared_len=4096),
        "not_json.safetensors": with_header(b'{"a": {"dtype": "F32",', b""),
        "overlap.safetensors": with_header(
            b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
            b'"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
            bytes(8),
        ),
        "shape_overflow.safetensors": with_header(
            b'{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}', bytes(4)
        ),
    }
    for name, data in malformed.items():
        (CORPUS / name).write_bytes(data)


def main() -> None:
    rng = np.random.default_rng(20240601)
    for d in (GOLDEN, CORPUS):
        if d.exists():
            shutil.rmtree(d)
    GOLDEN.mkdir(parents=True)
    expected = {
        "about": "written by scripts/gen_golden_safetensors.py; fnv1a64 is FNV-1a 64-bit over each tensor's raw bytes",
        "safetensors_version": safetensors.__version__,
        "checkpoints": {"single": make_single(rng), "sharded": make_sharded(rng)},
    }
    write_json(GOLDEN / "expected.json", expected)
    make_corpus()
    size = sum(p.stat().st_size for p in GOLDEN.rglob("*") if p.is_file())
    print(f"wrote {GOLDEN} ({size} bytes) and {CORPUS}")
    assert size < 50 * 1024


if __name__ == "__main__":
    main()
