"""wisp.Model: a loaded model with one session, over libwisp's C API."""
import ctypes
import queue
import threading
from typing import Iterable, Iterator, List, Mapping, Optional, Tuple

from . import _lib

_LIB = None


def _lib_handle():
    global _LIB  # loaded once, on first use, so that importing wisp never fails
    if _LIB is None:
        _LIB = _lib.load()
    return _LIB


class WispError(RuntimeError):
    """A failed libwisp call: `status` is wisp.h's wisp_status, the message names what is at fault."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _check(status: int) -> None:
    if status != _lib.OK:
        raise WispError(status, _lib_handle().wisp_last_error().decode("utf-8", "replace"))


def version() -> str:
    """libwisp's version, "MAJOR.MINOR.PATCH"."""
    return _lib_handle().wisp_version().decode()


def _read_text(call) -> str:
    """Runs a wisp.h text call twice: once for the size, once into a buffer of that size."""
    n = ctypes.c_size_t(0)
    status = call(None, 0, ctypes.byref(n))
    if status == _lib.OK:
        return ""
    if status != _lib.ERR_BUFFER_TOO_SMALL:
        _check(status)
    buf = ctypes.create_string_buffer(n.value + 1)
    _check(call(buf, n.value + 1, ctypes.byref(n)))
    return buf.raw[: n.value].decode("utf-8")


class Model:
    """A GGUF model and one session on it.

    n_ctx: the session's context in tokens (0: min(training context, 4096)); n_threads: 0 for every
    hardware thread; exact: llama.cpp's float orders, so that greedy output equals llama.cpp's.
    generate() and chat() start each completion from an empty context.
    """

    def __init__(self, path: str, *, n_ctx: int = 0, n_threads: int = 0, exact: bool = False,
                 kv_type: Optional[str] = None):
        lib = _lib_handle()
        self._lib = lib
        self._model = ctypes.POINTER(_lib.ModelHandle)()
        self._session = ctypes.POINTER(_lib.SessionHandle)()
        _check(lib.wisp_model_load(str(path).encode(), ctypes.byref(self._model)))
        params = lib.wisp_session_default_params()
        params.n_ctx, params.n_threads, params.exact = n_ctx, n_threads, int(exact)
        if kv_type is not None:
            params.kv_type = kv_type.encode()
        try:
            _check(lib.wisp_session_create(self._model, ctypes.byref(params), ctypes.byref(self._session)))
        except WispError:
            lib.wisp_model_free(self._model)
            raise
        # One generation at a time on the session; chat rendering parses the template lazily.
        self._session_lock = threading.Lock()
        self._chat_lock = threading.Lock()

    # ---- lifetime ----
    def close(self) -> None:
        if getattr(self, "_session", None):
            self._lib.wisp_session_free(self._session)
            self._session = None
        if getattr(self, "_model", None):
            self._lib.wisp_model_free(self._model)
            self._model = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    # ---- properties ----
    @property
    def n_vocab(self) -> int:
        return self._lib.wisp_model_n_vocab(self._model)

    @property
    def n_ctx(self) -> int:
        return self._lib.wisp_session_n_ctx(self._session)

    @property
    def architecture(self) -> str:
        return self._lib.wisp_model_architecture(self._model).decode()

    @property
    def bos(self) -> int:
        return self._lib.wisp_token_bos(self._model)

    @property
    def eos(self) -> int:
        return self._lib.wisp_token_eos(self._model)

    def is_eog(self, token: int) -> bool:
        return bool(self._lib.wisp_token_is_eog(self._model, token))

    # ---- tokenization ----
    def tokenize(self, text: str, add_special: bool = True, parse_special: bool = False) -> List[int]:
        """Token ids of `text`; add_special: BOS as the model asks; parse_special: "<|im_start|>"
        and the like become their tokens (leave off for untrusted text)."""
        data = text.encode("utf-8")
        n = ctypes.c_size_t(0)
        args = (self._model, data, len(data), int(add_special), int(parse_special))
        status = self._lib.wisp_tokenize(*args, None, 0, ctypes.byref(n))
        if status == _lib.OK:
            return []
        if status != _lib.ERR_BUFFER_TOO_SMALL:
            _check(status)
        ids = (ctypes.c_int32 * n.value)()
        _check(self._lib.wisp_tokenize(*args, ids, n.value, ctypes.byref(n)))
        return list(ids)

    def detokenize(self, tokens: Iterable[int], render_special: bool = False) -> str:
        tokens = list(tokens)
        arr = (ctypes.c_int32 * len(tokens))(*tokens)
        return _read_text(lambda buf, cap, n: self._lib.wisp_detokenize(self._model, arr, len(tokens),
                                                                         int(render_special), buf, cap, n))

    # ---- chat ----
    def render_chat(self, messages: List[Mapping[str, str]], add_generation_prompt: bool = True) -> str:
        """The messages ({"role": ..., "content": ...}) rendered with the model's chat template."""
        keep = [(m["role"].encode(), m["content"].encode()) for m in messages]
        arr = (_lib.ChatMessage * len(keep))(*[_lib.ChatMessage(r, c) for r, c in keep])
        with self._chat_lock:
            return _read_text(lambda buf, cap, n: self._lib.wisp_chat_render(
                self._model, arr, len(keep), int(add_generation_prompt), buf, cap, n))

    def chat(self, messages: List[Mapping[str, str]], *, stream: bool = False, **sampling):
        """The assistant's answer to the conversation: a string, or with stream=True an iterator of
        its pieces. Sampling settings as for generate()."""
        pieces = self.generate(self.render_chat(messages), add_special=True, parse_special=True, **sampling)
        return pieces if stream else "".join(pieces)

    # ---- generation ----
    def generate(self, prompt: str, *, max_tokens: int = 128, temperature: float = 0.8, top_k: int = 40,
                 top_p: float = 0.95, min_p: float = 0.05, repeat_penalty: float = 1.0, penalty_last_n: int = 64,
                 seed: int = 0, add_special: bool = True, parse_special: bool = True) -> Iterator[str]:
        """Streams the completion of `prompt`: yields each piece of text (complete UTF-8) as it is
        generated, until max_tokens (0: until the end of the turn or the context), an end-of-turn
        token, or the caller stops iterating. temperature <= 0 is greedy."""
        params = self._params(max_tokens=max_tokens, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p,
                              repeat_penalty=repeat_penalty, penalty_last_n=penalty_last_n, seed=seed,
                              add_special=add_special, parse_special=parse_special)
        return self._stream(prompt.encode("utf-8"), params, with_ids=False)

    def generate_tokens(self, prompt: str, **settings) -> Iterator[Tuple[int, str]]:
        """As generate(), one (token id, text) pair per sampled token: the text is what the token
        completes ("" while a character's bytes are incomplete, and for an end-of-turn token)."""
        return self._stream(prompt.encode("utf-8"), self._params(**settings), with_ids=True)

    def _params(self, *, max_tokens: int = 128, temperature: float = 0.8, top_k: int = 40, top_p: float = 0.95,
                min_p: float = 0.05, repeat_penalty: float = 1.0, penalty_last_n: int = 64, seed: int = 0,
                add_special: bool = True, parse_special: bool = True):
        p = self._lib.wisp_generate_default_params()
        p.n_predict, p.add_special, p.parse_special = max_tokens, int(add_special), int(parse_special)
        s = p.sampler
        s.temperature, s.top_k, s.top_p, s.min_p = temperature, top_k, top_p, min_p
        s.repeat_penalty, s.penalty_last_n, s.seed = repeat_penalty, penalty_last_n, seed
        return p

    def complete(self, prompt: str, **kwargs) -> str:
        """generate()'s pieces joined."""
        return "".join(self.generate(prompt, **kwargs))

    def _stream(self, prompt: bytes, params, with_ids: bool) -> Iterator:
        # wisp_generate calls back from inside one C call; it runs on a worker thread (ctypes drops
        # the GIL during the call) and hands each piece over a queue, so the caller gets a lazy
        # iterator. Leaving the loop early makes the callback ask wisp to stop.
        pieces: "queue.Queue" = queue.Queue()
        stop = threading.Event()
        done = object()
        outcome = {}

        def on_text(text, length, _user):
            pieces.put(ctypes.string_at(text, length).decode("utf-8"))
            return 1 if stop.is_set() else 0

        def on_token(token, text, length, _user):
            pieces.put((token, ctypes.string_at(text, length).decode("utf-8") if length else ""))
            return 1 if stop.is_set() else 0

        callback = _lib.TOKEN_ID_CALLBACK(on_token) if with_ids else _lib.TOKEN_CALLBACK(on_text)
        generate = self._lib.wisp_generate_tokens if with_ids else self._lib.wisp_generate

        def run():
            try:
                self._lib.wisp_session_reset(self._session)
                result = _lib.GenerateResult()
                outcome["status"] = generate(self._session, prompt, ctypes.byref(params), callback, None,
                                             ctypes.byref(result))
                if outcome["status"] != _lib.OK:
                    outcome["message"] = self._lib.wisp_last_error().decode("utf-8", "replace")
            finally:
                pieces.put(done)

        with self._session_lock:
            worker = threading.Thread(target=run, daemon=True)
            worker.start()
            try:
                while True:
                    item = pieces.get()
                    if item is done:
                        break
                    yield item
            finally:
                stop.set()
                worker.join()
        if outcome.get("status", _lib.OK) != _lib.OK:
            raise WispError(outcome["status"], outcome["message"])
