"""The one budget policy (issue 51, web/common/budget.py, docs/web.md "Budgets"): its table, its three
ways of counting, its refusals, and the AI's budget that finding 1 broke (one client spent every
other client's AI admission)."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from pathlib import Path

import pytest

from jericho_game.web.common import budget as budgeting
from jericho_game.web.common.budget import BUDGETS, Budget, BudgetPolicy, Counts, OverBudget, Who, zeroed
from jericho_game.web.common.fairshare import AIBudget
from jericho_game.web.common.limits import Limits
from jericho_game.web.round import endings
from jericho_game.web.round.rooms import ClientError, GameService
from jericho_game.web.storage.database import Storage, resolve_db_url

ROOT = Path(__file__).resolve().parents[3]


class Clock:
    """A wall clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


# -- the table ----------------------------------------------------------------------------------------


def test_every_budget_names_its_limits_code_and_setting() -> None:
    assert {"ai.game", "ai.wait", "review", "search", "export", "mail.challenge", "challenge"} <= set(BUDGETS)
    for kind, b in BUDGETS.items():
        assert b.kind == kind and b.counted in ("ledger", "live", "process"), kind
        assert any(b.limit(s) is not None for s in budgeting.SCOPES), kind
        assert (b.window is not None) == (b.counted == "ledger"), kind
        assert b.code and b.status in (429, 503) and b.setting and b.action, kind
    zero = zeroed()
    assert all(zero[k].limit(s) in (0, None) for k in zero for s in budgeting.SCOPES)
    assert zero["challenge"].per_pair == 0 and zero["challenge"].window == BUDGETS["challenge"].window


def test_the_operators_flags_set_the_tables_limits() -> None:
    table = budgeting.from_limits(Limits(ai_per_client=5, ai_games_per_client=7, seeks_per_client=1, review_queue=9))
    assert table["ai.wait"].per_group == table["ai.wait"].per_account == 5
    assert table["ai.game"].per_group == 7 and table["seek"].per_account == 1 and table["review"].total == 9
    assert budgeting.per_client(table, "ai.wait") == 5 and budgeting.per_client({}, "ai.wait") is None


def test_the_docs_table_lists_every_budget() -> None:
    """docs/web.md, "Budgets": the table as the code has it, row by row."""
    docs = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    section = docs[docs.index("\n## Budgets") :]
    section = section[: section.index("\n## ", 5)]
    table = budgeting.markdown_table()
    for kind in BUDGETS:
        row = next(line for line in table.splitlines() if line.startswith(f"| `{kind}` |"))
        assert row in section.splitlines(), f"docs/web.md's Budgets table differs for {kind}: {row}"
    assert table.splitlines()[0] in section.splitlines()


def test_a_refusal_names_the_budget_the_scope_the_count_and_the_limit() -> None:
    policy = BudgetPolicy.__new__(BudgetPolicy)  # judging needs no database
    policy.budgets, policy.refused, policy._lock = dict(BUDGETS), __import__("collections").Counter(), threading.Lock()
    with pytest.raises(OverBudget) as exc:
        policy.judge("challenge", Counts(group=3, account=20, recipient=2, pair=1))
    e = exc.value
    assert (e.code, e.status, e.kind, e.scope, e.have, e.limit) == ("rate_limited", 429, "challenge", "account", 20, 20)
    assert e.message == (
        "Challenges sent by your account in the last hour: 20 challenges, the most there may be is 20; "
        "wait a while and try again; nothing was changed"
    )
    with pytest.raises(OverBudget, match="to this player"):
        policy.judge("challenge", Counts(recipient=30))
    policy.judge("challenge", Counts(group=39, account=19, recipient=29, pair=5, total=None))
    assert policy.refused["challenge"] == 2


# -- the three ways of counting -------------------------------------------------------------------------


def test_a_ledger_budget_counts_every_scope_in_its_window(db: str) -> None:
    clock = Clock()
    table = {
        "x": Budget("x", "things", "ledger", "things", per_group=3, per_account=2, per_recipient=4, per_pair=1,
                    total=6, window=60.0, code="x_quota"),
    }  # fmt: skip
    s = Storage(resolve_db_url(db))
    policy = BudgetPolicy(s, table, clock=clock)
    try:

        def ask(who: Who, to: str | None = None) -> str | None:
            try:
                with s.engine.begin() as conn:
                    policy.ask(conn, "x", who, recipient=to)
            except OverBudget as exc:
                return exc.scope
            return None

        assert ask(Who("10.0.0.1", 1), "a") is None
        assert ask(Who("10.0.0.1", 1), "a") == "pair"  # one client towards one recipient
        assert ask(Who("10.0.0.2", 1), "a") == "pair"  # the same account from elsewhere too
        assert ask(Who("10.0.0.1", 1), "b") is None
        assert ask(Who("10.0.0.1", 1), "c") == "account"
        assert ask(Who("10.0.0.1", None), "c") is None
        assert ask(Who("10.0.0.1", None), "d") == "group"
        for i in range(3):
            assert ask(Who(f"10.0.1.{i}", 10 + i), "r") is None
        assert ask(Who("10.0.1.9", 19), "r") == "total"  # 6 in all
        assert policy.spent("x", Who("10.0.0.1", 1)).group == 3
        clock.now += 61  # the window slides: everything spent is forgotten
        assert ask(Who("10.0.0.1", 1), "a") is None
        with s.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM budget_spend").scalar_one() == 7  # refusals wrote nothing
    finally:
        s.close()


def test_a_live_budget_asks_its_features_counter_and_a_process_budget_is_held_while_it_runs(tmp_path: Path) -> None:
    s = Storage(resolve_db_url(str(tmp_path / "g.sqlite3")))
    policy = BudgetPolicy(s)
    try:
        with pytest.raises(LookupError, match="no counter"), s.engine.begin() as conn:
            policy.ask(conn, "seek", Who("10.0.0.1"))
        policy.live("seek", lambda conn, b, who, to, now: Counts(group=3))
        with pytest.raises(OverBudget) as exc, s.engine.begin() as conn:
            policy.ask(conn, "seek", Who("10.0.0.1"))
        assert exc.value.code == "seek_quota"
        with pytest.raises(ValueError, match="hold"), s.engine.begin() as conn:
            policy.ask(conn, "search", Who("10.0.0.1"))
        with policy.hold("search", Who("10.0.0.1", 7)):
            with pytest.raises(OverBudget) as exc, policy.hold("search", Who("10.0.0.1")):
                pass
            assert exc.value.code == "search_busy" and exc.value.scope == "group"
            with pytest.raises(OverBudget) as exc, policy.hold("search", Who("10.0.0.2", 7)):
                pass
            assert exc.value.scope == "account"
            with policy.hold("search", Who("10.0.0.2")):  # two at once on this process, then no more
                with pytest.raises(OverBudget) as exc, policy.hold("search", Who("10.0.0.3")):
                    pass
                assert exc.value.scope == "total"
        with policy.hold("search", Who("10.0.0.1", 7)):  # released
            pass

        async def two() -> list[str]:
            names = await asyncio.gather(
                policy.run("export", Who("10.0.0.1"), lambda: threading.current_thread().name),
                policy.run("export", Who("10.0.0.2"), lambda: threading.current_thread().name),
            )
            return list(names)

        assert all(n.startswith("budget-export") for n in asyncio.run(two()))  # never the shared pool

        async def gone() -> None:  # the client goes away while its export runs: its place stays taken
            started, finish = threading.Event(), threading.Event()

            def slow() -> None:
                started.set()
                finish.wait(30)

            task = asyncio.ensure_future(policy.run("export", Who("10.0.0.9"), slow))
            await asyncio.get_running_loop().run_in_executor(None, started.wait, 30)
            task.cancel()
            with pytest.raises(OverBudget):
                await policy.run("export", Who("10.0.0.9"), lambda: None)
            finish.set()
            for _ in range(200):
                await asyncio.sleep(0.01)
                if not policy._held.get("export"):
                    break
            await policy.run("export", Who("10.0.0.9"), lambda: None)  # given back once the thread is done

        asyncio.run(gone())
    finally:
        policy.close()
        s.close()


# -- finding 1: one client spent the whole AI admission budget ---------------------------------------------


def _runner(s: Storage, slots: int = 2, cheap: int = 1) -> None:
    s.runner_beat("test-runner", slots, cheap)


def test_one_client_cannot_take_every_ai_game_and_a_fresh_client_is_admitted(db: str) -> None:
    """The audit: one address made 2 `master` + 50 `hard` games in 2.6 s without moving in any, and
    every other client got `ai_full` at every level.  Now an AI game counts against its own client
    from creation to its end, whoever is to move: the attacker gets 4 games (one `master`: half of
    the expensive lane at most), and a fresh client is admitted at every level."""
    s = Storage(resolve_db_url(db))
    svc = GameService(s, ai_budget=AIBudget(), ai_per_client=2)
    try:
        _runner(s)
        answers = []
        for level in ["master"] * 2 + ["hard"] * 50:
            try:
                svc.create({"mode": "ai", "level": level, "side": "south"}, "203.0.113.7")
                answers.append(("ok", level))
            except ClientError as exc:
                answers.append((exc.code, level))
        admitted = [lv for code, lv in answers if code == "ok"]
        assert admitted == ["master", "hard", "hard", "hard"], answers[:6]
        assert answers[1] == ("ai_full", "master")  # a second master would hold 6 s of the lane's 8
        assert {code for code, _ in answers[5:]} == {"ai_games"}
        for level in ("easy", "medium", "hard", "master"):
            svc.create({"mode": "ai", "level": level, "side": "south"}, f"198.51.100.{len(level)}")
        assert s.count() == 8  # refusals stored nothing
    finally:
        s.close()


def test_an_ai_game_whose_player_never_moves_stops_counting_and_is_aborted(tmp_path: Path) -> None:
    """lichess aborts a game whose first move never comes: here an AI game whose player has not moved
    for `ai_first_move` seconds since its turn began counts in no budget and the sweep aborts it (no
    result); a game its player moved in keeps counting, and is never aborted."""
    s = Storage(resolve_db_url(str(tmp_path / "g.sqlite3")))
    svc = GameService(s, ai_budget=AIBudget(), ai_per_client=2, ai_first_move=60.0)
    try:
        _runner(s)
        idle = [svc.create({"mode": "ai", "level": "easy", "side": "south"}, "203.0.113.7")[0] for _ in range(3)]
        played, _ = svc.create({"mode": "ai", "level": "easy", "side": "south"}, "203.0.113.7")
        asyncio.run(svc.move(played.rec.id, frozenset({"south"}), "5R@d2", 0))
        with pytest.raises(ClientError) as exc:
            svc.create({"mode": "ai", "level": "easy", "side": "south"}, "203.0.113.7")
        assert exc.value.code == "ai_games" and exc.value.status == 429
        assert "AI games being played from your address at once: 4 games" in exc.value.message
        with s.engine.begin() as conn:  # the AI answered the played game (its job is done)
            conn.exec_driver_sql("DELETE FROM ai_jobs")
            conn.exec_driver_sql(f"INSERT INTO moves VALUES ('{played.rec.id}', 1, '1G@d3', {time.time()})")
        ids = ", ".join(f"'{r.rec.id}'" for r in idle)
        with s.engine.begin() as conn:  # the idle three: their player's turn began 61 s ago
            conn.exec_driver_sql(f"UPDATE games SET updated_at = {time.time() - 61} WHERE id IN ({ids})")
        svc.rooms.clear()
        svc.create({"mode": "ai", "level": "easy", "side": "south"}, "203.0.113.7")  # the idle three count no more
        stale = s.unstarted_ai_games(time.time() - 60)
        assert set(stale) == {r.rec.id for r in idle}
        # a player with the game open may think about the first move for up to ten minutes
        s.set_presence(idle[0].rec.id, "p1", {"south": 1}, time.time())
        assert endings.abort_unstarted(svc, idle[0].rec.id) is None
        s.set_presence(idle[0].rec.id, "p1", {"south": 0}, time.time())
        for gid in stale:
            change = endings.abort_unstarted(svc, gid)
            assert change is not None and change.room.rec.reason == "aborted" and change.room.rec.result is None
        assert endings.abort_unstarted(svc, played.rec.id) is None
        assert s.unstarted_ai_games(time.time() - 60) == []
    finally:
        s.close()


def test_the_operators_flag_sets_the_ai_games_budget() -> None:
    from jericho_game.web.common import fairshare

    assert any(flag == "--ai-games-per-client" for flag, *_ in fairshare.FLAGS)
    assert re.search(r"AI games being played", BUDGETS["ai.game"].action)


def test_an_operator_sets_any_limit_of_the_table_and_a_wrong_setting_is_named() -> None:
    table = budgeting.with_settings(
        BUDGETS, ["signup.group=20", "search.total=4", "challenge.pair=none", "mail.window=60"]
    )
    assert table["signup"].per_group == 20 and table["search"].total == 4 and table["challenge"].per_pair is None
    assert table["mail"].window == 60 and BUDGETS["signup"].per_group == 5  # the shipped table is unchanged
    for bad, says in [
        ("signup", "KIND.SCOPE=N"),
        ("nosuch.group=1", "no budget 'nosuch'"),
        ("signup.people=1", "the scope is one of"),
        ("signup.group=lots", "is no number"),
        ("signup.group=-1", "from 0 up"),
        ("search.window=60", "only a ledger budget has a window"),
    ]:
        with pytest.raises(ValueError, match=re.escape(says)):
            budgeting.with_settings(BUDGETS, [bad])


def test_jericho_serve_refuses_a_wrong_budget_setting_by_name(tmp_path: Path) -> None:
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "jericho_game", "serve", "--db", str(tmp_path / "g.sqlite3"), "--budget", "x.y=1"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "no budget 'x'" in out.stdout + out.stderr
