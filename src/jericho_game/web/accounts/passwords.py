"""The password policy of new passwords (sign-up, ``jericho user add`` / ``passwd``).

OWASP ASVS level 1 (V2.1): at least 10 characters here (ASVS asks for 12 at level 1 without a
breached-password check, and accepts fewer with one), at most 256, any characters but control
characters, no composition rules, and a check against a list of passwords that attackers try
first: the 30,000 most common passwords of zxcvbn's list (the ``zxcvbn`` package on PyPI, MIT,
maintained; its ``passwords`` frequency list comes from leaked-password corpora).  A password
also may not be one or two characters repeated ("          ", "abababababab") or mostly the
username.  Each refusal says why.  Existing accounts whose passwords predate a rule still log
in: the policy is checked only when a password is set.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from jericho_game.extras import missing_extra

__all__ = ["MIN_LENGTH", "MAX_LENGTH", "password_problem", "common_passwords"]

MIN_LENGTH = 10
MAX_LENGTH = 256


@lru_cache(maxsize=1)
def common_passwords() -> frozenset[str]:
    """zxcvbn's list of common passwords (lower case), loaded once on first use."""
    try:
        from zxcvbn.frequency_lists import FREQUENCY_LISTS
    except ImportError as exc:
        raise missing_extra("the common-password check", "web", exc) from exc
    return frozenset(FREQUENCY_LISTS["passwords"])


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
    return None
