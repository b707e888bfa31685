"""wisp's Python package against independent oracles: token ids against llama.cpp's and Hugging
Face tokenizers' (tests/golden/tokenizer, and a tokenizers.Tokenizer rebuilt from the GGUF now),
greedy completions and chat answers against llama.cpp's (llama-cpp-python), the chat prompt
against jinja2's rendering of the GGUF's template."""
import importlib.util
import json
import os
from pathlib import Path

import pytest
from conftest import MODEL, ROOT, llama_greedy

import wisp

GOLDEN = ROOT / "tests" / "golden" / "tokenizer"


def test_installed_package_and_version():
    if os.environ.get("WISP_PREFIX"):  # scripts/test_install: the pip-installed copy, not python/
        assert not Path(wisp.__file__).resolve().is_relative_to(ROOT / "python"), wisp.__file__
    assert wisp.version() == wisp.__version__


def test_tokenize_matches_llama_cpp_golden(model):
    corpus = json.loads((GOLDEN / "corpus.json").read_text())["strings"]
    golden = json.loads((GOLDEN / "smollm2-135m.json").read_text())
    assert golden["hf_disagreements"] == []  # the llama.cpp ids are Hugging Face's too
    for case in golden["cases"][:300]:
        text = corpus[case["i"]]
        assert model.tokenize(text, add_special=True, parse_special=True) == case["s"], text
        if "p" in case:
            assert model.tokenize(text, add_special=False, parse_special=False) == case["p"], text


def test_tokenize_matches_hf_tokenizers(model):
    pytest.importorskip("tokenizers")
    spec = importlib.util.spec_from_file_location("gen_golden_tokenizer", ROOT / "scripts" / "gen_golden_tokenizer.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    vocab = gen.gguf_vocab(MODEL)
    hf = gen.hf_tokenizer_from_gguf(vocab, vocab["pre"])
    texts = ["Hello world", "The année 2024: 12345 cats 🐈 and 中文!", "  leading spaces\tand\ttabs\n\nlines",
             "<|im_start|>user\nHi<|im_end|>", "def f(x):\n    return x ** 2  # square"]
    for text in texts:
        assert model.tokenize(text, add_special=False, parse_special=True) == hf.encode(text, add_special_tokens=False).ids
        assert model.detokenize(model.tokenize(text, add_special=False)) == text


def test_generate_streams_llama_cpp_greedy_text(model, llama):
    prompt = "The capital of France is"
    ids = model.tokenize(prompt)
    assert ids == llama.tokenize(prompt.encode(), add_bos=True, special=True)
    _, expected = llama_greedy(llama, ids, 16)
    pieces = list(model.generate(prompt, max_tokens=16, temperature=0))
    assert len(pieces) > 1  # streamed piece by piece
    assert "".join(pieces).encode() == expected
    assert model.complete(prompt, max_tokens=16, temperature=0).encode() == expected  # a fresh context each time


def test_generate_tokens_gives_llama_cpp_greedy_ids_with_their_text(model, llama):
    prompt = "The capital of France is"
    tokens, expected = llama_greedy(llama, model.tokenize(prompt), 16)
    pairs = list(model.generate_tokens(prompt, max_tokens=16, temperature=0))
    assert [t for t, _ in pairs] == tokens  # one pair per sampled token, llama.cpp's ids
    assert "".join(text for _, text in pairs).encode() == expected


def test_generate_stops_when_the_caller_stops(model):
    it = model.generate("Once upon a time", max_tokens=24, temperature=0)
    first = [next(it) for _ in range(3)]
    it.close()  # stops the generation: the next one runs on the same session at once
    whole = model.complete("Once upon a time", max_tokens=24, temperature=0)
    assert whole.startswith("".join(first))


def test_chat_renders_the_gguf_template_and_answers_as_llama_cpp(model, llama):
    gguf = pytest.importorskip("gguf")
    jinja2 = pytest.importorskip("jinja2")
    field = gguf.GGUFReader(str(MODEL)).fields["tokenizer.chat_template"]
    source = bytes(field.parts[field.data[0]]).decode("utf-8")
    messages = [{"role": "system", "content": "You are brief."}, {"role": "user", "content": "What is the capital of France?"}]
    expected_prompt = jinja2.Environment(trim_blocks=True, lstrip_blocks=True).from_string(source).render(
        messages=messages, add_generation_prompt=True, bos_token="<|im_start|>", eos_token="<|im_end|>")
    assert model.render_chat(messages) == expected_prompt
    # The answer is llama.cpp's greedy continuation of that prompt: the model runs with exact=True,
    # which follows the float orders of the llama.cpp build for this CPU (AVX-512 or AVX2).
    ids = llama.tokenize(expected_prompt.encode(), add_bos=False, special=True)
    _, expected = llama_greedy(llama, ids, 16)
    assert model.chat(messages, max_tokens=16, temperature=0).encode() == expected
    assert "".join(model.chat(messages, max_tokens=16, temperature=0, stream=True)).encode() == expected


def test_sampling_is_seeded(model):
    a = model.complete("Tell me a story", max_tokens=16, temperature=1.0, seed=7)
    b = model.complete("Tell me a story", max_tokens=16, temperature=1.0, seed=7)
    assert a == b


def test_errors_name_what_is_wrong(model, tmp_path):
    with pytest.raises(wisp.WispError) as e:
        wisp.Model(str(tmp_path / "missing.gguf"))
    assert "missing.gguf" in str(e.value)
    with pytest.raises(wisp.WispError, match="top_p"):
        model.complete("x", top_p=2.0)
    with pytest.raises(wisp.WispError, match="UTF-8|context"):
        model.complete("word " * 2000, max_tokens=1)
    with pytest.raises(wisp.WispError):
        model.detokenize([10**9])
