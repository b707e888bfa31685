"""Two `wisp serve` replicas behind HAProxy on loopback, configured as docs/deploy.md shows
(least connections, HTTP health checks on /health): requests spread over both; a replica killed
with SIGKILL in the middle of streamed answers cuts its own streams (an error in bounded time,
never a hang) while the other replica's streams finish, and once the health check has marked it
down every new request is served by the survivor. At the end HAProxy and the survivor stop
cleanly and the survivor holds no request and no KV block.

Skipped when HAProxy is not installed (scripts/setup installs Debian's package)."""
import concurrent.futures as cf
import csv
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import free_port, start_server

HAPROXY = shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy")
                                            if os.access(p, os.X_OK)), None)

# The configuration docs/deploy.md explains, with test-sized timeouts and fast health checks.
CONFIG = """\
global
    stats socket {sock} mode 600 level admin

defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout tunnel 30s
    timeout http-request 10s
    timeout queue 10s
    option http-no-delay
    retries 2
    option redispatch 1
    retry-on conn-failure empty-response

frontend wisp_api
    bind 127.0.0.1:{port}
    default_backend wisp
    http-response set-header X-Wisp-Replica %[srv_name]

backend wisp
    balance leastconn
    option httpchk GET /health
    http-check expect status 200
    default-server check inter 200ms fall 2 rise 1
{servers}
"""

STREAM_TOKENS = 128  # per long streamed answer (ignore_eos), a few seconds on a busy 2-core machine
STREAMS = 4          # long streams, two per replica under leastconn
SHORT = 16           # short requests over both replicas


class HAProxy:
    def __init__(self, directory, servers):
        self.port = free_port()
        self.sock = directory / "haproxy.sock"
        self.sock_dir = None
        if len(str(self.sock)) > 100:  # a unix socket's path has to fit in 108 bytes
            self.sock_dir = tempfile.mkdtemp(prefix="wisp-haproxy-")
            self.sock = Path(self.sock_dir) / "haproxy.sock"
        self.cfg = directory / "haproxy.cfg"
        lines = "\n".join(f"    server {name} 127.0.0.1:{s.port}" for name, s in servers.items())
        self.cfg.write_text(CONFIG.format(sock=self.sock, port=self.port, servers=lines))
        self.log_path = directory / "haproxy.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([HAPROXY, "-f", str(self.cfg), "-db"], stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stats(self):
        """`show stat` on the admin socket: {server name: row} for the backend's servers."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(str(self.sock))
            s.sendall(b"show stat\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        rows = csv.DictReader(data.decode().lstrip("# ").splitlines())
        return {r["svname"]: r for r in rows if r["pxname"] == "wisp" and r["svname"] not in ("BACKEND", "FRONTEND")}

    def wait_for(self, want, timeout=15):
        """Waits until each named server's status is the wanted one ("UP" after a passed check)."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"haproxy exited with {self.proc.returncode}:\n{self.log_text()}")
            try:
                last = self.stats()
                if all(last[n]["status"] == st and (st != "UP" or last[n]["check_status"] == "L7OK")
                       for n, st in want.items()):
                    return last
            except OSError:
                pass
            time.sleep(0.05)
        seen = {n: (r["status"], r["check_status"]) for n, r in (last or {}).items()}
        raise AssertionError(f"haproxy servers not {want} after {timeout} s: {seen}\n{self.log_text()}")

    def stop(self, sig=signal.SIGUSR1):
        """SIGUSR1 is HAProxy's soft stop: it stops listening and exits 0 once its connections are
        done (SIGTERM would kill it at once). Returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if self.sock_dir is not None:
            shutil.rmtree(self.sock_dir, ignore_errors=True)
        return self.proc.returncode


def finished(server):
    """Generation requests the replica has finished, for any reason."""
    return sum(v for k, v in server.metrics().items() if k.startswith("wisp_requests_finished_total"))


def short_request(client, i):
    """One short greedy chat answer through the proxy; returns the replica that served it."""
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": f"Say a number bigger than {i}."}], max_tokens=6,
        temperature=0)
    answer = raw.parse()
    assert answer.choices[0].finish_reason in ("stop", "length")
    assert answer.usage.completion_tokens > 0
    return raw.headers["x-wisp-replica"]


class Stream(threading.Thread):
    """A long streamed completion through the proxy, read to its end or its error."""

    def __init__(self, client, i):
        super().__init__(daemon=True)
        self.client, self.i = client, i
        self.replica = None
        self.started = threading.Event()  # headers and two chunks received (or it failed first)
        self.chunks = 0
        self.finish_reason = None
        self.usage = None
        self.error = None
        self.seconds_after_kill = None
        self.kill_time = None

    def run(self):
        try:
            raw = self.client.completions.with_raw_response.create(
                model="m", prompt=f"Story number {self.i}: once upon a time", max_tokens=STREAM_TOKENS,
                temperature=0, stream=True, stream_options={"include_usage": True}, extra_body={"ignore_eos": True})
            self.replica = raw.headers.get("x-wisp-replica")
            for chunk in raw.parse():
                if chunk.usage is not None:
                    self.usage = chunk.usage
                for c in chunk.choices:
                    self.chunks += 1
                    if c.finish_reason is not None:
                        self.finish_reason = c.finish_reason
                if self.chunks >= 2:
                    self.started.set()
        except Exception as e:  # noqa: BLE001 -- any clean error is what a cut stream must give
            self.error = e
        finally:
            if self.kill_time is not None:
                self.seconds_after_kill = time.time() - self.kill_time
            self.started.set()

    def completed(self):
        return (self.error is None and self.finish_reason == "length" and self.usage is not None
                and self.usage.completion_tokens == STREAM_TOKENS)


@pytest.mark.skipif(HAPROXY is None, reason="haproxy is not installed (scripts/setup installs Debian's haproxy)")
def test_two_replicas_behind_haproxy(tmp_path_factory, monkeypatch):
    openai = pytest.importorskip("openai")
    # One forward-pass thread per replica: two replicas share this machine's cores, as two
    # replicas pinned to their own core sets would (docs/deploy.md).
    monkeypatch.setitem(start_server.__globals__, "THREADS", "1")
    replicas, proxy, streams = {}, None, []
    try:
        for name in ("r1", "r2"):
            replicas[name] = start_server(tmp_path_factory, f"deploy-{name}", "--ctx", "512", "--parallel", "4",
                                          "--max-queue", "16", "--quiet")
        proxy = HAProxy(tmp_path_factory.mktemp("haproxy"), replicas)
        proxy.wait_for({"r1": "UP", "r2": "UP"})
        client = openai.OpenAI(base_url=proxy.base + "/v1", api_key="unused", max_retries=0, timeout=30)

        # 1. Short requests, four at a time: least connections spreads them over both replicas.
        before = {n: finished(s) for n, s in replicas.items()}
        with cf.ThreadPoolExecutor(4) as pool:
            served = list(pool.map(lambda i: short_request(client, i), range(SHORT), timeout=120))
        counts = {n: served.count(n) for n in replicas}
        assert sum(counts.values()) == SHORT, served
        assert min(counts.values()) >= SHORT // 4, f"requests not spread over both replicas: {counts}"
        for n, s in replicas.items():  # each replica's own counters agree with what the proxy says
            assert finished(s) - before[n] == counts[n], n

        # 2. Long streams at once: least connections puts two on each replica.
        before_r2 = finished(replicas["r2"])
        streams = [Stream(client, i) for i in range(STREAMS)]
        for st in streams:
            st.start()
        for st in streams:
            assert st.started.wait(60), f"stream {st.i} did not start"
            assert st.error is None, f"stream {st.i} failed before the kill: {st.error!r}"
        on = {n: [st for st in streams if st.replica == n] for n in replicas}
        assert len(on["r1"]) == len(on["r2"]) == STREAMS // 2, {n: len(v) for n, v in on.items()}
        assert all(st.finish_reason is None for st in streams), "a stream ended before the kill"

        # SIGKILL r1 with its streams in flight.
        kill_time = time.time()
        for st in streams:
            st.kill_time = kill_time
        replicas["r1"].proc.send_signal(signal.SIGKILL)
        replicas["r1"].proc.wait(timeout=10)

        # The health check marks it down within a few intervals.
        proxy.wait_for({"r1": "DOWN", "r2": "UP"}, timeout=10)
        down_after = time.time() - kill_time

        # 3. New requests while r2's streams still run: all succeed, all on r2.
        with cf.ThreadPoolExecutor(3) as pool:
            served_after = list(pool.map(lambda i: short_request(client, 100 + i), range(6), timeout=120))
        assert served_after == ["r2"] * 6, served_after

        for st in streams:
            st.join(60)
            assert not st.is_alive(), f"stream {st.i} on {st.replica} still open 60 s after the kill (hang)"
        for st in on["r1"]:  # cut: an error (or an end without its finish), promptly
            assert not st.completed(), f"stream {st.i} on the killed replica completed"
            assert st.seconds_after_kill < 10, f"stream {st.i} took {st.seconds_after_kill:.1f} s to fail"
        for st in on["r2"]:
            assert st.completed(), (f"stream {st.i} on the survivor: error {st.error!r}, finish {st.finish_reason}, "
                                    f"usage {st.usage}")
        assert finished(replicas["r2"]) - before_r2 == len(on["r2"]) + 6

        # 4. A client that hangs up through the proxy cancels its request on the replica.
        cancelled = replicas["r2"].metrics().get('wisp_requests_finished_total{reason="cancelled"}', 0)
        stream = client.completions.create(model="m", prompt="A long story:", max_tokens=400, stream=True,
                                           extra_body={"ignore_eos": True})
        for _ in zip(range(2), stream):
            pass
        stream.close()
        deadline = time.time() + 15
        while replicas["r2"].metrics().get('wisp_requests_finished_total{reason="cancelled"}', 0) == cancelled:
            assert time.time() < deadline, "a hang-up through HAProxy did not cancel the request"
            time.sleep(0.05)

        m = replicas["r2"].wait_idle()
        assert m["wisp_requests_running"] == 0 and m["wisp_requests_waiting"] == 0, m
        assert m["wisp_kv_blocks_used"] == 0, m
        cut = [f"{type(st.error).__name__} ({st.error.__cause__ or st.error}) after {st.seconds_after_kill:.2f} s"
               for st in on["r1"]]
        print(f"\nshort requests per replica {counts}; r1 marked down {down_after:.2f} s after SIGKILL; cut: {cut}")
        client.close()

        rc = proxy.stop()
        log = proxy.log_text()
        proxy = None
        assert rc == 0, f"haproxy exited with {rc}:\n{log}"
        rc, seconds = replicas.pop("r2").stop()
        assert rc == 0 and seconds < 6, f"survivor exited with {rc} after {seconds:.1f} s"
    finally:
        if proxy is not None:
            proxy.stop(signal.SIGKILL)
        for s in replicas.values():
            if s.proc.poll() is None:
                s.proc.kill()
            s.stop()
