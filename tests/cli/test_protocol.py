"""``jericho engine`` (the Jericho Engine Protocol) and its Python client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from jericho_game import Game
from jericho_game.ai import Limit, make_player
from jericho_game.ai.random_player import RandomPlayer
from jericho_game.cli.protocol import FINAL_WORDS, EngineSession, serve
from jericho_game.cli.protocol_client import (
    EngineClient,
    EngineCommandError,
    EngineDied,
    EngineError,
    EngineProtocolError,
    EngineTimeout,
    ExternalEnginePlayer,
)
from tests.helpers import Load

SRC = str(Path(__file__).resolve().parents[2] / "src")
START = Game().position()


def engine_cmd(*extra: str) -> list[str]:
    return [sys.executable, "-m", "jericho_game", "engine", *extra]


def engine_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture
def session() -> EngineSession:
    return EngineSession(RandomPlayer(seed=0), spec="random")


def test_every_reply_ends_with_exactly_one_final_line(session: EngineSession) -> None:
    commands = [
        "identify", "isready", "newgame", "position start moves 5R@d2 1G@d3", "legal", "play 2Y@d3",
        "undo", "go nodes 5 seed 1", "getposition", "status", "show", "help", "setoption name x",
        "frobnicate", "play", "go time -1", "position", "quit",
    ]  # fmt: skip
    for c in commands:
        reply = session.handle(c)
        assert reply, c
        assert reply[-1].split()[0] in FINAL_WORDS, (c, reply)
        assert all(line.split()[0] in ("id", "info", "board") for line in reply[:-1]), (c, reply)
    assert session.done


def test_identify_and_blank_and_comment_lines(session: EngineSession) -> None:
    reply = session.handle("IDENTIFY")
    assert reply[-1] == "ready"
    assert "id protocol 1" in reply and "id player random" in reply
    assert session.handle("") == [] and session.handle("   # a comment") == []


def test_position_play_undo_and_legal_follow_the_engine(session: EngineSession) -> None:
    assert session.handle("position start moves 5R@d2 1G@d3") == ["ok"]
    g = Game.from_moves("5R@d2 1G@d3")
    assert session.handle("getposition") == [f"ok {g.position()}"]
    assert session.handle("legal") == ["ok " + " ".join(str(m) for m in g.legal_moves())]
    assert session.handle("play 2y@d3  3B@a1") == ["ok"]
    g.play("2Y@d3")
    g.play("3B@a1")
    assert session.handle("getposition") == [f"ok {g.position()}"]
    assert session.handle("status") == ["ok turn south score 0 1 result * moves 4"]
    assert session.handle("undo 2") == ["ok"]
    assert session.handle("status") == ["ok turn south score 1 0 result * moves 2"]
    text = Game.from_moves("5R@d2").position()
    assert session.handle(f"position text {text} moves 1G@d3") == ["ok"]
    assert session.handle("getposition") == [f"ok {Game.from_moves('5R@d2 1G@d3').position()}"]
    assert session.handle("undo 2")[0].startswith("error cannot undo 2 moves")
    assert session.handle("newgame") == ["ok"]
    assert session.handle("getposition") == [f"ok {START}"]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("frobnicate", "unknown command 'frobnicate'"),
        ("position", "position needs"),
        ("position middle", "expected 'start' or 'text'"),
        ("position text - 1R", "needs the 7 fields"),
        ("position text a b c d e f g", "bad position"),
        ("position start 5R@d2", "expected 'moves"),
        ("position start moves 5R@d2 5R@d2", "illegal move 2 '5R@d2'"),
        ("position start moves 5R@d2 9Q@d9", "illegal move 2 '9Q@d9': malformed"),
        ("play", "needs at least one move"),
        ("play pass", "cannot pass"),
        ("play 1R@a1 1R@z9", "illegal move 2 '1R@z9': unknown cell"),
        ("undo 2", "cannot undo 2 moves: only 1 played"),
        ("undo x", "bad undo count 'x'"),
        ("undo 0", "must be at least 1"),
        ("go time", "pairs"),
        ("go time abc", "bad time 'abc'"),
        ("go time 0", "positive"),
        ("go nodes -3", "bad nodes"),
        ("go depth 3", "unknown go option 'depth'"),
        ("legal now", "takes no arguments"),
        ("setoption player", "needs a name and a value"),
        ("setoption player nosuchplayer", "bad player 'nosuchplayer'"),
        ("setoption colour red", "unknown option 'colour'"),
    ],
)
def test_bad_commands_answer_error_and_keep_the_state(session: EngineSession, command: str, reason: str) -> None:
    session.handle("position start moves 5R@d2")
    before = session.handle("getposition")
    reply = session.handle(command)
    assert len(reply) == 1 and reply[0].startswith("error ") and reason in reply[0], reply
    assert session.handle("getposition") == before


def test_go_answers_a_legal_move_without_changing_the_position(session: EngineSession) -> None:
    session.handle("position start moves 5R@d2")
    before = session.handle("getposition")
    reply = session.handle("go nodes 10 seed 3")
    assert reply[0].startswith("info time ") and reply[-1].startswith("bestmove ")
    move = reply[-1].split()[1]
    assert Game.from_moves("5R@d2").is_legal(move)
    assert session.handle("go nodes 10 seed 3")[-1] == reply[-1]  # seeded: reproducible
    assert session.handle("getposition") == before


def test_go_on_a_finished_game_and_a_failing_player() -> None:
    class Broken:
        name = "broken"

        def choose_move(self, game: Game, limit: Limit | None = None) -> object:
            raise RuntimeError("out of ideas")

    s = EngineSession(Broken())  # type: ignore[arg-type]
    reply = s.handle("go")
    assert reply == ["error the player failed: RuntimeError: out of ideas"]
    s.game = _finished_game()
    assert s.handle("go")[0].startswith("error the game is over")
    assert s.handle("legal") == ["ok"]


def test_setoption_player_switches_the_player(session: EngineSession) -> None:
    assert session.handle("setoption player random:seed=4") == ["ok"]
    assert "id player random:seed=4" in session.handle("identify")
    assert session.handle("setoption name My Engine") == ["ok"]
    assert "id name My Engine" in session.handle("identify")


def _finished_game() -> Game:
    g = Game()
    p = RandomPlayer(seed=1)
    while not g.is_over():
        g.play(p.choose_move(g))
    return g


# -- the real program over pipes ---------------------------------------------------------------


def test_engine_program_sample_session() -> None:
    script = "identify\nposition start moves 5R@d2\nplay 5R@d2\ngo nodes 5 seed 2\nshow\nquit\nstatus\n"
    out = subprocess.run(
        engine_cmd("--player", "random"), input=script, capture_output=True, text=True, env=engine_env(), timeout=60
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    from jericho_game import __version__

    assert lines[:5] == [
        "id name jericho random",
        f"id version {__version__}",
        "id protocol 1",
        "id player random",
        "ready",
    ]
    assert lines[5] == "ok"
    assert lines[6].startswith("error illegal move 1 '5R@d2'")
    assert lines[8].startswith("bestmove ")
    assert lines[-1] == "bye"  # nothing after quit
    assert any(line.startswith("board ") for line in lines)


def test_engine_program_rejects_a_bad_player() -> None:
    out = subprocess.run(
        engine_cmd("--player", "nobody"), input="", capture_output=True, text=True, env=engine_env(), timeout=60
    )
    assert out.returncode == 2 and "bad --player 'nobody'" in out.stderr


def test_client_drives_jericho_engine() -> None:
    with EngineClient(engine_cmd("--player", "random"), env=engine_env(), timeout=30) as c:
        assert c.info["protocol"] == "1" and c.info["player"] == "random"
        c.is_ready()
        c.set_position(["5R@d2", "1G@d3"])
        g = Game.from_moves("5R@d2 1G@d3")
        assert c.legal_moves() == g.legal_moves()
        assert c.position() == g.position()
        assert c.status() == {"turn": "south", "score": "1 0", "result": "*", "moves": "2"}
        with pytest.raises(EngineCommandError, match="size clash"):
            c.play("5Y@d2")
        assert c.position() == g.position()  # the refusal changed nothing, the client still works
        move = c.go(nodes=5, seed=1)
        assert g.is_legal(move)
        c.play(move)
        c.undo()
        assert c.position() == g.position()
        assert "reserve south" in c.board()
        c.set_position(["2Y@d3"], position=g.position())
        c.new_game()
        assert c.position() == START
    assert not c.alive


def test_external_player_plays_a_whole_game_via_make_player() -> None:
    p = make_player("external:cmd=jericho engine --player random:seed=1,timeout=30", seed=5)
    assert isinstance(p, ExternalEnginePlayer) and p.seed == 5
    g = Game()
    other = RandomPlayer(seed=2)
    try:
        while not g.is_over():
            mover = p if g.turn == "south" else other
            g.play(mover.choose_move(g, Limit(nodes=3)))
        assert g.outcome() in ("south", "north", "draw")
        # Positions that do not start at the standard start travel as position text.
        mid = Game.from_position(Game.from_moves("5R@d2 1G@d3").position())
        mid.play("2Y@d3")
        assert mid.is_legal(p.choose_move(mid))
    finally:
        p.close()


def _fake_engine(body: str) -> list[str]:
    prelude = textwrap.dedent(
        """
        import sys
        def out(s):
            print(s, flush=True)
        for line in sys.stdin:
            cmd = line.split()[0] if line.split() else ""
            if cmd == "identify":
                out("id name fake"); out("ready"); continue
        """
    )
    return [sys.executable, "-c", prelude + textwrap.indent(textwrap.dedent(body), "    ")]


def test_client_reports_an_engine_that_dies() -> None:
    cmd = _fake_engine(
        """
        if cmd == "go":
            sys.stderr.write("segfault, sort of\\n"); sys.stderr.flush(); sys.exit(3)
        out("ok")
        """
    )
    with EngineClient(cmd, timeout=10) as c:
        c.set_position([])
        with pytest.raises(EngineDied, match=r"status 3.*segfault, sort of"):
            c.go()
        with pytest.raises(EngineError, match="no longer usable"):
            c.legal_moves()


def test_client_times_out_on_a_silent_engine() -> None:
    cmd = _fake_engine(
        """
        if cmd == "go":
            out("info thinking forever")
            continue
        out("ok")
        """
    )
    c = EngineClient(cmd, timeout=10)
    with pytest.raises(EngineTimeout, match="within 0.3 s"):
        c.go(timeout=0.3)
    assert not c.alive
    c.close()


def test_client_rejects_out_of_protocol_answers() -> None:
    cmd = _fake_engine(
        """
        if cmd == "go":
            out("bestmove 9Z@q7"); continue
        if cmd == "legal":
            out("bestmove 1R@a1"); continue
        out("ok")
        """
    )
    with EngineClient(cmd, timeout=10) as c:
        with pytest.raises(EngineProtocolError, match="expected 'ok ...'"):
            c.legal_moves()
    with EngineClient(cmd, timeout=10) as c, pytest.raises(EngineProtocolError, match="bad bestmove"):
        c.go()


def test_external_player_refuses_an_illegal_bestmove() -> None:
    cmd = _fake_engine(
        """
        if cmd == "go":
            out("bestmove pass"); continue
        out("ok")
        """
    )
    import shlex

    p = ExternalEnginePlayer(cmd=shlex.join(cmd), timeout=10)
    try:
        with pytest.raises(EngineProtocolError, match="illegal move pass"):
            p.choose_move(Game())
    finally:
        p.close()


def test_client_refuses_multi_line_commands_and_missing_programs() -> None:
    with pytest.raises(EngineDied, match="cannot start"):
        EngineClient(["/nonexistent/engine"])
    with EngineClient(engine_cmd(), env=engine_env(), timeout=30) as c, pytest.raises(ValueError, match="one line"):
        c.send("legal\nquit")


def test_players_pickle_for_worker_processes() -> None:
    import pickle

    p = ExternalEnginePlayer(cmd="jericho engine --player random", timeout=30)
    try:
        p.choose_move(Game())
        q = pickle.loads(pickle.dumps(p))
        assert q._client is None and q.cmd == p.cmd
        assert Game().is_legal(q.choose_move(Game()))
        q.close()
    finally:
        p.close()
    bot = pickle.loads(pickle.dumps(make_player("openspiel-mcts:sims=10,seed=1")))
    assert Game().is_legal(bot.choose_move(Game()))


def test_multi_line_texts_from_outside_never_break_the_reply_grammar() -> None:
    # An external engine's error carries its stderr (several lines); a player or a name
    # may say anything.  Each reply must still be lines of the documented forms.
    class Chatty:
        name = "chatty"

        def choose_move(self, game: Game, limit: Limit | None = None) -> object:
            raise RuntimeError("first line\nsecond line\r\nthird line")

    s = EngineSession(Chatty(), spec="chatty", name="two\nlines")  # type: ignore[arg-type]
    for command in ("go", "identify", "help", "position text a b c d e f g"):
        reply = s.handle(command)
        assert all("\n" not in line and "\r" not in line for line in reply), (command, reply)
        assert reply[-1].split()[0] in FINAL_WORDS, (command, reply)
        assert all(line.split()[0] in ("id", "info", "board") for line in reply[:-1]), (command, reply)
    reply = s.handle("go")
    assert reply[0].startswith("error the player failed: RuntimeError: first line")
    assert "second line" in reply[0] and "third line" in reply[0]


def test_a_dropped_external_player_stops_its_engine() -> None:
    # The client's reader threads must not keep it alive: once the player is dropped
    # (without close), the engine process is stopped rather than left running.
    import gc

    p = ExternalEnginePlayer(cmd="jericho engine --player random", timeout=30)
    assert Game().is_legal(p.choose_move(Game(), Limit(seed=1)))
    assert p._client is not None
    proc = p._client.proc
    assert proc.poll() is None
    del p
    gc.collect()
    assert proc.poll() is not None
    # Its pipes are closed too (left to the collector, each is a ResourceWarning in some later test).
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    assert proc.stdin.closed and proc.stdout.closed and proc.stderr.closed


def test_a_dying_engine_s_stderr_is_always_reported() -> None:
    # The stderr reader runs in a thread: the error must wait for it, not race it.
    cmd = [sys.executable, "-c", "import sys; sys.stderr.write('line one\\nline two\\n'); sys.exit(3)"]
    for _ in range(5):
        with pytest.raises(EngineDied, match=r"(?s)status 3.*line one.*line two"):
            EngineClient(cmd, timeout=10)


# -- stop, budgets, end of input, long lines, setoption checks (issue 13) ----------------------


def _serve_in_thread(session: EngineSession) -> tuple[object, object, threading.Thread]:
    """``serve`` on a pipe we write to, its answers read line by line from another pipe."""
    rfd, wfd = os.pipe()
    out_r, out_w = os.pipe()
    stdin = os.fdopen(rfd, "r", encoding="utf-8")
    stdout = os.fdopen(out_w, "w", encoding="utf-8")
    t = threading.Thread(target=lambda: (serve(session, stdin, stdout), stdout.close()), daemon=True)
    t.start()
    # stdin is closed by the test once it closed the writing end: serve's reader thread may
    # still be blocked reading it until then (closing it earlier would wait for that thread).
    t.stdin = stdin  # type: ignore[attr-defined]
    return os.fdopen(wfd, "w", encoding="utf-8", buffering=1), os.fdopen(out_r, "r", encoding="utf-8"), t


def _close_served(send: object, answers: object, thread: threading.Thread) -> None:
    """Close the pipes of :func:`_serve_in_thread` (left open, each is a ResourceWarning in a later test)."""
    send.close()  # type: ignore[attr-defined]
    answers.close()  # type: ignore[attr-defined]
    thread.stdin.close()  # type: ignore[attr-defined]


@pytest.mark.timing
def test_stop_ends_a_long_search_at_once_with_a_legal_move_and_answers_in_order() -> None:
    session = EngineSession(make_player("mcts", seed=1), spec="mcts")
    with Load() as load:  # the bounds below are an idle machine's, scaled by the load around the search
        send, answers, thread = _serve_in_thread(session)
        send.write("position start moves 5R@d2\ngo time 60\n")
        assert answers.readline() == "ok\n"
        time.sleep(0.5)
        asked = time.perf_counter()
        send.write("isready\nstop\nstatus\n")
        info = answers.readline()
        waited = time.perf_counter() - asked
    best = answers.readline().split()
    assert info.startswith("info time ") and float(info.split()[2]) < 5.0 * load.factor
    assert best[0] == "bestmove" and Game.from_moves("5R@d2").is_legal(best[1])
    assert waited < 2.0 * load.factor, (waited, load.factor)  # one short slice, not the 60 s asked for
    # The commands sent during the search are answered after it, in the order sent.
    assert [answers.readline() for _ in range(3)] == ["ready\n", "ok\n", "ok turn north score 0 0 result * moves 1\n"]
    send.write("stop\nquit\n")  # a stop with no search running is simply acknowledged
    assert [answers.readline(), answers.readline()] == ["ok\n", "bye\n"]
    thread.join(timeout=10)
    assert not thread.is_alive()
    _close_served(send, answers, thread)


@pytest.mark.parametrize("cut", ["nodes", "time"])
def test_a_sliced_search_plays_the_move_of_one_unsliced_search(cut: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Slices end after SLICE_NODES simulations or SLICE_SECONDS, whichever comes first: cut by
    # either, the continued tree plays the move of one search.
    from jericho_game.cli import protocol

    if cut == "nodes":
        monkeypatch.setattr(protocol, "SLICE_NODES", 100)
    else:
        monkeypatch.setattr(protocol, "SLICE_SECONDS", 0.003)
    game = Game.from_moves("5R@d2 1G@d3")
    for spec, go in (("mcts", "go nodes 900 seed 4"), ("hard", "go seed 5"), ("medium", "go nodes 300 seed 6")):
        session = EngineSession(make_player(spec), spec=spec)
        session.handle("position start moves 5R@d2 1G@d3")
        search = session.search(go.split()[1:])
        search.run()
        if cut == "nodes":
            assert search.slices > 1, spec
        seed = int(go.split()[-1])
        nodes = int(go.split()[2]) if "nodes" in go else None
        expected = make_player(spec).choose_move(game.copy(), Limit(nodes=nodes, seed=seed))
        assert search.move == expected, spec


@pytest.mark.parametrize(
    "command, reason",
    [
        ("go nodes 100000000", "must be at most 1_000_000"),
        ("go time 1e9", "at most 600"),
        ("go time inf", "at most 600"),
        ("go seed 99999999999999999999999", "must be at most"),
        ("go nodes " + "9" * 5000, "expected a whole number"),
    ],
)
def test_budgets_over_the_documented_maximums_are_refused(command: str, reason: str) -> None:
    session = EngineSession(make_player("mcts"), spec="mcts")
    reply = session.handle(command)
    assert len(reply) == 1 and reply[0].startswith("error ") and reason in reply[0]
    assert len(reply[0]) < 200  # the flood is not echoed


@pytest.mark.timing
def test_end_of_input_lets_the_search_finish_and_the_engine_exits(load: Load) -> None:
    # The end of input ends the commands, not the work: the go is answered after its whole budget.
    proc = subprocess.Popen(
        engine_cmd("--player", "mcts"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=engine_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("go time 2\n")
    proc.stdin.flush()
    time.sleep(0.5)
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    with proc.stdout:
        out = proc.stdout.read().splitlines()
    assert out[-1].startswith("bestmove ")
    spent = float(out[-2].split()[2])  # the engine's own time: 1 s over at most on an idle machine
    assert 1.9 <= spent <= 2.0 + 1.0 * load.measure(), (spent, load.factor)


def test_over_long_lines_are_refused_without_echo_and_the_session_goes_on() -> None:
    from jericho_game.cli.protocol import MAX_LINE

    flood = "frobnicate" + "x" * (20 * 1024 * 1024)
    script = f"{flood}\n{'y' * (MAX_LINE - 1)}\nstatus\nquit\n"
    out = subprocess.run(
        engine_cmd("--player", "random"), input=script, capture_output=True, text=True, env=engine_env(), timeout=60
    )
    lines = out.stdout.splitlines()
    assert lines[0] == f"error line too long: more than {MAX_LINE} characters (not read)"
    # A line within the limit is read: an unknown command, echoed only in part.
    assert lines[1].startswith("error unknown command 'yyyy") and len(lines[1]) < 300
    assert lines[2:] == ["ok turn south score 0 0 result * moves 0", "bye"]
    assert len(out.stdout) < 1000


def test_setoption_player_starts_an_external_program_at_once() -> None:
    session = EngineSession(RandomPlayer(seed=0), spec="random")
    session.handle("position start moves 5R@d2")
    reply = session.handle("setoption player external:cmd=/nonexistent/engine")
    assert reply[0].startswith("error bad player 'external:cmd=/nonexistent/engine': cannot start engine")
    assert "No such file" in reply[0]
    # Nothing changed: the player and the position are as they were.
    assert session.spec == "random" and session.handle("status")[0].endswith("moves 1")
    reply = session.handle("setoption player external:cmd=sleep 30,startup=1")  # a silent program
    assert reply[0].startswith("error bad player") and "start-up limit of 1 s" in reply[0]
    cmd = f"{sys.executable} -m jericho_game engine --player random"
    assert session.handle(f"setoption player external:cmd={cmd}") == ["ok"]
    client = session.player.client  # type: ignore[attr-defined]
    assert client.alive and client.info["player"] == "random"
    assert session.handle("go nodes 5 seed 1")[-1].startswith("bestmove ")
    session.handle("setoption player random")
    assert not client.alive  # the replaced external player was closed


@pytest.mark.timing
def test_client_stop_ends_an_external_engine_s_search() -> None:
    player = ExternalEnginePlayer(cmd=f"{sys.executable} -m jericho_game engine --player mcts", timeout=30)
    try:
        player.start()
        game = Game.from_moves("5R@d2")
        with Load() as load:
            timer = threading.Timer(1.0, player.stop)
            timer.start()
            t0 = time.perf_counter()
            move = player.choose_move(game, Limit(time=60))
            took = time.perf_counter() - t0
        assert took < 6.0 * load.factor and game.is_legal(move), (took, load.factor)  # not the 60 s asked for
        # The stop's own "ok" is read before the next command: the client stays in step.
        assert player.client.status()["moves"] == "1"
        assert game.is_legal(player.choose_move(game, Limit(nodes=50, seed=1)))
    finally:
        player.close()


@pytest.mark.parametrize("how", ["quit", "ctrl-c"])
def test_quit_and_ctrl_c_exit_even_when_the_player_cannot_be_stopped(how: str) -> None:
    # OpenSpiel's MCTS runs in one piece: stop cannot reach it, so the engine leaves it behind.
    pytest.importorskip("pyspiel")
    proc = subprocess.Popen(
        engine_cmd("--player", "openspiel-mcts"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=engine_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("isready\ngo nodes 1000000\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == "ready\n"
    time.sleep(0.5)
    with Load() as load:
        asked = time.perf_counter()
        if how == "quit":
            proc.stdin.write("quit\n")
            proc.stdin.flush()
        else:
            proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20 * load.factor) == 0
        took = time.perf_counter() - asked
    assert took < 10.0 * load.factor, (took, load.factor)
    proc.stdin.close()
    proc.stdout.close()
    assert proc.stderr is not None
    proc.stderr.close()


@pytest.mark.timing
@pytest.mark.parametrize("spec", ["alphabeta", "alphabeta-py"])
def test_stop_ends_an_alphabeta_search_at_once_with_its_last_completed_depth(spec: str) -> None:
    # The C search (alphabeta) and the Python one (alphabeta-py) both read the player's stop.
    game = Game.from_moves("5R@d2 1G@d3")
    player = make_player(spec)
    with Load() as load:
        timer = threading.Timer(0.5, player.stop)  # type: ignore[attr-defined]
        timer.start()
        t0 = time.perf_counter()
        move = player.choose_move(game, Limit(time=120, seed=3))
        took = time.perf_counter() - t0
        timer.join()
    assert took < 3.0 * load.factor and game.is_legal(move), (took, load.factor)
    depth = player.last_depth  # type: ignore[attr-defined]
    assert depth >= 1 and not player.stopping  # type: ignore[attr-defined]
    # The answer is the move of the last completed depth: a fresh search to that depth agrees.
    assert make_player(f"{spec}:depth={depth}").choose_move(game, Limit(seed=3)) == move
    # A stop that finds no search running cuts the next one at once, unless reset_stop withdraws it.
    player.stop()  # type: ignore[attr-defined]
    assert game.is_legal(player.choose_move(game, Limit(nodes=3000, seed=3)))
    assert player.last_nodes <= 64 and not player.stopping  # type: ignore[attr-defined]
    player.stop()  # type: ignore[attr-defined]
    player.reset_stop()  # type: ignore[attr-defined]
    player.choose_move(game, Limit(nodes=3000, seed=3))
    assert player.last_nodes > 2000  # type: ignore[attr-defined]


@pytest.mark.timing
def test_jep_stop_reaches_alphabeta_and_a_late_stop_does_not_cut_the_next_search() -> None:
    session = EngineSession(make_player("alphabeta", seed=1), spec="alphabeta")
    with Load() as load:  # the bounds below are an idle machine's, scaled by the load around the search
        send, answers, thread = _serve_in_thread(session)
        send.write("position start moves 5R@d2\ngo time 60\n")
        assert answers.readline() == "ok\n"
        time.sleep(0.5)
        asked = time.perf_counter()
        send.write("stop\n")
        info = answers.readline()
        best = answers.readline().split()
        took = time.perf_counter() - asked
    assert took < 1.5 * load.factor, (took, load.factor)  # at once, not after the 60 s asked for
    assert info.startswith("info time ") and float(info.split()[2]) < 5.0 * load.factor
    assert best[0] == "bestmove" and Game.from_moves("5R@d2").is_legal(best[1])
    assert answers.readline() == "ok\n"  # the stop's own answer
    send.write("quit\n")
    assert answers.readline() == "bye\n"
    thread.join(timeout=10)
    _close_served(send, answers, thread)
    # A stop that arrives after the search answered is not left pending for the next one.
    session.handle("position start moves 5R@d2")
    search = session.search(["nodes", "4000", "seed", "2"])
    search.run()
    search.stop()
    assert not session.player.stopping  # type: ignore[attr-defined]
    again = session.search(["nodes", "4000", "seed", "2"])
    again.run()
    assert again.move == search.move and session.player.last_nodes > 1000  # type: ignore[attr-defined]
