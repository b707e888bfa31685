"""Fixtures for the `wisp serve` tests: a server on a free loopback port, started from build/wisp
with the SmolLM2 model in models/, waited for through /health, and stopped with SIGTERM at the end
(which must exit 0 within a few seconds).

Skips every test when the binary or the model is missing (a checkout without scripts/setup)."""
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import http.client
import json

ROOT = Path(__file__).resolve().parents[2]
WISP = Path(os.environ.get("WISP_BINARY", ROOT / "build" / "wisp"))
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
THREADS = os.environ.get("WISP_SERVE_THREADS", "2")
CTX = 1024  # tokens per request in the main server (the over-context tests rely on it)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Reply:
    def __init__(self, status, headers, data):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.data = data

    @property
    def text(self):
        return self.data.decode("utf-8", errors="replace")

    def json(self):
        return json.loads(self.data)


class ServerProcess:
    def __init__(self, args, log_path, preexec_fn=None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.log = open(log_path, "wb")
        cmd = [str(WISP), "serve", "-m", str(MODEL), "--port", str(self.port), "-t", THREADS] + list(args)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
        deadline = time.time() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"wisp serve exited with {self.proc.returncode}:\n{self.log_text()}")
            try:
                if self.request("GET", "/health", timeout=1).status == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.proc.kill()
                raise RuntimeError("wisp serve did not become healthy in 60 s:\n" + self.log_text())
            time.sleep(0.05)

    def connect(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=60):
        """One request on a fresh connection (stdlib only). `body`: bytes, str, or JSON-able."""
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        conn = self.connect(timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return Reply(r.status, dict(r.getheaders()), r.read())
        finally:
            conn.close()

    def post(self, path, body, headers=None):
        return self.request("POST", path, body, {"Content-Type": "application/json", **(headers or {})})

    def log_text(self):
        self.log.flush()
        return Path(self.log_path).read_text(errors="replace")[-4000:]

    def stop(self, sig=signal.SIGTERM):
        """Sends `sig`; returns (exit code, seconds to exit)."""
        t0 = time.time()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode, time.time() - t0

    def metrics(self, headers=None):
        text = self.request("GET", "/metrics", headers=headers).text
        out = {}
        for line in text.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
        return out

    def wait_idle(self, timeout=30):
        """Waits until nothing runs or waits and no KV block is held; returns the last metrics."""
        deadline = time.time() + timeout
        while True:
            m = self.metrics()
            if m["wisp_requests_running"] == 0 and m["wisp_requests_waiting"] == 0 and m["wisp_kv_blocks_used"] == 0:
                return m
            if time.time() > deadline:
                return m
            time.sleep(0.05)


def _require():
    if not WISP.exists():
        pytest.skip(f"{WISP} is not built (./scripts/build)")
    if not MODEL.exists():
        pytest.skip(f"{MODEL} is missing (./scripts/setup fetches it)")


def start_server(tmp_path_factory, name, *args, preexec_fn=None):
    _require()
    log = tmp_path_factory.mktemp(name) / "serve.log"
    return ServerProcess(args, log, preexec_fn)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    s = start_server(tmp_path_factory, "serve", "--ctx", str(CTX), "--parallel", "8", "--max-queue", "64")
    yield s
    rc, seconds = s.stop()
    assert rc == 0, f"wisp serve exited with {rc}:\n{s.log_text()}"
    assert seconds < 6, f"wisp serve took {seconds:.1f} s to stop"


@pytest.fixture(scope="session")
def client(server):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=server.base + "/v1", api_key="unused", max_retries=0, timeout=120)


def run_wisp(prompt, n, *extra):
    """`wisp run` at temperature 0: the completion it prints (its trailing newline removed)."""
    out = subprocess.run([str(WISP), "run", "-m", str(MODEL), "-p", prompt, "-n", str(n), "--temp", "0", "-t", THREADS,
                          *extra], check=True, capture_output=True)
    text = out.stdout.decode("utf-8", errors="replace")
    assert text.endswith("\n")
    return text[:-1]
