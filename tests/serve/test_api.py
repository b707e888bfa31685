"""The OpenAI API through the real `openai` client: completions and chat, streamed and not, stop
strings, n > 1, usage; greedy answers equal `wisp run`; the other routes."""
import pytest

from conftest import MODEL, run_wisp, start_server

PROMPT = "The capital of France is"


def test_completion_greedy_equals_wisp_run(client):
    r = client.completions.create(model="anything", prompt=PROMPT, max_tokens=24, temperature=0)
    assert r.object == "text_completion"
    assert r.model == MODEL.name  # answers name the served model, whatever was asked for
    assert len(r.choices) == 1
    c = r.choices[0]
    assert c.finish_reason == "length"
    assert c.text == run_wisp(PROMPT, 24)
    assert r.usage.completion_tokens == 24
    assert r.usage.prompt_tokens == 5
    assert r.usage.total_tokens == 29


def test_completion_token_ids_prompt(client, server):
    ids = server.post("/tokenize", {"content": PROMPT, "add_special": True}).json()["tokens"]
    a = client.completions.create(model="m", prompt=ids, max_tokens=8, temperature=0)
    b = client.completions.create(model="m", prompt=PROMPT, max_tokens=8, temperature=0)
    assert a.choices[0].text == b.choices[0].text
    assert a.usage.prompt_tokens == len(ids)


def test_logit_bias_forces_and_bans_tokens(client, server):
    the = server.post("/tokenize", {"content": " the"}).json()["tokens"]
    assert len(the) == 1
    forced = client.completions.create(model="m", prompt=PROMPT, max_tokens=4, temperature=0,
                                       logit_bias={str(the[0]): 100})
    assert forced.choices[0].text == " the" * 4
    plain = client.completions.create(model="m", prompt=PROMPT, max_tokens=6, temperature=0).choices[0].text
    first = server.post("/tokenize", {"content": plain}).json()["tokens"][0]
    banned = client.completions.create(model="m", prompt=PROMPT, max_tokens=6, temperature=0,
                                       logit_bias={str(first): -100}).choices[0].text
    assert banned != plain
    # false is a ban too (llama-server's spelling), through the chat route and sampling alike
    r = server.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "Say the word the."}],
                                             "max_tokens": 8, "temperature": 1, "seed": 3, "logprobs": True,
                                             "logit_bias": {str(the[0]): False}})
    assert r.status == 200, r.text
    pieces = [t["token"] for t in r.json()["choices"][0]["logprobs"]["content"]]
    assert len(pieces) > 0 and " the" not in pieces


def test_completion_streamed_equals_whole(client):
    whole = client.completions.create(model="m", prompt="Once upon a time", max_tokens=20, temperature=0)
    chunks = list(client.completions.create(model="m", prompt="Once upon a time", max_tokens=20, temperature=0,
                                            stream=True, stream_options={"include_usage": True}))
    text = "".join(ch.choices[0].text for ch in chunks if ch.choices)
    assert text == whole.choices[0].text
    finals = [ch.choices[0].finish_reason for ch in chunks if ch.choices and ch.choices[0].finish_reason]
    assert finals == ["length"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 20
    assert all(ch.object == "text_completion" for ch in chunks)


def render_chat(messages):
    """The GGUF's chat template rendered by jinja2, as Hugging Face's apply_chat_template does."""
    gguf = pytest.importorskip("gguf")
    jinja2 = pytest.importorskip("jinja2")
    reader = gguf.GGUFReader(str(MODEL))
    field = reader.fields["tokenizer.chat_template"]
    source = bytes(field.parts[field.data[0]]).decode("utf-8")
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(source).render(messages=messages, add_generation_prompt=True, bos_token="", eos_token="")


def test_chat_greedy_equals_wisp_run(client):
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    r = client.chat.completions.create(model="m", messages=messages, max_tokens=40, temperature=0)
    assert r.object == "chat.completion"
    msg = r.choices[0].message
    assert msg.role == "assistant"
    assert msg.content == run_wisp(render_chat(messages), 40)
    assert r.usage.prompt_tokens > 10 and r.usage.completion_tokens > 0
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_chat_system_message_and_content_parts(client):
    a = client.chat.completions.create(model="m", temperature=0, max_tokens=12, messages=[
        {"role": "system", "content": "You answer in one word."},
        {"role": "user", "content": [{"type": "text", "text": "Name a "}, {"type": "text", "text": "color."}]}])
    b = client.chat.completions.create(model="m", temperature=0, max_tokens=12, messages=[
        {"role": "developer", "content": "You answer in one word."},
        {"role": "user", "content": "Name a color."}])
    assert a.choices[0].message.content == b.choices[0].message.content


def test_chat_streamed_equals_whole(client):
    messages = [{"role": "user", "content": "Tell me a short story about a cat."}]
    whole = client.chat.completions.create(model="m", messages=messages, max_tokens=30, temperature=0)
    chunks = list(client.chat.completions.create(model="m", messages=messages, max_tokens=30, temperature=0,
                                                 stream=True, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(ch.object == "chat.completion.chunk" for ch in chunks)
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == whole.choices[0].message.content
    reasons = [ch.choices[0].finish_reason for ch in chunks if ch.choices and ch.choices[0].finish_reason]
    assert reasons == [whole.choices[0].finish_reason]
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert chunks[-1].usage.prompt_tokens == whole.usage.prompt_tokens


def test_stream_without_usage_has_none(client):
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}],
                                                 max_tokens=5, temperature=0, stream=True))
    assert all(ch.usage is None for ch in chunks)
    assert all(ch.choices for ch in chunks)


def test_stop_strings(client):
    full = client.completions.create(model="m", prompt=PROMPT, max_tokens=24, temperature=0).choices[0].text
    # Stop at the second word of the greedy answer: the text ends right before it.
    words = full.split(" ")
    assert len(words) > 3
    stop = " " + words[2]
    cut = full[: full.index(stop)]
    r = client.completions.create(model="m", prompt=PROMPT, max_tokens=24, temperature=0, stop=stop)
    assert r.choices[0].text == cut and r.choices[0].finish_reason == "stop"
    r = client.completions.create(model="m", prompt=PROMPT, max_tokens=24, temperature=0, stop=["zzzz", stop])
    assert r.choices[0].text == cut and r.choices[0].finish_reason == "stop"
    assert r.usage.completion_tokens < 24
    chunks = list(client.completions.create(model="m", prompt=PROMPT, max_tokens=24, temperature=0, stop=[stop],
                                            stream=True))
    assert "".join(c.choices[0].text for c in chunks) == cut


def test_seeded_sampling_repeats_and_n(client):
    kw = dict(model="m", prompt="Write a word:", max_tokens=12, temperature=1.0, seed=1234)
    a = client.completions.create(**kw)
    b = client.completions.create(**kw)
    assert a.choices[0].text == b.choices[0].text
    r = client.completions.create(n=3, **kw)
    assert [c.index for c in r.choices] == [0, 1, 2]
    assert r.choices[0].text == a.choices[0].text  # choice i samples with seed + i
    assert r.usage.prompt_tokens == a.usage.prompt_tokens  # the prompt counts once
    assert 3 <= r.usage.completion_tokens <= 36
    chat = client.chat.completions.create(model="m", n=2, messages=[{"role": "user", "content": "Hi"}], max_tokens=8,
                                          temperature=0)
    assert len(chat.choices) == 2 and chat.choices[0].message.content == chat.choices[1].message.content


def test_echo_and_prompt_list(client):
    r = client.completions.create(model="m", prompt=PROMPT, max_tokens=4, temperature=0, echo=True)
    assert r.choices[0].text.startswith(PROMPT)
    r2 = client.completions.create(model="m", prompt=[PROMPT, "Hello"], max_tokens=4, temperature=0)
    assert len(r2.choices) == 2
    assert PROMPT + r2.choices[0].text == r.choices[0].text


def test_models_and_health(server, client):
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL.name]
    h = server.request("GET", "/health")
    assert h.status == 200 and h.json() == {"status": "ok"}


def test_tokenize_detokenize(server):
    toks = server.post("/tokenize", {"content": "Hello world"}).json()["tokens"]
    assert all(isinstance(t, int) for t in toks) and len(toks) >= 2
    text = server.post("/detokenize", {"tokens": toks}).json()["content"]
    assert text == "Hello world"
    pieces = server.post("/tokenize", {"content": "Hello world", "with_pieces": True}).json()["tokens"]
    assert "".join(p["piece"] for p in pieces) == "Hello world"


def test_openapi_lists_every_route(server):
    doc = server.request("GET", "/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    for path in ["/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/metrics", "/tokenize",
                 "/detokenize", "/openapi.json"]:
        assert path in doc["paths"], path


def test_metrics_format(server, client):
    client.completions.create(model="m", prompt="Hi", max_tokens=3, temperature=0)
    text = server.request("GET", "/metrics").text
    for name in ["wisp_requests_running", "wisp_requests_waiting", "wisp_kv_blocks_used", "wisp_kv_blocks_free",
                 "wisp_kv_blocks_cached", "wisp_prefix_cache_queries_total", "wisp_prefix_cache_hits_total",
                 "wisp_preemptions_total", "wisp_prompt_tokens_total", "wisp_generation_tokens_total"]:
        assert f"\n{name} " in "\n" + text, name
        assert f"# TYPE {name} " in text
    for h in ["wisp_time_to_first_token_seconds", "wisp_inter_token_latency_seconds"]:
        assert f"# TYPE {h} histogram" in text
        assert f'{h}_bucket{{le="+Inf"}}' in text
    m = server.metrics()
    assert m["wisp_generation_tokens_total"] >= 3
    assert m["wisp_time_to_first_token_seconds_count"] >= 1
    assert m['wisp_time_to_first_token_seconds_bucket{le="+Inf"}'] == m["wisp_time_to_first_token_seconds_count"]


@pytest.fixture(scope="module")
def exact_client(tmp_path_factory):
    """A server with --exact: llama.cpp's float orders, so its logits can be held to llama.cpp's.
    (The default numerics are wisp's own order, measured against --exact in docs/engine.md.)"""
    openai = pytest.importorskip("openai")
    s = start_server(tmp_path_factory, "serve-exact", "--exact", "--ctx", "256", "--parallel", "2")
    yield s, openai.OpenAI(base_url=s.base + "/v1", api_key="unused", max_retries=0, timeout=120)
    rc, _ = s.stop()
    assert rc == 0, s.log_text()


def test_completion_logprobs_match_llama_cpp(exact_client):
    """Log-probabilities are the log-softmax of the model's raw logits: after each prefix of the
    prompt (given as token ids) they equal llama.cpp's log-softmax after the same prefix, on a
    server with llama.cpp's float orders (--exact)."""
    np = pytest.importorskip("numpy")
    llama_cpp = pytest.importorskip("llama_cpp")
    server, client = exact_client
    r = client.completions.create(model="m", prompt=PROMPT, max_tokens=8, temperature=0, logprobs=3)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == 8
    assert "".join(lp.tokens) == r.choices[0].text
    assert lp.text_offset[0] == 0 and lp.text_offset[1] == len(lp.tokens[0])
    for val, top in zip(lp.token_logprobs, lp.top_logprobs):
        assert val <= 0 and len(top) == 3
        assert max(top.values()) == pytest.approx(val)  # greedy: the sampled token is the likeliest
    ids = server.post("/tokenize", {"content": PROMPT, "add_special": True}).json()["tokens"]
    m = llama_cpp.Llama(str(MODEL), n_ctx=128, logits_all=True, verbose=False, n_threads=2)
    m.eval(ids)
    for i in range(1, len(ids) + 1):
        one = client.completions.create(model="m", prompt=ids[:i], max_tokens=1, temperature=0, logprobs=5)
        got = one.choices[0].logprobs
        logits = np.array(m.scores[i - 1], dtype=np.float64)
        ref = logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))
        assert got.token_logprobs[0] == pytest.approx(ref.max(), abs=1e-5)
        assert sorted(got.top_logprobs[0].values(), reverse=True) == pytest.approx(sorted(ref, reverse=True)[:5], abs=1e-5)
    assert lp.token_logprobs[0] == pytest.approx(ref.max(), abs=1e-5)


def test_chat_logprobs(client):
    kw = dict(model="m", messages=[{"role": "user", "content": "Hi"}], max_tokens=6, temperature=0)
    r = client.chat.completions.create(logprobs=True, top_logprobs=2, **kw)
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens
    for e in content:
        assert bytes(e.bytes).decode("utf-8", errors="replace") == e.token or e.token.endswith("\ufffd")
        assert len(e.top_logprobs) == 2 and e.top_logprobs[0].logprob >= e.top_logprobs[1].logprob
        assert e.top_logprobs[0].logprob == pytest.approx(e.logprob)
    plain = client.chat.completions.create(**kw)
    assert plain.choices[0].logprobs is None
    assert plain.choices[0].message.content == r.choices[0].message.content
    chunks = list(client.chat.completions.create(logprobs=True, stream=True, **kw))
    streamed = [e for c in chunks if c.choices and c.choices[0].logprobs for e in c.choices[0].logprobs.content]
    assert [e.token for e in streamed] == [e.token for e in content]
    assert [e.logprob for e in streamed] == pytest.approx([e.logprob for e in content])
