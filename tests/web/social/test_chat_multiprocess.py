"""The games' chat across two real ``jericho serve`` processes on one PostgreSQL (issue 23, point 4):
a player's message posted through one process reaches the opponent on the other, in the same
order everywhere; a watcher never reads the players' chat during the game; the rate limit counts
an author's messages across both processes (the database is the truth, not a process's memory)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tests.web import test_multiprocess
from tests.web.test_multiprocess import Client, Server

pg = test_multiprocess.pg
servers = test_multiprocess.servers


def collect(c: Client, kind: str, n: int, timeout: float = 15.0) -> list[dict[str, Any]]:
    """The next ``n`` messages of type ``kind`` that reach ``c``."""
    got: list[dict[str, Any]] = []
    end = time.monotonic() + timeout
    while len(got) < n:
        left = end - time.monotonic()
        assert left > 0, f"timed out waiting for {kind}: got {got}, errors {c.errors[-3:]}"
        msg = c.pump(left)
        if msg is not None and msg["type"] == kind:
            got.append(msg)
    return got


def flush(c: Client, timeout: float = 15.0) -> list[dict[str, Any]]:
    """The chat messages that reach ``c`` before the answer to a ping."""
    c.send(type="ping", ref="flush")
    got = []
    end = time.monotonic() + timeout
    while True:
        msg = c.pump(max(0.01, end - time.monotonic()))
        assert time.monotonic() < end, "no pong"
        if msg is None:
            continue
        if msg["type"] == "chat":
            got.append(msg)
        if msg["type"] == "pong" and msg.get("ref") == "flush":
            return got


def test_players_chat_crosses_processes_and_watchers_do_not_read_it(pg: str, servers: Callable[..., Server]) -> None:
    s1, s2 = servers(pg), servers(pg)
    g = s1.post("/api/games", {"mode": "online", "public": True, "name": "Ada", "side": "south"}).json()
    j = s2.post(f"/api/games/{g['id']}/join", {"name": "Brice"}).json()
    a = Client(s1.ws(g["id"]), g["token"])  # South on process 1
    b = Client(s2.ws(g["id"]), j["token"])  # North on process 2
    w = Client(s2.ws(g["id"]))  # a watcher on process 2
    a.wait(lambda st: st["seats"]["north"]["present"])
    a.send(type="chat", text="<b>hello</b> from 1")
    got = collect(b, "chat", 1)[0]
    assert got["author"] == "Ada" and got["side"] == "south" and got["text"] == "<b>hello</b> from 1"
    b.send(type="chat", text="hi from 2")
    assert [m["text"] for m in collect(a, "chat", 2)] == ["<b>hello</b> from 1", "hi from 2"]
    assert flush(w) == []  # process 2 sent b the players' chat, and its watcher nothing
    # both write at once: every reader gets the messages in one order, the stored one
    for i in range(3):
        a.send(type="chat", text=f"a{i}")
        b.send(type="chat", text=f"b{i}")
    seen_a = [m["seq"] for m in collect(a, "chat", 6)]
    seen_b = [m["seq"] for m in collect(b, "chat", 7)]  # its own "hi from 2" first
    assert seen_a == list(range(3, 9)) and seen_b == list(range(2, 9))  # no gap, no repeat, one order
    # North mutes South through process 2: North's other tab, on process 1, reads the mute from the database
    b1 = Client(s1.ws(g["id"]), j["token"])
    b.send(type="chat_mute", mute=True)
    collect(b, "chat_mute", 1)
    a.send(type="chat", text="can you hear me?")
    assert collect(a, "chat", 1)[0]["text"] == "can you hear me?"
    assert flush(b1) == [] and flush(b) == []


def test_the_rate_limit_counts_an_author_on_every_process(pg: str, servers: Callable[..., Server]) -> None:
    s1, s2 = servers(pg), servers(pg)
    g = s1.post("/api/games", {"mode": "online", "public": True, "name": "Ada", "side": "south"}).json()
    j = s2.post(f"/api/games/{g['id']}/join", {"name": "Brice"}).json()
    a1 = Client(s1.ws(g["id"]), g["token"])  # South's two tabs, one on each process
    a2 = Client(s2.ws(g["id"]), g["token"])
    b = Client(s2.ws(g["id"]), j["token"])
    for i in range(5):
        (a1 if i % 2 else a2).send(type="chat", text=f"m{i}")
        collect(b, "chat", 1)
    a1.send(type="chat", text="one too many")
    assert a1.answer()["code"] == "rate_limited"
    a2.send(type="chat", text="one too many")
    assert a2.answer()["code"] == "rate_limited"
    assert flush(b) == []
