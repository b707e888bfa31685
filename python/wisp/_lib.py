"""Loading libwisp and declaring the C API's functions (include/wisp/wisp.h) for ctypes."""
import ctypes
import ctypes.util
import os
from pathlib import Path

# wisp.h's status codes.
OK = 0
ERR_BUFFER_TOO_SMALL = 5


class ModelHandle(ctypes.Structure):
    pass


class SessionHandle(ctypes.Structure):
    pass


class SessionParams(ctypes.Structure):
    _fields_ = [("n_ctx", ctypes.c_size_t), ("n_threads", ctypes.c_int), ("exact", ctypes.c_int),
                ("kv_type", ctypes.c_char_p)]


class SamplerParams(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float), ("top_k", ctypes.c_int), ("top_p", ctypes.c_float),
                ("min_p", ctypes.c_float), ("repeat_penalty", ctypes.c_float), ("penalty_last_n", ctypes.c_size_t),
                ("seed", ctypes.c_uint64)]


class GenerateParams(ctypes.Structure):
    _fields_ = [("n_predict", ctypes.c_size_t), ("add_special", ctypes.c_int), ("parse_special", ctypes.c_int),
                ("sampler", SamplerParams)]


class GenerateResult(ctypes.Structure):
    _fields_ = [("n_prompt", ctypes.c_size_t), ("n_generated", ctypes.c_size_t), ("stop", ctypes.c_int),
                ("prompt_seconds", ctypes.c_double), ("generate_seconds", ctypes.c_double)]


class ChatMessage(ctypes.Structure):
    _fields_ = [("role", ctypes.c_char_p), ("content", ctypes.c_char_p)]


TOKEN_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t, ctypes.c_void_p)
TOKEN_ID_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t,
                                     ctypes.c_void_p)


def _candidates():
    if os.environ.get("WISP_LIBRARY"):
        return [os.environ["WISP_LIBRARY"]]
    if os.environ.get("WISP_PREFIX"):
        prefix = Path(os.environ["WISP_PREFIX"])
        return [str(prefix / d / "libwisp.so") for d in ("lib", "lib64", "lib/x86_64-linux-gnu")]
    found = ctypes.util.find_library("wisp")
    return [found] if found else ["libwisp.so"]


def load():
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        raise OSError("wisp: cannot load libwisp (set WISP_LIBRARY to its path or WISP_PREFIX to the install "
                      "prefix): " + "; ".join(errors))
    P = ctypes.POINTER
    sig = {
        "wisp_version": (ctypes.c_char_p, []),
        "wisp_last_error": (ctypes.c_char_p, []),
        "wisp_model_load": (ctypes.c_int, [ctypes.c_char_p, P(P(ModelHandle))]),
        "wisp_model_free": (None, [P(ModelHandle)]),
        "wisp_model_n_vocab": (ctypes.c_int64, [P(ModelHandle)]),
        "wisp_model_n_ctx_train": (ctypes.c_int64, [P(ModelHandle)]),
        "wisp_model_architecture": (ctypes.c_char_p, [P(ModelHandle)]),
        "wisp_token_bos": (ctypes.c_int32, [P(ModelHandle)]),
        "wisp_token_eos": (ctypes.c_int32, [P(ModelHandle)]),
        "wisp_token_is_eog": (ctypes.c_int, [P(ModelHandle), ctypes.c_int32]),
        "wisp_tokenize": (ctypes.c_int, [P(ModelHandle), ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                         P(ctypes.c_int32), ctypes.c_size_t, P(ctypes.c_size_t)]),
        "wisp_detokenize": (ctypes.c_int, [P(ModelHandle), P(ctypes.c_int32), ctypes.c_size_t, ctypes.c_int,
                                           ctypes.c_char_p, ctypes.c_size_t, P(ctypes.c_size_t)]),
        "wisp_chat_render": (ctypes.c_int, [P(ModelHandle), P(ChatMessage), ctypes.c_size_t, ctypes.c_int,
                                            ctypes.c_char_p, ctypes.c_size_t, P(ctypes.c_size_t)]),
        "wisp_session_default_params": (SessionParams, []),
        "wisp_generate_default_params": (GenerateParams, []),
        "wisp_session_create": (ctypes.c_int, [P(ModelHandle), P(SessionParams), P(P(SessionHandle))]),
        "wisp_session_free": (None, [P(SessionHandle)]),
        "wisp_session_reset": (None, [P(SessionHandle)]),
        "wisp_session_n_past": (ctypes.c_size_t, [P(SessionHandle)]),
        "wisp_session_n_ctx": (ctypes.c_size_t, [P(SessionHandle)]),
        "wisp_generate": (ctypes.c_int, [P(SessionHandle), ctypes.c_char_p, P(GenerateParams), TOKEN_CALLBACK,
                                         ctypes.c_void_p, P(GenerateResult)]),
        "wisp_generate_tokens": (ctypes.c_int, [P(SessionHandle), ctypes.c_char_p, P(GenerateParams),
                                                TOKEN_ID_CALLBACK, ctypes.c_void_p, P(GenerateResult)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib
