"""Draft-model speculation in `wisp serve` (--draft FILE; the request's "speculative": {"draft": ...}):
greedy answers equal the plain server's, for several concurrent drafting and plain requests;
seeded sampled answers equal them too; both KV pools (the target's and the draft's) are back to
empty afterwards, also after a client hangs up mid-stream; a bad --draft is a clear start-up
error, and a draft request to a server without one a 400.

The draft is the served file itself (the same vocabulary by construction): the draft's greedy
guesses then agree with the target's, so verification and the kept-guess path run on every step;
tests/unit/engine/test_scheduler_draft.cpp covers rejected guesses and small pools."""
import concurrent.futures as cf
import http.client
import json
import threading
import time

import pytest

from conftest import MODEL, ROOT, start_server

PROMPTS = [
    [{"role": "user", "content": "Explain in two sentences why the sky is blue."}],
    [{"role": "user", "content": "Write a haiku about a lighthouse."}],
    [{"role": "user", "content": "List three uses of a paper clip."}],
]
GEMMA = ROOT / "models" / "gemma-3-270m-q4_k_m.gguf"


def chat(server, messages, max_tokens=24, **extra):
    body = {"model": "m", "messages": messages, "max_tokens": max_tokens, "temperature": 0, **extra}
    r = server.post("/v1/chat/completions", body)
    assert r.status == 200, r.text
    return r.json()


@pytest.fixture(scope="module")
def draft_server(tmp_path_factory):
    s = start_server(tmp_path_factory, "serve-draft", "--ctx", "1024", "--parallel", "4", "--draft", str(MODEL),
                     "--draft-p-min", "0", "--spec-max-decodes", "4")
    yield s
    rc, _ = s.stop()
    assert rc == 0, s.log_text()


def idle_pools(server):
    m = server.wait_idle()
    deadline = time.time() + 10
    while m.get("wisp_draft_kv_blocks_used", 0) != 0 and time.time() < deadline:
        time.sleep(0.05)
        m = server.metrics()
    return m


def test_start_up_reports_the_draft_and_its_pool(draft_server):
    log = draft_server.log_text()
    assert "draft " + str(MODEL) in log and "KV pool" in log.split("draft ")[-1], log
    m = draft_server.metrics()
    assert m["wisp_draft_kv_blocks_total"] > 0
    assert m["wisp_draft_kv_blocks_used"] == 0


def test_greedy_answers_equal_the_plain_servers_for_concurrent_requests(server, draft_server):
    solo = [chat(server, p)["choices"][0]["message"]["content"] for p in PROMPTS]
    jobs = [(i % len(PROMPTS), i % 2 == 0) for i in range(6)]  # every prompt drafting and not, at once
    barrier = threading.Barrier(len(jobs))

    def run(job):
        p, speculate = job
        barrier.wait()
        return chat(draft_server, PROMPTS[p], speculative={"draft": speculate})

    with cf.ThreadPoolExecutor(len(jobs)) as pool:
        got = list(pool.map(run, jobs, timeout=300))
    accepted = 0
    for (p, speculate), r in zip(jobs, got):
        assert r["choices"][0]["message"]["content"] == solo[p], f"prompt {p}, draft {speculate}"
        if speculate:
            s = r["usage"].get("speculative", {"drafted_tokens": 0, "accepted_tokens": 0})
            assert 0 <= s["accepted_tokens"] <= s["drafted_tokens"]
            accepted += s["accepted_tokens"]
        else:
            assert "speculative" not in r["usage"]
    assert accepted > 0, "the drafting requests kept no guess: nothing was verified"
    m = idle_pools(draft_server)
    assert m["wisp_kv_blocks_used"] == 0
    assert m["wisp_draft_kv_blocks_used"] == 0
    assert m["wisp_draft_steps_total"] > 0


def test_the_server_default_drafts_and_a_request_may_ask_for_lookup_instead(server, draft_server):
    plain = chat(server, PROMPTS[0])["choices"][0]["message"]["content"]
    default = chat(draft_server, PROMPTS[0])
    lookup = chat(draft_server, PROMPTS[0], speculative={"lookup": 3})
    assert default["choices"][0]["message"]["content"] == plain
    assert lookup["choices"][0]["message"]["content"] == plain
    assert default["usage"]["speculative"]["accepted_tokens"] > 0


def test_seeded_sampling_equals_the_plain_servers(server, draft_server):
    for seed in (3, 11):
        extra = {"temperature": 0.8, "top_k": 20, "seed": seed}
        plain = chat(server, PROMPTS[1], **extra)["choices"][0]["message"]["content"]
        first = chat(draft_server, PROMPTS[1], **extra)
        again = chat(draft_server, PROMPTS[1], **extra)["choices"][0]["message"]["content"]
        assert first["choices"][0]["message"]["content"] == plain, f"seed {seed}"
        assert again == plain, f"seed {seed}, second run"
        assert first["usage"]["speculative"]["drafted_tokens"] > 0


def test_a_client_hanging_up_mid_stream_frees_both_pools(draft_server):
    conn = http.client.HTTPConnection("127.0.0.1", draft_server.port, timeout=60)
    body = {"model": "m", "messages": PROMPTS[2], "max_tokens": 400, "temperature": 0, "ignore_eos": True,
            "stream": True}
    conn.request("POST", "/v1/chat/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    # Read until the draft pool shows the request's blocks (a few tokens in, however fast the
    # machine streams), then hang up with most of the 400 tokens still to come.
    seen, used = 0, 0
    while used == 0 and seen < 200:
        line = resp.readline()
        assert line, "the stream ended early"
        if line.startswith(b"data: "):
            seen += 1
            if seen % 2 == 0:
                used = draft_server.metrics()["wisp_draft_kv_blocks_used"]
    conn.sock.close()
    conn.close()
    m = idle_pools(draft_server)
    assert used > 0, "the request held no draft blocks while streaming"
    assert m["wisp_kv_blocks_used"] == 0
    assert m["wisp_draft_kv_blocks_used"] == 0
    assert m['wisp_requests_finished_total{reason="cancelled"}'] >= 1


@pytest.mark.parametrize("field,param", [
    ({"draft": "x.gguf"}, "speculative.draft"),
    ({"draft": True, "lookup": 3}, "speculative.draft"),
])
def test_bad_draft_fields_are_400(draft_server, field, param):
    r = draft_server.post("/v1/chat/completions", {"model": "m", "messages": PROMPTS[0], "speculative": field})
    assert r.status == 400, r.text
    assert r.json()["error"]["param"] == param


def test_a_draft_request_to_a_server_without_one_is_400(server):
    r = server.post("/v1/chat/completions", {"model": "m", "messages": PROMPTS[0], "speculative": {"draft": True}})
    assert r.status == 400, r.text
    assert r.json()["error"]["param"] == "speculative.draft"
    assert "--draft" in r.json()["error"]["message"]


def test_a_missing_draft_file_is_a_start_up_error(tmp_path_factory, tmp_path):
    missing = tmp_path / "no-such-draft.gguf"
    with pytest.raises(RuntimeError, match="no-such-draft.gguf"):
        start_server(tmp_path_factory, "serve-draft-missing", "--draft", str(missing))


@pytest.mark.skipif(not GEMMA.exists(), reason="models/gemma-3-270m-q4_k_m.gguf is missing")
def test_a_draft_with_another_vocabulary_is_a_start_up_error(tmp_path_factory):
    with pytest.raises(RuntimeError, match="vocabulary"):
        start_server(tmp_path_factory, "serve-draft-vocab", "--draft", str(GEMMA))


def test_draft_with_lookup_or_exact_is_refused_at_start(tmp_path_factory):
    with pytest.raises(RuntimeError, match="not both"):
        start_server(tmp_path_factory, "serve-draft-lookup", "--draft", str(MODEL), "--lookup", "3")
    with pytest.raises(RuntimeError, match="--exact"):
        start_server(tmp_path_factory, "serve-draft-exact", "--draft", str(MODEL), "--exact")
