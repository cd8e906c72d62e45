"""New passwords (web/accounts/passwords.py): zxcvbn's strength score, not only its list (issue 33,
item 10: ``Password1!``, ``P@ssw0rd123`` and ``jericho1234`` were accepted)."""

from __future__ import annotations

import warnings

import pytest

from jericho_game.web.accounts.accounts import CSRF_HEADER, check_password
from jericho_game.web.accounts.passwords import MIN_SCORE, password_problem, strength
from jericho_game.web.round.rooms import ClientError

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from argon2 import PasswordHasher  # noqa: E402

from jericho_game.web.server import create_app  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


@pytest.mark.parametrize(
    "weak", ["Password1!", "P@ssw0rd123", "jericho1234", "Jericho2026!", "Welcome2026!", "Qwerty12345!"]
)
def test_the_audits_guessable_passwords_are_refused_by_their_score(weak: str) -> None:
    assert strength(weak)[0] < MIN_SCORE
    why = password_problem(weak, "alice")
    assert why is not None and "too easy to guess" in why and f"{MIN_SCORE} is needed" in why
    assert weak not in why, "never quoted back"
    with pytest.raises(ClientError) as err:
        check_password(weak, "alice")
    assert err.value.code == "bad_password" and "scores" in err.value.message


def test_the_site_and_the_username_count_as_known_words() -> None:
    assert strength("startis1234")[0] < MIN_SCORE and strength("Monolith2020")[0] < MIN_SCORE
    assert "too easy to guess" in (password_problem("startis1234", None) or "")


@pytest.mark.parametrize(
    "good",
    [
        "correct horse battery staple",  # the tests' fixtures: cheap to hash, strong enough
        "a long enough password",
        "tr0ub4dor & 3 for B",
        "ten chars!",
        "alice plays jericho",
        "x" * 50 + " purple elephant dances",  # long: zxcvbn reads its first 72 characters only
    ],
)
def test_strong_passwords_pass(good: str) -> None:
    assert password_problem(good, "alice") is None, password_problem(good, "alice")


def test_sign_up_refuses_a_weak_password_and_says_why(tmp_path: object) -> None:
    app = create_app(str(tmp_path) + "/games.sqlite3", ai_processes=-1, password_hasher=CHEAP)  # type: ignore[operator]
    with TestClient(app) as c:
        csrf = c.get("/api/account").json()["csrf"]
        r = c.post(
            "/api/account/signup", json={"username": "alice", "password": "P@ssw0rd123"}, headers={CSRF_HEADER: csrf}
        )
        assert r.status_code == 400 and r.json()["error"] == "bad_password"
        assert "too easy to guess" in r.json()["message"] and "P@ssw0rd123" not in r.text
        r = c.post(
            "/api/account/signup",
            json={"username": "alice", "password": "P@ssw0rd123"},
            headers={CSRF_HEADER: csrf, "Accept-Language": "fr"},
        )
        assert r.status_code == 400 and "P@ssw0rd123" not in r.text
        assert c.get("/api/account").json().get("account") is None
