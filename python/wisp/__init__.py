"""wisp: CPU inference for GGUF language models, through libwisp's C API (ctypes).

    model = wisp.Model("model.gguf")
    for piece in model.generate("Once upon a time", max_tokens=32):
        print(piece, end="")
"""
from ._model import Model, WispError, version

__all__ = ["Model", "WispError", "version"]
__version__ = "0.1.0"
