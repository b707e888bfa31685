"""The same greedy request gives the same text and the same log-probabilities every time, alone or
among other requests: the engine is batch invariant (docs/engine.md), so nothing a request sees
may depend on what else runs in its steps, on a previous request's leftovers, or on thread timing."""
from concurrent.futures import ThreadPoolExecutor

COMP = "/v1/completions"
CHAT = "/v1/chat/completions"
# The prompt of an earlier report (one repeat once gave another logprob for its second token).
REQUEST = {"prompt": "The capital of France is", "max_tokens": 16, "temperature": 0, "logprobs": 5,
           "ignore_eos": True}
# Two full KV blocks and more: its repeats take those blocks from the prefix cache, which must
# give the logprobs computing them did.
LONG_REQUEST = {"prompt": "The capital of Italy is Rome, the capital of Spain is Madrid, and the capital of "
                          "Portugal is Lisbon. In the north, the capital of Norway is Oslo and the capital of Sweden is",
                "max_tokens": 8, "temperature": 0, "logprobs": 3}
CHAT_REQUEST = {"messages": [{"role": "user", "content": "Name three colours."}], "max_tokens": 8,
                "temperature": 0, "logprobs": True, "top_logprobs": 3}
# Different requests to share the steps with: other prompts and lengths, sampled and greedy.
OTHERS = [
    {"prompt": "Once upon a time", "max_tokens": 24, "temperature": 0.8, "seed": 7},
    {"prompt": "def fibonacci(n):", "max_tokens": 20, "temperature": 0},
    {"prompt": "One two three four five six seven eight nine ten " * 8, "max_tokens": 12, "temperature": 0},
    {"prompt": "The capital of France is", "max_tokens": 8, "temperature": 1.2, "seed": 3, "n": 2},
]


def answer(server, path, body):
    r = server.post(path, body)
    assert r.status == 200, r.text
    c = r.json()["choices"][0]
    if path == COMP:
        lp = c["logprobs"]
        return c["text"], lp["tokens"], lp["token_logprobs"], lp["top_logprobs"]
    content = c["logprobs"]["content"]
    return (c["message"]["content"], [e["token"] for e in content], [e["logprob"] for e in content],
            [[(t["token"], t["logprob"]) for t in e["top_logprobs"]] for e in content])


def assert_same(first, got, what):
    assert got[0] == first[0], f"{what}: text {got[0]!r} != {first[0]!r}"
    assert got[1] == first[1], f"{what}: tokens differ"
    for i, (a, b) in enumerate(zip(first[2], got[2])):
        assert a == b, f"{what}: logprob of token {i} ({first[1][i]!r}) is {b!r}, was {a!r}"
    assert got[3] == first[3], f"{what}: top logprobs differ"


def test_repeated_greedy_logprobs_are_identical(server):
    first = answer(server, COMP, REQUEST)
    first_long = answer(server, COMP, LONG_REQUEST)
    assert len(first[1]) == 16
    for i in range(13):  # with the concurrent copies below, 20 answers in all
        assert_same(first, answer(server, COMP, REQUEST), f"sequential repeat {i + 1}")
    assert_same(first_long, answer(server, COMP, LONG_REQUEST), "long prompt from the prefix cache")
    # Among others: each round runs two copies, the long prompt and the other requests at once, so
    # the copies share steps with each other and with prompts being prefilled and answers decoded.
    with ThreadPoolExecutor(len(OTHERS) + 3) as pool:
        for rnd in range(3):
            mine = [pool.submit(answer, server, COMP, REQUEST) for _ in range(2)]
            long = pool.submit(answer, server, COMP, LONG_REQUEST)
            others = [pool.submit(server.post, COMP, body) for body in OTHERS]
            for j, f in enumerate(mine):
                assert_same(first, f.result(), f"concurrent round {rnd + 1}, copy {j + 1}")
            assert_same(first_long, long.result(), f"long prompt, concurrent round {rnd + 1}")
            for f in others:
                assert f.result().status == 200


def test_repeated_greedy_chat_logprobs_are_identical(server):
    first = answer(server, CHAT, CHAT_REQUEST)
    assert_same(first, answer(server, CHAT, CHAT_REQUEST), "sequential repeat")
    with ThreadPoolExecutor(len(OTHERS) + 1) as pool:
        mine = pool.submit(answer, server, CHAT, CHAT_REQUEST)
        others = [pool.submit(server.post, COMP, body) for body in OTHERS]
        assert_same(first, mine.result(), "among others")
        for f in others:
            assert f.result().status == 200
