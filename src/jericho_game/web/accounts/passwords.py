"""The password policy of new passwords (sign-up, ``jericho user add`` / ``passwd``).

OWASP ASVS level 1 (V2.1): at least 10 characters here (ASVS asks for 12 at level 1 without a
breached-password check, and accepts fewer with one), at most 256, any characters but control
characters, no composition rules, and a check against a list of passwords that attackers try
first: the 30,000 most common passwords of zxcvbn's list (the ``zxcvbn`` package on PyPI, MIT,
maintained; its ``passwords`` frequency list comes from leaked-password corpora).  A password
also may not be one or two characters repeated ("          ", "abababababab") or mostly the
username.  Last, zxcvbn's own estimate of how many guesses the password takes must reach
:data:`MIN_SCORE` (3 of 4: about 10^8 guesses, "safely unguessable" in zxcvbn's words, which is
what Dropbox, its author, asks for): the list alone let ``Password1!``, ``P@ssw0rd123`` and
``jericho1234`` through (issue 33), variations that zxcvbn's patterns (l33t, dates, sequences,
a word and digits) see through.  zxcvbn reads at most its first :data:`SCORED_CHARS` characters
(its own cap: the estimate's time grows with the length).  Each refusal says why.  Existing
accounts whose passwords predate a rule still log in: the policy is checked only when a password
is set.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from jericho_game.extras import missing_extra

__all__ = ["MIN_LENGTH", "MAX_LENGTH", "MIN_SCORE", "password_problem", "common_passwords", "strength"]

MIN_LENGTH = 10
MAX_LENGTH = 256
MIN_SCORE = 3  # zxcvbn's score, 0-4: 3 is "safely unguessable: moderate protection from offline attack"
SCORED_CHARS = 72  # zxcvbn's own cap on what it reads
SITE_WORDS = ("jericho", "startis", "roubira", "monolith", "trumpet")  # what an attacker of this site tries


@lru_cache(maxsize=1)
def common_passwords() -> frozenset[str]:
    """zxcvbn's list of common passwords (lower case), loaded once on first use."""
    try:
        from zxcvbn.frequency_lists import FREQUENCY_LISTS
    except ImportError as exc:
        raise missing_extra("the common-password check", "web", exc) from exc
    return frozenset(FREQUENCY_LISTS["passwords"])


def strength(password: str, username: str | None = None) -> tuple[int, str]:
    """zxcvbn's score (0-4) of ``password`` (its first :data:`SCORED_CHARS` characters), with the
    username and the site's words counted as known, and its warning ("" when none)."""
    try:
        from zxcvbn import zxcvbn
    except ImportError as exc:
        raise missing_extra("the password strength check", "web", exc) from exc
    known = [*SITE_WORDS, *([username] if username else [])]
    result = zxcvbn(password[:SCORED_CHARS], user_inputs=known, max_length=SCORED_CHARS)
    return int(result["score"]), str(result["feedback"].get("warning") or "")


def password_problem(password: Any, username: str | None = None) -> str | None:
    """Why ``password`` may not be set (a message for the person choosing it), or None.  The
    message never quotes the password."""
    if not isinstance(password, str) or not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        return (
            f"a password needs {MIN_LENGTH} to {MAX_LENGTH} characters "
            "(a few words with spaces are easy to remember and hard to guess)"
        )
    if any(unicodedata.category(c) == "Cc" for c in password):
        return "a password cannot contain control characters"
    lower = password.lower()
    common = common_passwords()
    if lower in common or "".join(lower.split()) in common:
        return "this password is on the list of the 30,000 most common passwords, which attackers try first"
    if len(set(password)) <= 2:
        return "this password repeats one or two characters: it is among the first an attacker tries"
    if username:
        rest = "".join(lower.replace(username.lower(), "").split())
        if len(rest) < len(lower) and (len(rest) < 6 or rest.isdigit() or rest in common or len(set(rest)) <= 2):
            return "this password is mostly your username, which everybody can see"
    score, warning = strength(password, username)
    if score < MIN_SCORE:
        why = f" ({warning[:1].lower()}{warning[1:].rstrip('.')})" if warning else ""
        return (
            f"this password is too easy to guess{why}: it scores {score} of 4 on zxcvbn's strength estimate, "
            f"{MIN_SCORE} is needed; a few unrelated words with spaces are easy to remember and hard to guess"
        )
    return None
