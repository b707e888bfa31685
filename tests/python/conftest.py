"""The Python package's tests (python/, ctypes over libwisp).

scripts/test_install runs them against an installed copy: the package pip-installed into a
temporary directory on PYTHONPATH, WISP_PREFIX the temporary install prefix. Run directly, they use
python/ and build/libwisp.so."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"

if not os.environ.get("WISP_LIBRARY") and not os.environ.get("WISP_PREFIX"):
    os.environ["WISP_LIBRARY"] = str(ROOT / "build" / "libwisp.so")
try:
    import wisp  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))


@pytest.fixture(scope="session")
def model():
    import wisp

    with wisp.Model(str(MODEL), n_ctx=512, n_threads=2, exact=True) as m:
        yield m


@pytest.fixture(scope="session")
def llama():
    """llama.cpp (llama-cpp-python) on the same file: the oracle for tokens and greedy text."""
    llama_cpp = pytest.importorskip("llama_cpp")
    return llama_cpp.Llama(str(MODEL), n_ctx=512, n_threads=2, n_batch=512, logits_all=True, verbose=False)


def llama_greedy(llama, prompt_ids, n):
    """llama.cpp's greedy continuation: argmax of its logits, token by token, as text bytes."""
    import numpy as np

    llama.reset()
    llama.eval(prompt_ids)
    out = []
    for _ in range(n):
        nxt = int(np.argmax(llama.scores[llama.n_tokens - 1]))
        out.append(nxt)
        if llama.token_eos() == nxt:
            break
        llama.eval([nxt])
    return out, b"".join(llama.detokenize([t]) for t in out)
