"""An account's board and piece themes (issue 34, point 4; web/accounts/prefs.py), on SQLite and
PostgreSQL: the defaults, a change of one or both, two stores (two processes) on one database, and
bad input refused naming the choices with nothing lost."""

from __future__ import annotations

import pytest

from jericho_game.web.accounts.prefs import BOARDS, PIECES, Prefs
from jericho_game.web.round.rooms import ClientError
from jericho_game.web.storage.database import Storage, resolve_db_url


def test_themes_are_kept_per_account_and_bad_input_loses_nothing(db: str) -> None:
    one, two = Storage(resolve_db_url(db)), Storage(resolve_db_url(db))  # as two server processes
    try:
        a, b = Prefs(one), Prefs(two)
        assert a.get(7) == {"board": BOARDS[0], "pieces": PIECES[0]}
        assert a.set(7, {"board": "slate"}) == {"board": "slate", "pieces": "classic"}
        assert b.set(7, {"pieces": "deep"}) == {"board": "slate", "pieces": "deep"}  # the other keeps the board
        assert a.get(7) == {"board": "slate", "pieces": "deep"}
        assert b.get(8) == {"board": "wood", "pieces": "classic"}  # one account's choice is its own
        for body, words in (
            ({"board": "neon"}, "wood, slate, paper"),
            ({"pieces": 3}, "classic, bright, deep"),
            ({"colour": "red"}, "'board' and/or 'pieces'"),
        ):
            with pytest.raises(ClientError) as err:
                a.set(7, body)
            assert err.value.code == "bad_request" and words in err.value.message, err.value.message
        assert b.get(7) == {"board": "slate", "pieces": "deep"}
    finally:
        one.close()
        two.close()
