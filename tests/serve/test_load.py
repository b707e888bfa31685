"""The load test with the real openai client: 64 concurrent clients for WISP_SERVE_LOAD_SECONDS
(default 60; bench/serve_bench is the long, measured version) with mixed endpoints, prompt lengths
and answer lengths, a quarter of them hanging up mid-stream. Every other request completes
well-formed; at the end nothing runs or waits and no KV block is held (cached prefix blocks
allowed); the server's resident memory, sampled through the run, does not grow from the first
quarter to the last."""
import os
import random
import threading
import time

import pytest

CLIENTS = 64
SECONDS = float(os.environ.get("WISP_SERVE_LOAD_SECONDS", "60"))
# Growth allowed between the first and the last quarter's peak resident memory: allocator noise
# (a few arenas' high-water marks) and, for all resident memory, the model's token-embedding rows
# read for the first time; not a leak of a request's buffers, which would grow with the hundreds
# of requests served in between. The KV pool is committed at start (wisp serve), so it does not
# count as growth.
ANON_SLACK_MIB = 8
RSS_SLACK_MIB = 16

WORDS = ("the quick brown fox jumps over a lazy dog while seven wizards quietly hum old songs about "
         "rivers mountains and the long road home").split()


def prompt_text(rng):
    n = rng.choice([3, 8, 20, 40, 80, 150])
    return " ".join(rng.choice(WORDS) for _ in range(n))


def rss_mib(pid):
    """(resident, anonymous resident) MiB: VmRSS and RssAnon, which leaves out the mapped model's
    pages (they grow while new token-embedding rows are first read, bounded by the file)."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                fields[key] = int(rest.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("RssAnon", 0.0)


def test_load(server):
    openai = pytest.importorskip("openai")
    before = server.metrics()
    rss_start = rss_mib(server.proc.pid)[0]
    deadline = time.time() + SECONDS
    lock = threading.Lock()
    stats = {"completed": 0, "hung_up": 0, "tokens": 0, "errors": []}

    def record(key, n=1):
        with lock:
            stats[key] += n

    def client_loop(k):
        rng = random.Random(k)
        client = openai.OpenAI(base_url=server.base + "/v1", api_key="x", max_retries=0, timeout=120)
        disconnector = k % 4 == 0
        while time.time() < deadline:
            max_tokens = rng.randint(4, 24)
            sampling = dict(temperature=0) if rng.random() < 0.5 else dict(temperature=0.8, seed=rng.randint(0, 1 << 30))
            chat = rng.random() < 0.5
            try:
                if disconnector:
                    # Hang up after a few chunks of a long answer.
                    keep = rng.randint(1, 6)
                    if chat:
                        stream = client.chat.completions.create(
                            model="m", messages=[{"role": "user", "content": prompt_text(rng)}], max_tokens=300,
                            stream=True, extra_body={"ignore_eos": True}, **sampling)
                    else:
                        stream = client.completions.create(model="m", prompt=prompt_text(rng), max_tokens=300,
                                                           stream=True, extra_body={"ignore_eos": True}, **sampling)
                    for i, _ in enumerate(stream):
                        if i + 1 >= keep:
                            break
                    stream.close()
                    record("hung_up")
                    continue
                stream = rng.random() < 0.5
                if chat:
                    messages = [{"role": "user", "content": prompt_text(rng)}]
                    if stream:
                        chunks = list(client.chat.completions.create(model="m", messages=messages, max_tokens=max_tokens,
                                                                     stream=True, stream_options={"include_usage": True},
                                                                     **sampling))
                        reasons = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
                        usage = chunks[-1].usage
                    else:
                        r = client.chat.completions.create(model="m", messages=messages, max_tokens=max_tokens, **sampling)
                        reasons = [r.choices[0].finish_reason]
                        usage = r.usage
                else:
                    prompt = prompt_text(rng)
                    if stream:
                        chunks = list(client.completions.create(model="m", prompt=prompt, max_tokens=max_tokens,
                                                                stream=True, stream_options={"include_usage": True},
                                                                **sampling))
                        reasons = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
                        usage = chunks[-1].usage
                    else:
                        r = client.completions.create(model="m", prompt=prompt, max_tokens=max_tokens, **sampling)
                        reasons = [r.choices[0].finish_reason]
                        usage = r.usage
                assert len(reasons) == 1 and reasons[0] in ("stop", "length"), reasons
                assert usage is not None and 1 <= usage.completion_tokens <= max_tokens
                if reasons[0] == "length":
                    assert usage.completion_tokens == max_tokens
                record("completed")
                record("tokens", usage.completion_tokens)
            except Exception as e:  # noqa: BLE001 - every failure is reported below
                with lock:
                    stats["errors"].append(f"client {k}: {type(e).__name__}: {e}")

    samples = []  # (seconds since start, RSS MiB), every 0.25 s while the clients run
    sampling_done = threading.Event()

    def sample_rss():
        while not sampling_done.wait(0.25):
            samples.append((time.time() - t0, rss_mib(server.proc.pid)))

    threads = [threading.Thread(target=client_loop, args=(k,)) for k in range(CLIENTS)]
    t0 = time.time()
    sampler = threading.Thread(target=sample_rss)
    sampler.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=SECONDS + 180)
    sampling_done.set()
    sampler.join()
    elapsed = time.time() - t0
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert not stats["errors"], stats["errors"][:5]
    assert stats["completed"] >= CLIENTS // 2
    assert stats["hung_up"] >= 4

    after = server.wait_idle(timeout=30)
    assert after["wisp_requests_running"] == 0
    assert after["wisp_requests_waiting"] == 0
    assert after["wisp_kv_blocks_used"] == 0
    assert after["wisp_kv_blocks_free"] + after["wisp_kv_blocks_cached"] == after["wisp_kv_blocks_total"]
    cancelled = (after['wisp_requests_finished_total{reason="cancelled"}'] -
                 before['wisp_requests_finished_total{reason="cancelled"}'])
    assert 1 <= cancelled <= stats["hung_up"]
    assert after["wisp_time_to_first_token_seconds_count"] > before["wisp_time_to_first_token_seconds_count"]
    assert after.get('wisp_http_responses_total{code="500"}', 0) == 0
    rss_end = rss_mib(server.proc.pid)[0]
    first = [m for t, m in samples if t < SECONDS / 4]
    last = [m for t, m in samples if SECONDS * 3 / 4 <= t < SECONDS]
    assert first and last, "too few resident-memory samples"
    peak = lambda ms, i: max(m[i] for m in ms)
    print(f"\nload: {stats['completed']} completed, {stats['hung_up']} hung up ({int(cancelled)} cancelled), "
          f"{stats['tokens']} tokens in {elapsed:.1f} s ({stats['tokens'] / elapsed:.0f} tok/s of completed answers); "
          f"preemptions {int(after['wisp_preemptions_total'] - before['wisp_preemptions_total'])}; "
          f"RSS {rss_start:.0f} at start, peak {peak(first, 0):.0f} in the first quarter, {peak(last, 0):.0f} in the last, "
          f"{rss_end:.0f} at the end; anonymous: peak {peak(first, 1):.0f} first quarter, {peak(last, 1):.0f} last (MiB)")
    assert peak(last, 1) <= peak(first, 1) + ANON_SLACK_MIB, \
        f"anonymous memory grew from {peak(first, 1):.0f} MiB (first quarter's peak) to {peak(last, 1):.0f} MiB (last quarter's)"
    assert peak(last, 0) <= peak(first, 0) + RSS_SLACK_MIB, \
        f"resident memory grew from {peak(first, 0):.0f} MiB (first quarter's peak) to {peak(last, 0):.0f} MiB (last quarter's)"
