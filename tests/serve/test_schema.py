"""schemathesis (PyPI) against GET /openapi.json: every operation gets the coverage phase's
boundary and wrong-type cases and a bounded number of random (fuzzing) cases, valid and invalid.
No answer may be a 5xx, a hang (the request timeout) or a dropped connection, and every answer must
have a status code, a content type and a body the document declares for it.

Its own server keeps each generated request cheap without changing what is generated: a small
context; --n-predict 1 caps every answer at one token whatever max_tokens asks (n up to 16 and
max_tokens up to 2^63-1 still reach the parser and the scheduler as sent); and 4-token KV blocks
let the prefix cache serve nearly all of the chat template's system prompt, which every chat
request repeats."""
import shutil
import subprocess
import sys
import time

import pytest

from conftest import start_server

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
N_PREDICT = 1
CTX = 128


@pytest.fixture(scope="module")
def schema_server(tmp_path_factory):
    s = start_server(tmp_path_factory, "serve-schema", "--ctx", str(CTX), "--parallel", "4", "--max-queue", "16",
                     "--n-predict", str(N_PREDICT), "--kv-block", "4", "--quiet")
    yield s
    rc, _ = s.stop()
    assert rc == 0, f"wisp serve exited with {rc}:\n{s.log_text()}"


def schemathesis_command():
    exe = shutil.which("schemathesis")
    if exe:
        return [exe]
    pytest.importorskip("schemathesis")
    return [sys.executable, "-m", "schemathesis.cli"]


def server_errors(s):
    return {k: v for k, v in s.metrics().items() if k.startswith('wisp_http_responses_total{code="5')}


def test_schemathesis_finds_no_server_error_or_mismatch(schema_server, tmp_path):
    s = schema_server
    cmd = schemathesis_command() + [
        "run", s.base + "/openapi.json",
        "--checks", CHECKS,
        "--phases", "examples,coverage,fuzzing",
        "--max-examples", "10",           # fuzzing cases per operation (coverage runs every case it derives)
        "--generation-deterministic",     # the same cases every run, no example database
        "--workers", "1",                 # with 4, schemathesis 4.32.5 failed inside its own generation
        "--request-timeout", "20",        # a hang is an error, not a stuck test
        "--no-color",
    ]
    before = server_errors(s)
    t0 = time.time()
    # Its own folder: no schemathesis.toml or report from elsewhere is picked up or left behind.
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    text = out.stdout + out.stderr
    assert out.returncode == 0, f"schemathesis failed (rc {out.returncode}, {time.time() - t0:.0f} s):\n{text[-12000:]}"
    assert "No issues found" in text, text[-4000:]
    # Nothing left behind: the server still answers and holds no request or KV block.
    m = s.wait_idle()
    assert m["wisp_requests_running"] == 0 and m["wisp_kv_blocks_used"] == 0, m
    assert server_errors(s) == before  # the 503s of /health while the model loaded, no more


def test_n_predict_caps_every_answer(schema_server):
    s = schema_server
    r = s.post("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 2 ** 63 - 1, "n": 3, "ignore_eos": True})
    assert r.status == 200, r.text
    body = r.json()
    assert [c["finish_reason"] for c in body["choices"]] == ["length"] * 3
    assert body["usage"]["completion_tokens"] == 3 * N_PREDICT
    r = s.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "Tell me a long story."}],
                                        "ignore_eos": True})
    assert r.status == 200, r.text
    assert r.json()["usage"]["completion_tokens"] == N_PREDICT
    assert r.json()["choices"][0]["finish_reason"] == "length"
