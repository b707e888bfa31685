"""Prompt-lookup speculation per request in `wisp serve` (the "speculative" extension and --lookup):
greedy answers equal the plain ones, alone and among concurrent plain and speculating requests; the
usage reports the guesses; the KV pool is back to idle afterwards; bad values are 400s."""
import concurrent.futures as cf
import threading

import pytest

from conftest import start_server

PASSAGE = ("The lighthouse keeper climbed the spiral stairs every evening at dusk, trimmed the wick, "
           "polished the great lens, and wrote the weather in a leather logbook that his grandfather "
           "had started sixty years before.")
CODE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
PROMPTS = [
    [{"role": "user", "content": "Repeat this passage word for word:\n\n" + PASSAGE}],
    [{"role": "user", "content": "Rename the function add to plus in this code and show the whole file:\n\n" + CODE}],
    [{"role": "user", "content": "Explain in two sentences why the sky is blue."}],
]
LOOKUP = {"speculative": {"lookup": 3, "lookup_min": 1}}


def chat(server, messages, max_tokens=32, **extra):
    r = server.post("/v1/chat/completions",
                    {"model": "m", "messages": messages, "max_tokens": max_tokens, "temperature": 0, **extra})
    assert r.status == 200, r.text
    return r.json()


def test_greedy_answers_equal_with_and_without_lookup(server):
    drafted = accepted = 0
    for messages in PROMPTS:
        plain = chat(server, messages)
        spec = chat(server, messages, **LOOKUP)
        assert spec["choices"][0]["message"]["content"] == plain["choices"][0]["message"]["content"]
        assert spec["usage"]["completion_tokens"] == plain["usage"]["completion_tokens"]
        assert "speculative" not in plain["usage"]
        s = spec["usage"].get("speculative", {"drafted_tokens": 0, "accepted_tokens": 0})
        assert 0 <= s["accepted_tokens"] <= s["drafted_tokens"]
        drafted += s["drafted_tokens"]
        accepted += s["accepted_tokens"]
    assert accepted > 0, "the quoting prompts must keep some guesses, else nothing was verified"
    m = server.wait_idle()
    assert m["wisp_kv_blocks_used"] == 0
    assert m["wisp_speculative_accepted_tokens_total"] >= accepted


def test_concurrent_speculating_and_plain_requests_match_their_solo_answers(client, server):
    solo = [chat(server, p)["choices"][0]["message"]["content"] for p in PROMPTS]
    jobs = [(i % len(PROMPTS), i % 2 == 0) for i in range(6)]  # every prompt both ways, at once
    barrier = threading.Barrier(len(jobs))

    def run(job):
        p, speculate = job
        barrier.wait()
        r = client.chat.completions.create(model="m", messages=PROMPTS[p], max_tokens=32, temperature=0,
                                           extra_body=LOOKUP if speculate else None)
        return r.choices[0].message.content

    with cf.ThreadPoolExecutor(len(jobs)) as pool:
        got = list(pool.map(run, jobs, timeout=300))
    for (p, speculate), text in zip(jobs, got):
        assert text == solo[p], f"prompt {p}, lookup {speculate}"
    m = server.wait_idle()
    assert m["wisp_requests_running"] == 0
    assert m["wisp_kv_blocks_used"] == 0


def test_streamed_answer_with_lookup_equals_the_plain_one(client, server):
    plain = chat(server, PROMPTS[0])["choices"][0]["message"]["content"]
    stream = client.chat.completions.create(model="m", messages=PROMPTS[0], max_tokens=32, temperature=0, stream=True,
                                            extra_body=LOOKUP)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == plain


@pytest.mark.parametrize("field,param", [
    ({"lookup": 65}, "speculative.lookup"),
    ({"lookup": -1}, "speculative.lookup"),
    ({"lookup": 3, "draft_max": 0}, "speculative.draft_max"),
    ({"lookup": "3"}, "speculative.lookup"),
    ({"draft": "x.gguf"}, "speculative.draft"),
    (5, "speculative"),
])
def test_bad_speculative_fields_are_400(server, field, param):
    r = server.post("/v1/chat/completions", {"model": "m", "messages": PROMPTS[2], "speculative": field})
    assert r.status == 400, r.text
    assert r.json()["error"]["param"] == param


@pytest.fixture(scope="module")
def lookup_server(tmp_path_factory):
    s = start_server(tmp_path_factory, "serve-lookup", "--ctx", "1024", "--parallel", "4", "--lookup", "3",
                     "--lookup-min", "1")
    yield s
    rc, _ = s.stop()
    assert rc == 0, s.log_text()


def test_server_default_lookup_and_the_per_request_off_switch(server, lookup_server):
    plain = chat(server, PROMPTS[0])
    default = chat(lookup_server, PROMPTS[0])
    off = chat(lookup_server, PROMPTS[0], speculative={"lookup": 0})
    assert default["choices"][0]["message"]["content"] == plain["choices"][0]["message"]["content"]
    assert off["choices"][0]["message"]["content"] == plain["choices"][0]["message"]["content"]
    assert default["usage"]["speculative"]["accepted_tokens"] > 0
    assert "speculative" not in off["usage"]
    assert lookup_server.wait_idle()["wisp_kv_blocks_used"] == 0


def test_lookup_with_exact_is_refused_at_start(tmp_path_factory):
    with pytest.raises(RuntimeError, match="--exact"):
        start_server(tmp_path_factory, "serve-lookup-exact", "--lookup", "3", "--exact")
