"""Building positions for tests without playing every move."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import signal
import socket
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from jericho_game.game import Game
from jericho_game.pieces import PIECES

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection


def _reserve_text(pieces: list[str]) -> str:
    out = []
    for size in "12345":
        colours = "".join(p[1] for p in pieces if p[0] == size)
        if colours:
            out.append(size + colours)
    return "".join(out) or "-"


def position_with(
    towers: dict[str, str],
    turn: str = "south",
    last: str | None = None,
    passes: int = 0,
    taken_first_from: str = "south",
) -> str:
    """A position text with these towers (cell -> pieces bottom to top, e.g. ``"1G2Y"``).

    Each piece on the board is taken out of ``taken_first_from``'s reserve when that
    side still has it, else out of the other side's.
    """
    reserves = {"south": [str(p) for p in PIECES], "north": [str(p) for p in PIECES]}
    other = "north" if taken_first_from == "south" else "south"
    items = []
    for cell, pieces in towers.items():
        if not pieces:
            continue
        items.append(f"{cell}:{pieces}")
        for i in range(0, len(pieces), 2):
            p = pieces[i : i + 2]
            side = taken_first_from if p in reserves[taken_first_from] else other
            reserves[side].remove(p)
    return " ".join(
        [
            ",".join(items) or "-",
            _reserve_text(reserves["south"]),
            _reserve_text(reserves["north"]),
            turn,
            last or "-",
            str(passes),
            "*",
        ]
    )


def spread_all_pieces(cells: list[str]) -> dict[str, str]:
    """All 25 pieces on 10 of ``cells`` with no clash: Latin-square groups split 4 + 1."""
    groups = [[f"{s + 1}{'RYGBW'[(s + j) % 5]}" for s in range(5)] for j in range(5)]
    out: dict[str, str] = {}
    i = 0
    for g in groups:
        for chunk in (g[:4], g[4:]):
            out[cells[i]] = "".join(chunk)
            i += 1
    return out


def random_games(n: int, seed: int = 0, max_plies: int = 60) -> list[Game]:
    """``n`` games of random legal moves, each stopped after a random number of plies below ``max_plies``."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        g = Game()
        for _ in range(rng.randrange(0, max_plies)):
            moves = g.legal_moves()
            if not moves:
                break
            g.play(rng.choice(moves))
        out.append(g)
    return out


def load_example(name: str) -> ModuleType:
    """The script ``examples/NAME.py`` as a module (the examples are not a package)."""
    path = Path(__file__).resolve().parents[1] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def start_in_thread(srv: Any) -> tuple[threading.Thread, socket.socket]:
    """Start the uvicorn server ``srv`` in a daemon thread on a loopback socket bound here and
    handed to it, so that no other process can take its port between choosing it and binding it
    (a flaky CI: "address already in use"); the thread and the socket (its port:
    ``getsockname()[1]``; close it after the server stops)."""
    sock = reserve_port()  # bound here, listened on by the server
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    return thread, sock


def reserve_port() -> socket.socket:
    """A loopback port held for a server that another process will start: a socket bound to it
    with ``SO_REUSEADDR`` and never listening, so that no other socket can be bound to it (nor
    can an outgoing connection take it as its own port) while the holder is open, yet a server
    binding it with ``SO_REUSEADDR`` (uvicorn, asyncio's ``create_server`` and aiosmtpd all do)
    can still listen on it; until one does, connections to it are refused.  Close the holder
    (its port: ``getsockname()[1]``) when the server has stopped.  Choosing a free port and
    closing it before the server binds it lets another process take it in between (a flaky CI:
    "address already in use")."""
    hold = socket.socket()
    hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    hold.bind(("127.0.0.1", 0))
    return hold


def child_pids(pid: int) -> set[int]:
    """The processes whose parent is ``pid``, read from Linux's /proc (none where it has none)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone while we looked
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def still_alive(pids: set[int], seconds: float = 60) -> set[int]:
    """Those of ``pids`` still alive after waiting up to ``seconds`` for them all to end (a stopped
    run's workers, which end at once unless something left them playing on); each killed then, so
    a failing test leaves nothing running."""

    def running(pid: int) -> bool:  # a zombie (ended, not yet reaped by whoever adopted it) is not
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + seconds
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = {pid for pid in pids if running(pid)}
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    return alive


def match_score(wins: int, draws: int, losses: int) -> tuple[float, float, float]:
    """A match's score (a draw is half a point) and its 95% interval, (score, low, high).

    The interval is the normal one over the games' own spread of 1, 1/2 and 0, the figure the
    docs quote beside a kept match (the arena's Elo interval is a fit over every pairing).
    """
    n = wins + draws + losses
    score = (wins + draws / 2) / n
    var = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score**2) / n
    half = 1.96 * math.sqrt(var / n)
    return score, score - half, score + half


def flat_text(path: Path, bold: bool = True) -> str:
    """A document's text with every run of whitespace made one space, so a test finds a sentence
    however the document wraps it; ``bold=False`` also drops Markdown's ``**`` marks, so a table
    row is found whether or not the docs set it in bold."""
    text = " ".join(path.read_text(encoding="utf-8").split())
    return text if bold else text.replace("**", "")


def journal_games(folder: Path) -> list[dict[str, Any]]:
    """The finished games of a kept arena run: its ``--out`` folder's journal, one dict a line."""
    return [json.loads(line) for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def kept_match(path: Path, games: int = 200) -> dict[str, Any]:
    """The one pairing of a kept arena summary (``--json`` with each game's moves removed), checked
    to be what a strength claim needs: every game finished, none forfeited, the seed its file name
    ends with, and both sides at equal time (within 5%, no time warning).  The pairing comes back
    with each side's mean and longest time a move (``mean_time_a``, ``max_time_b``, ...)."""
    summary = json.loads(path.read_text(encoding="utf-8"))
    pairing, times = summary["pairings"][0], summary["pairing_times"][0]
    assert "games" not in summary  # the moves are not kept, only the summary
    assert pairing["games"] == summary["finished_games"] == games and not summary["forfeits"]
    assert summary["seed"] == int(path.stem.rsplit("-", 1)[1])
    a, b = times["mean_time_a"], times["mean_time_b"]
    assert abs(a - b) / max(a, b) < 0.05 and not summary["time_warnings"]  # equal time
    assert (pairing["a"], pairing["b"]) == (times["a"], times["b"])
    return {**pairing, **times}


def kept_journal(
    folder: Path,
    games: int,
    opponent: str = "master-v2",
    longest: float = 1.05,
    seconds: float = 1.0,
    planned: int = 400,
) -> tuple[dict[str, Any], tuple[int, int, int], float, float]:
    """An arena run at ``seconds`` a move (1 s, 400 games planned unless said) kept whole (its
    ``--out`` folder, a resumable journal) against ``opponent``: its settings, the tally of its
    first ``games`` games (both sides of each opening) and each side's mean time a move, checked to
    be what a strength claim needs (no game lost to an error, no move over ``longest`` seconds
    (just above the limit, or where the docs say which move took longer), both sides at equal
    time within 5%)."""
    settings = json.loads((folder / "arena.json").read_text(encoding="utf-8"))
    assert settings["time"] == seconds and settings["games"] == planned and settings["players"][1] == opponent
    assert settings["seed"] == int(folder.name.rsplit("-", 1)[1])
    rows = journal_games(folder)
    assert sorted(game["index"] for game in rows) == list(range(games))
    wins = draws = losses = 0
    time = {"ours": 0.0, opponent: 0.0}
    moves = {"ours": 0, opponent: 0}
    for game in rows:
        assert game["error"] is None and {game["south"], game["north"]} == set(settings["players"])
        ours = "south" if game["south"] != opponent else "north"
        for side in ("south", "north"):
            who = opponent if game[side] == opponent else "ours"
            time[who] += game[f"time_{side}"]
            moves[who] += game[f"moves_{side}"]
            assert game[f"max_{side}"] <= longest  # the time a move, kept
        wins += game["result"] == ours
        draws += game["result"] == "draw"
        losses += game["result"] not in (ours, "draw")
    ours_time, theirs_time = time["ours"] / moves["ours"], time[opponent] / moves[opponent]
    assert abs(ours_time - theirs_time) / max(ours_time, theirs_time) < 0.05  # equal time
    return settings, (wins, draws, losses), ours_time, theirs_time


def open_ws(url: str, **options: Any) -> ClientConnection:
    """A WebSocket client connection the caller keeps open beyond one ``with`` block and closes
    itself.  websockets 17.1 deprecated ``connect()`` outside ``with``; entering it here (its
    ``__exit__`` only closes) says the caller owns the connection, so no test needs to hide the
    warning."""
    from websockets.sync.client import connect

    return connect(url, **options).__enter__()


# -- wall-clock checks on a loaded machine ---------------------------------------------------
def slowdown(probe: float = 0.03) -> float:
    """How much slower than on an idle core this process runs now: the wall time over the CPU time
    of a fixed busy loop (``probe`` CPU seconds).  1.0 on an idle core, about 1.5 with three
    busy processes on two cores, 2 with four.  The same-run baseline that the wall-clock checks
    (marker ``timing``) scale their margins by: it measures the machine, never the code under test."""
    wall, cpu = time.perf_counter(), time.thread_time()
    while time.thread_time() - cpu < probe:
        pass
    return max(1.0, (time.perf_counter() - wall) / (time.thread_time() - cpu))


class Load:
    """The machine's :func:`slowdown` around a timed part, measured before and after it: ``with
    Load() as load: ...`` then ``load.factor``, the larger of the two (a load that came or went
    during the part counts).  A margin ``m`` of a wall-clock bound becomes ``m * load.factor``."""

    def __init__(self) -> None:
        self.before = self.after = 1.0

    def __enter__(self) -> Load:
        self.before = slowdown()
        return self

    def __exit__(self, *exc: object) -> None:
        self.after = slowdown()

    @property
    def factor(self) -> float:
        return max(self.before, self.after)

    def measure(self) -> float:
        """The factor with the load measured once more now (inside the ``with`` block)."""
        self.after = max(self.after, slowdown())
        return self.factor
