"""Concurrency through the API: batch invariance, cancellation on disconnect (streamed or not),
the queue limit, and a clean stop with requests in flight."""
import concurrent.futures as cf
import http.client
import json
import signal
import socket
import threading
import time

import pytest

from conftest import start_server

QUESTION = [{"role": "user", "content": "Explain in two sentences why the sky is blue."}]


def test_batch_invariance(client, server):
    """The same greedy request alone and among 15 concurrent others gives the same text."""
    kw = dict(model="m", messages=QUESTION, max_tokens=48, temperature=0)
    alone = client.chat.completions.create(**kw).choices[0].message.content
    others = []
    for i in range(15):
        if i % 3 == 0:
            others.append(dict(model="m", prompt=f"Count from {i} upward: ", max_tokens=20 + 5 * i, temperature=0.9,
                               seed=i))
        elif i % 3 == 1:
            others.append(dict(model="m", messages=[{"role": "user", "content": "Write a haiku about " + "rain " * i}],
                               max_tokens=40, temperature=0.7, seed=i))
        else:
            others.append(dict(model="m", messages=QUESTION, max_tokens=10 + i, temperature=0))
    barrier = threading.Barrier(16)

    def run(req):
        barrier.wait()
        if "prompt" in req:
            return client.completions.create(**req).choices[0].text
        return client.chat.completions.create(**req).choices[0].message.content

    with cf.ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(run, kw)] + [pool.submit(run, r) for r in others]
        results = [f.result(timeout=120) for f in futures]
    assert results[0] == alone
    m = server.metrics()
    assert m["wisp_steps_total"] > 0


def stream_request(server, body):
    """Starts a streamed completion on a raw connection; returns (connection, response)."""
    conn = server.connect()
    conn.request("POST", "/v1/completions", body=json.dumps({**body, "stream": True}),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    return conn, resp


def hang_up(conn, resp):
    """Closes the client's side for real (the response holds the socket too)."""
    try:
        conn.sock.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError):
        pass
    resp.close()
    conn.close()


def read_events(resp, n):
    out = []
    while len(out) < n:
        line = resp.readline()
        if not line:
            break
        if line.startswith(b"data: "):
            out.append(line[6:].strip())
    return out


def cancelled_count(server):
    return server.metrics().get('wisp_requests_finished_total{reason="cancelled"}', 0)


def test_disconnect_mid_stream_cancels(server):
    before = cancelled_count(server)
    conn, resp = stream_request(server, {"prompt": "Once upon a time", "max_tokens": 900, "ignore_eos": True})
    assert len(read_events(resp, 5)) == 5
    hang_up(conn, resp)
    m = server.wait_idle(timeout=10)
    assert m["wisp_requests_running"] == 0 and m["wisp_kv_blocks_used"] == 0
    assert cancelled_count(server) == before + 1


def test_disconnect_while_waiting_for_a_whole_answer_cancels(server):
    before = cancelled_count(server)
    s = socket.create_connection(("127.0.0.1", server.port))
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": 900, "ignore_eos": True}).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
              str(len(body)).encode() + b"\r\n\r\n" + body)
    time.sleep(0.5)
    s.close()
    m = server.wait_idle(timeout=10)
    assert m["wisp_requests_running"] == 0 and m["wisp_kv_blocks_used"] == 0
    assert cancelled_count(server) == before + 1


def test_openai_stream_close_cancels(client, server):
    before = cancelled_count(server)
    stream = client.chat.completions.create(model="m", messages=QUESTION, max_tokens=900, stream=True,
                                            extra_body={"ignore_eos": True})
    got = 0
    for _ in stream:
        got += 1
        if got == 4:
            break
    stream.close()
    m = server.wait_idle(timeout=10)
    assert m["wisp_kv_blocks_used"] == 0
    assert cancelled_count(server) == before + 1


@pytest.fixture(scope="module")
def small_server(tmp_path_factory):
    s = start_server(tmp_path_factory, "serve-small", "--ctx", "512", "--parallel", "1", "--max-queue", "1")
    yield s
    s.stop()


def test_queue_full_is_503_with_retry_after(small_server):
    s = small_server
    long = {"prompt": "Once upon a time", "max_tokens": 400, "ignore_eos": True}
    a = stream_request(s, long)  # running
    b = stream_request(s, long)  # waiting
    r = s.post("/v1/completions", {"prompt": "Hi", "max_tokens": 2})
    assert r.status == 503, r.text
    assert r.headers.get("retry-after") == "1"
    assert r.json()["error"]["code"] == "queue_full"
    for conn, resp in (a, b):
        hang_up(conn, resp)
    assert s.wait_idle(timeout=10)["wisp_requests_running"] == 0
    assert s.post("/v1/completions", {"prompt": "Hi", "max_tokens": 2}).status == 200


def test_sigterm_with_requests_in_flight(tmp_path_factory):
    """SIGTERM with two requests running and two waiting (one streamed, one whole): exit 0 within
    a few seconds; every client gets an error, none hangs."""
    s = start_server(tmp_path_factory, "serve-stop", "--ctx", "512", "--parallel", "2")
    body = {"prompt": "Once upon a time", "max_tokens": 450, "ignore_eos": True}
    streams = [stream_request(s, body) for _ in range(3)]
    for _, resp in streams[:2]:
        assert len(read_events(resp, 2)) == 2  # running; the third one waits for a slot
    whole = {}
    waiting = threading.Thread(target=lambda: whole.setdefault("r", s.post("/v1/completions", body)))
    waiting.start()
    time.sleep(0.3)
    rc, seconds = s.stop()
    assert rc == 0, s.log_text()
    assert seconds < 5, seconds
    waiting.join(timeout=10)
    assert not waiting.is_alive()
    assert whole["r"].status == 503 and "shutting down" in whole["r"].json()["error"]["message"]
    for conn, resp in streams:
        events = resp.read().split(b"\n\n")
        assert events[-1] == b"" and events[-2] == b"data: [DONE]"
        assert b"shutting down" in events[-3]
        conn.close()


def test_sigint_when_started_with_it_ignored(tmp_path_factory):
    """A shell starts background jobs with SIGINT ignored; Ctrl-C's signal must still stop the server."""
    s = start_server(tmp_path_factory, "serve-int", "--ctx", "256", "--parallel", "1",
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert s.post("/v1/completions", {"prompt": "Hi", "max_tokens": 2}).status == 200
    rc, seconds = s.stop(signal.SIGINT)
    assert rc == 0 and seconds < 5, (rc, seconds, s.log_text())
