"""``jericho loadtest``: many hot-seat games played at once against web servers, and what it costs.

Each game is one WebSocket client that plays a random legal move as soon as it sees the state
(at most ``--pace`` a second), sending the ply it saw; a move's latency runs from sending it to
receiving the state that holds it (the acknowledgement and the broadcast).  A finished game asks
for a rematch and goes on.  The figures cover the steady state: from the moment every game has
had a move acknowledged to the end.  The generator costs as little CPU as it can, since it shares
the machine with the servers it measures: it reads a state without its position and draws its
move from its own replay of the game on the engine.

Without ``--url`` the command starts its own servers (``--servers N`` processes of ``jericho
serve`` on one database, SQLite in a temporary folder unless ``--db`` names one) and reports
their CPU time; with ``--url`` (several, comma-separated) it measures servers that run already.
Everything is bounded: ``--seconds`` is at most 300, and the servers it started are stopped.
``--moves N`` ends each game's part after N acknowledged moves instead (within ``--seconds``): a
run of a known amount of work whatever the machine's speed, which the tests use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from jericho_game.game import Game

__all__ = ["add_arguments", "run", "play_games"]


def add_arguments(parser: argparse.ArgumentParser, name: str = "loadtest") -> None:
    """Options of ``jericho loadtest``."""
    parser.add_argument("--games", type=int, default=200, help="games played at once (default 200)")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to measure (default 20, at most 300)")
    parser.add_argument(
        "--moves",
        type=int,
        default=None,
        help="end each game after this many acknowledged moves (still within --seconds; default: play --seconds)",
    )
    parser.add_argument("--url", default=None, help="server(s) to measure, comma-separated (default: start them)")
    parser.add_argument("--servers", type=int, default=1, help="server processes to start without --url (default 1)")
    parser.add_argument("--db", default=None, help="database for the servers it starts (default: a temporary SQLite)")
    parser.add_argument("--clients", type=int, default=1, help="client processes (default 1)")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the moves")
    parser.add_argument(
        "--watchers",
        action="store_true",
        help="give each game a spectator on another server (the next URL): measures cross-process updates",
    )
    parser.add_argument("--ai-games", type=int, default=0, help="games against the AI played meanwhile (default 0)")
    parser.add_argument("--ai-level", default="expert", help="their AI level (default expert)")
    parser.add_argument(
        "--pace",
        type=float,
        default=8.0,
        help="most moves per second one game sends (default 8: under the server's 10 messages/s per connection)",
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc), None when unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class _CpuSampler:
    """Samples the servers' CPU time a few times a second, so the steady state's share can be told
    apart from the start (creating and connecting the games)."""

    def __init__(self, pids: list[int], every: float = 0.25) -> None:
        import threading

        self.pids = pids
        self.every = every
        self.samples: list[tuple[float, list[float | None]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self.samples.append((time.monotonic(), [_cpu_seconds(p) for p in self.pids]))
            if self._stop.wait(self.every):
                self.samples.append((time.monotonic(), [_cpu_seconds(p) for p in self.pids]))
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def between(self, a: float, b: float) -> list[float | None]:
        """Each server's CPU seconds from the sample nearest ``a`` to the one nearest ``b``."""
        if not self.samples:
            return [None for _ in self.pids]
        first = min(self.samples, key=lambda s: abs(s[0] - a))[1]
        last = min(self.samples, key=lambda s: abs(s[0] - b))[1]
        return [None if x is None or y is None else y - x for x, y in zip(first, last, strict=True)]


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}"
    )


async def _one_game(
    base: str,
    deadline: float,
    rng: random.Random,
    lat: list[tuple[float, float]],
    errors: list[str],
    counts: list[int],
    pace: float = 8.0,
    watch: str | None = None,
    sent_times: dict[tuple[str, int], float] | None = None,
    wlat: list[tuple[float, float]] | None = None,
    http: Any = None,
    playing: list[float] | None = None,
    moves: int | None = None,
) -> None:
    from websockets.asyncio.client import connect

    r = await http.post(base + "/api/games", json={"mode": "hotseat"})
    if r.status_code != 201:
        errors.append(f"create: {r.status_code} {r.text[:100]}")
        return
    g = r.json()
    game_id, token = g["id"], g["token"]
    ws_base = base.replace("http", "ws", 1)
    watcher = None
    first_done = False
    acknowledged = 0  # this game's, against ``moves``
    if watch is not None and sent_times is not None and wlat is not None:
        watcher = asyncio.create_task(_watch(watch.replace("http", "ws", 1), game_id, deadline, sent_times, wlat))

    def going() -> bool:
        return time.monotonic() < deadline and (moves is None or acknowledged < moves)

    while going():
        async with connect(f"{ws_base}/ws/{game_id}", max_size=2**22, compression=None) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token}))
            sent_at: float | None = None
            sent_ply = -1
            role_ok = False
            next_id = None
            last_sent = 0.0
            mirror = _Mirror()
            while going():
                text = await ws.recv()
                received = time.monotonic()
                msg = _read(text)
                kind = msg["type"]
                if kind == "welcome":
                    role_ok = msg["role"] == "both"
                    continue
                if kind == "error":
                    errors.append(msg["code"])
                    if msg.get("game"):
                        msg = {"type": "state", "game": msg["game"]}
                        sent_at = None
                    else:
                        continue
                if kind == "rematch":
                    next_id = msg["id"]
                    break
                if msg["type"] != "state" or not role_ok:
                    continue
                st = msg["game"]
                if sent_at is not None and st["ply"] > sent_ply:
                    lat.append((received, received - sent_at))
                    counts[0] += 1
                    acknowledged += 1
                    if playing is not None and not first_done:  # this game's first acknowledged move
                        playing.append(received)
                        first_done = True
                    sent_at = None
                if sent_at is not None:
                    continue
                if st["status"] == "over":
                    await ws.send(json.dumps({"type": "rematch"}))
                    sent_at = None
                    continue
                if st["status"] != "playing":
                    continue
                move = mirror.choose(st["moves"], rng)
                if last_sent and pace > 0:
                    wait = last_sent + 1.0 / pace - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                sent_ply = st["ply"]
                sent_at = last_sent = time.monotonic()
                if watcher is not None and sent_times is not None:
                    sent_times[(game_id, sent_ply)] = sent_at
                await ws.send(json.dumps({"type": "move", "move": move, "ply": sent_ply}))
            if next_id is None:
                break
            game_id = next_id
    if watcher is not None:
        if moves is not None:  # the game's part is over before the deadline: so is its spectator's
            watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)


def _read(text: str) -> dict[str, Any]:
    """A server message; a state without its position (legal moves, towers, reserves, leaders,
    confrontations: from ``"legal"`` to the live part that starts at ``"seats"``), which the load
    generator does not need: parsing and freeing it was ~45% of the generator's CPU (py-spy), time
    it then took from the servers it measures on the same machine and added to the latencies it
    reports.  Anything laid out otherwise is parsed whole."""
    if text.startswith('{"type":"state"'):
        i = text.find(',"legal":')
        j = text.find(',"seats":', i)
        if 0 < i < j:
            text = text[:i] + text[j:]
    result: dict[str, Any] = json.loads(text)
    return result


class _Mirror:
    """The game replayed on the local engine from the state's moves: a random legal move is then
    drawn without reading the state's legal moves (see :func:`_read`)."""

    def __init__(self) -> None:
        self.game = Game()
        self.moves: list[str] = []

    def choose(self, moves: list[str], rng: random.Random) -> str:
        """A random legal move (notation; ``pass`` when forced) after ``moves``."""
        if moves[: len(self.moves)] != self.moves:  # taken back or another game: start again
            self.game, self.moves = Game(), []
        for move in moves[len(self.moves) :]:
            self.game.play(move)
            self.moves.append(move)
        return str(rng.choice(self.game.legal_moves()))


async def _watch(
    ws_base: str, game_id: str, deadline: float, sent: dict[tuple[str, int], float], wlat: list[float]
) -> None:
    """A spectator: the delay from a move being sent (elsewhere) to this client seeing it."""
    from websockets.asyncio.client import connect

    while time.monotonic() < deadline:
        follow = None
        async with connect(f"{ws_base}/ws/{game_id}", max_size=2**22, compression=None) as ws:
            while time.monotonic() < deadline:
                try:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), max(0.01, deadline - time.monotonic())))
                except TimeoutError:
                    return
                if msg["type"] != "state":
                    continue
                st = msg["game"]
                t = sent.pop((game_id, st["ply"] - 1), None)
                if t is not None:
                    now = time.monotonic()
                    wlat.append((now, now - t))
                if st.get("rematch_id"):
                    follow = st["rematch_id"]
                    break
        if follow is None:
            return
        game_id = follow


async def _ai_game(
    base: str, level: str, deadline: float, rng: random.Random, counts: list[int], errors: list[str], http: Any
) -> None:
    """A person against the AI, answering at once: keeps the AI queue busy."""
    from websockets.asyncio.client import connect

    r = await http.post(base + "/api/games", json={"mode": "ai", "level": level, "side": "south"})
    if r.status_code != 201:
        errors.append(f"create ai game: {r.status_code} {r.text[:100]}")
        return
    g = r.json()
    async with connect(f"{base.replace('http', 'ws', 1)}/ws/{g['id']}", max_size=2**22) as ws:
        await ws.send(json.dumps({"type": "hello", "token": g["token"]}))
        mine = False
        while time.monotonic() < deadline:
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), max(0.01, deadline - time.monotonic())))
            except TimeoutError:
                return
            if msg["type"] == "welcome":
                mine = msg["role"] == "south"
            if msg["type"] != "state" or not mine:
                continue
            st = msg["game"]
            if st["status"] != "playing":
                return
            if st["turn"] == "south" and st["ply"] > 0:
                counts[1] += 1  # the AI answered
            if st["turn"] == "south":
                moves = [f"{p}@{c}" for p, cells in st["legal"].items() for c in cells] or ["pass"]
                await ws.send(json.dumps({"type": "move", "move": rng.choice(moves), "ply": st["ply"]}))


async def play_games(
    urls: list[str],
    games: int,
    seconds: float,
    seed: int,
    pace: float = 8.0,
    watchers: bool = False,
    ai_games: int = 0,
    ai_level: str = "expert",
    moves: int | None = None,
) -> dict[str, Any]:
    """Play ``games`` games spread over ``urls`` for ``seconds`` (or each until ``moves`` of its
    moves are acknowledged); moves, latencies (s) and errors."""
    import httpx

    # one HTTP client for all games: a client per game cost ~50 ms of CPU each (it loads the
    # certificate store), which made the load generator itself the bottleneck for seconds
    async with httpx.AsyncClient(timeout=30) as http:
        return await _play_games(http, urls, games, seconds, seed, pace, watchers, ai_games, ai_level, moves)


async def _play_games(
    http: Any,
    urls: list[str],
    games: int,
    seconds: float,
    seed: int,
    pace: float,
    watchers: bool,
    ai_games: int,
    ai_level: str,
    moves: int | None = None,
) -> dict[str, Any]:
    lat: list[tuple[float, float]] = []
    playing: list[float] = []  # when each game's first move was acknowledged
    wlat: list[tuple[float, float]] = []
    sent_times: dict[tuple[str, int], float] = {}
    errors: list[str] = []
    counts = [0, 0]
    rng = random.Random(seed)
    started = time.monotonic()
    deadline = started + seconds
    cpu = time.process_time()  # before the tasks: creating them runs their first steps
    tasks = []
    for i in range(games):
        tasks.append(
            asyncio.create_task(
                _one_game(
                    urls[i % len(urls)],
                    deadline,
                    random.Random(rng.random()),
                    lat,
                    errors,
                    counts,
                    pace,
                    urls[(i + 1) % len(urls)] if watchers else None,
                    sent_times,
                    wlat,
                    http,
                    playing,
                    moves,
                )
            )
        )
        await asyncio.sleep(0)
    ai_tasks = [
        asyncio.create_task(_ai_game(urls[i % len(urls)], ai_level, deadline, random.Random(i), counts, errors, http))
        for i in range(ai_games)
    ]
    done = await asyncio.gather(*tasks, return_exceptions=True)
    if moves is not None:  # the games played their moves: the AI games meanwhile end with them
        for task in ai_tasks:
            task.cancel()
    done += await asyncio.gather(*ai_tasks, return_exceptions=True)
    cpu = time.process_time() - cpu
    errors += [
        f"{type(e).__name__}: {e}"[:120]
        for e in done
        if isinstance(e, BaseException) and not isinstance(e, asyncio.CancelledError)
    ]
    return {
        "moves": counts[0],
        "latencies": lat,
        "all_playing": max(playing) if len(playing) == games else None,
        "watch_latencies": wlat,
        "ai_moves": counts[1],
        "errors": errors,
        "elapsed": time.monotonic() - started,
        "client_cpu": cpu,
    }


def _run(coro: Any) -> Any:
    """Run the clients on uvloop when it is installed (it comes with uvicorn's standard extra and is
    what the server runs on): the load generator then costs less CPU than the server it measures."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


def _client_process(urls: list[str], games: int, seconds: float, seed: int, opts: dict[str, Any], out: Any) -> None:
    out.put(_run(play_games(urls, games, seconds, seed, **opts)))


def _start_servers(n: int, db: str) -> list[tuple[subprocess.Popen[str], str]]:
    servers = []
    for _ in range(n):
        port = _free_port()
        cmd = [
            sys.executable,
            "-m",
            "jericho_game",
            "serve",
            "--port",
            str(port),
            "--db",
            db,
            "--ai-delay",
            "0",
            "--max-creates-per-minute",
            "100000",
            # every simulated player comes from this one address: the per-client caps (fair share,
            # issue 22) would otherwise refuse all but a few of them
            "--ws-per-address",
            "100000",
            "--ai-per-client",
            "100000",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "ready" not in line:
            raise SystemExit(f"jericho loadtest: the server did not start: {line.strip()}")
        servers.append((proc, f"http://127.0.0.1:{port}"))
    import httpx

    for _, url in servers:
        for _ in range(200):
            try:
                httpx.get(url + "/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
    return servers


def _pct(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def run(args: argparse.Namespace) -> int:
    """Run the load test and print its figures."""
    seconds = min(300.0, max(1.0, args.seconds))
    games = max(1, min(5000, args.games))
    servers: list[tuple[subprocess.Popen[str], str]] = []
    tmp = None
    if args.url:
        urls = [u.strip().rstrip("/") for u in args.url.split(",") if u.strip()]
        where = ", ".join(urls)
    else:
        db = args.db
        if db is None:
            if args.servers > 1:
                print("jericho loadtest: several servers need one PostgreSQL database (--db URL)", flush=True)
                return 2
            tmp = tempfile.TemporaryDirectory(prefix="jericho-loadtest-")
            db = str(Path(tmp.name) / "games.sqlite3")
        servers = _start_servers(max(1, args.servers), db)
        urls = [u for _, u in servers]
        kind = "PostgreSQL" if db.startswith("postgresql") else "SQLite"
        where = f"{len(servers)} server process(es) started here on {kind}"
    try:
        opts = {
            "pace": args.pace,
            "watchers": args.watchers,
            "ai_games": args.ai_games,
            "ai_level": args.ai_level,
            "moves": None if args.moves is None else max(1, args.moves),
        }
        cpu0 = {p.pid: _cpu_seconds(p.pid) for p, _ in servers}
        sampler = _CpuSampler([p.pid for p, _ in servers])
        load0 = os.getloadavg()
        t0 = time.monotonic()
        if args.clients <= 1:
            res = _run(play_games(urls, games, seconds, args.seed, **opts))
        else:
            ctx = multiprocessing.get_context("spawn")
            q = ctx.Queue()
            share = [games // args.clients + (1 if i < games % args.clients else 0) for i in range(args.clients)]
            procs = [
                ctx.Process(
                    target=_client_process,
                    args=(urls, n, seconds, args.seed + i, dict(opts, ai_games=opts["ai_games"] if i == 0 else 0), q),
                )
                for i, n in enumerate(share)
            ]
            for p in procs:
                p.start()
            parts = [q.get(timeout=seconds + 120) for _ in procs]
            for p in procs:
                p.join(timeout=10)
            ramps = [x["all_playing"] for x in parts]
            res = {
                "moves": sum(x["moves"] for x in parts),
                "latencies": [v for x in parts for v in x["latencies"]],
                "all_playing": None if None in ramps else max(ramps),
                "watch_latencies": [v for x in parts for v in x["watch_latencies"]],
                "ai_moves": sum(x["ai_moves"] for x in parts),
                "client_cpu": sum(x["client_cpu"] for x in parts),
                "errors": [e for x in parts for e in x["errors"]],
                "elapsed": max(x["elapsed"] for x in parts),
            }
        wall = time.monotonic() - t0
        cpu1 = {p.pid: _cpu_seconds(p.pid) for p, _ in servers}
        sampler.stop()
        load1 = os.getloadavg()
    finally:
        for proc, _ in servers:
            proc.send_signal(signal.SIGTERM)
        for proc, _ in servers:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if tmp is not None:
            tmp.cleanup()
    # the figures cover the steady state: from the moment every game has had a move acknowledged
    # (before it, games are still being created and connected, each creation a transaction of its
    # own) to the end; one second after the first acknowledged move if some game never played
    stamps = sorted(t for t, _ in res["latencies"])
    ramp = res["all_playing"]
    start = ramp if ramp is not None else (stamps[0] + 1.0) if stamps else 0.0
    window = [d for t, d in res["latencies"] if t >= start]
    elapsed = max((stamps[-1] - start) if stamps else 0.0, 1e-9)
    lat = sorted(window)
    res["watch_latencies"] = [d for t, d in res["watch_latencies"] if t >= start]
    length = (
        f"{seconds:g} s"
        if args.moves is None
        else f"{max(1, args.moves)} acknowledged moves each (at most {seconds:g} s)"
    )
    print(f"jericho loadtest: {games} hot-seat games for {length} against {where}")
    print(f"machine: {_machine()}")
    print(
        f"acknowledged moves: {res['moves']} in all; steady state: {len(lat)} in {elapsed:.1f} s "
        f"= {len(lat) / elapsed:.0f} moves/s"
        + (f" (from {start - stamps[0]:.1f} s after the first, when all {games} games were playing)" if ramp else "")
    )
    print(
        "latency, move sent to state received: "
        f"p50 {_pct(lat, 0.50) * 1000:.1f} ms, p99 {_pct(lat, 0.99) * 1000:.1f} ms, "
        f"max {(lat[-1] if lat else float('nan')) * 1000:.1f} ms"
    )
    if args.watchers:
        wl = sorted(res["watch_latencies"])
        print(
            f"spectators on another server ({len(wl)} updates): move sent to state seen: "
            f"p50 {_pct(wl, 0.50) * 1000:.1f} ms, p99 {_pct(wl, 0.99) * 1000:.1f} ms, "
            f"max {(wl[-1] if wl else float('nan')) * 1000:.1f} ms"
        )
    if args.ai_games:
        print(f"meanwhile {args.ai_games} games against the AI ({args.ai_level}): {res['ai_moves']} AI moves")
    counts: dict[str, int] = {}
    for e in res["errors"]:
        counts[e] = counts.get(e, 0) + 1
    print(
        f"errors: {len(res['errors'])}" + (f" ({', '.join(f'{k}: {v}' for k, v in counts.items())})" if counts else "")
    )
    steady = sampler.between(start, start + elapsed) if servers else []
    for (_proc, url), pid, part in zip(servers, cpu0, steady, strict=True):
        a, b = cpu0[pid], cpu1[pid]
        if a is not None and b is not None:
            share = f"; steady state {part:.1f} s over {elapsed:.1f} s" if part is not None else ""
            print(f"server CPU {url}: {b - a:.1f} s over {wall:.1f} s ({(b - a) / wall * 100:.0f}% of one core){share}")
    # CPU per acknowledged move: meaningful even when other work shares the machine (the
    # moves/s and latencies are not); the steady-state figure leaves out creating the games
    total = [cpu1[p] - cpu0[p] for p in cpu0 if cpu0[p] is not None and cpu1[p] is not None]  # type: ignore[operator]
    if servers and total and res["moves"]:
        line = f"server CPU per acknowledged move: {sum(total) / res['moves'] * 1000:.2f} ms over the whole run"
        if lat and all(x is not None for x in steady):
            line += f", {sum(x or 0.0 for x in steady) / len(lat) * 1000:.2f} ms in the steady state"
        print(line + f" ({len(servers)} process(es) together)")
    if not servers:
        print("server CPU: not measured (servers not started by this command)")
    per = f" = {res['client_cpu'] / res['moves'] * 1000:.2f} ms a move" if res["moves"] else ""
    print(f"client CPU: {res['client_cpu']:.1f} s over {wall:.1f} s{per} ({args.clients} process(es))")
    print(
        f"machine load average (1 min) {load0[0]:.2f} at the start, {load1[0]:.2f} at the end "
        f"({os.cpu_count()} CPUs; anything above the servers' and client's share is other work)"
    )
    return 0 if res["moves"] > 0 else 1
