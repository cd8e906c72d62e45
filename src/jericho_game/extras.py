"""Optional extras: say which one to install when a feature's packages are missing.

The engine needs nothing beyond the standard library; the adapters, the web app and the
charts need third-party packages grouped as extras of the ``jericho-game`` distribution
(``rl``, ``web``, ``postgres``, ``plot``).  A bare ``ModuleNotFoundError: numpy`` does not
tell a user what to do, so modules that need an extra wrap their imports::

    try:
        import numpy as np
    except ImportError as exc:
        raise missing_extra("the tensor encoding", "rl", exc) from exc
"""

from __future__ import annotations

DISTRIBUTION = "jericho-game"


class MissingExtraError(ModuleNotFoundError):
    """A feature needs an optional extra that is not installed; the message names the extra.

    A subclass of :class:`ModuleNotFoundError`, so code that already catches
    ``ImportError`` keeps working.
    """

    def __init__(self, message: str, *, extra: str, name: str | None = None) -> None:
        super().__init__(message, name=name)
        self.extra = extra


def install_hint(extra: str) -> str:
    """The pip command line that installs ``extra``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing_extra(feature: str, extra: str, cause: ImportError) -> MissingExtraError:
    """The error to raise when ``feature`` could not import a package of ``extra``."""
    if isinstance(cause, ModuleNotFoundError):
        message = f"{feature} needs the {extra} extra: {install_hint(extra)} (missing: {cause.name or cause})"
    else:  # the package is there but too old (or broken): "cannot import name ..."
        message = (
            f"{feature} needs the {extra} extra at the versions it requires: "
            f"pip install --upgrade '{DISTRIBUTION}[{extra}]' ({cause})"
        )
    return MissingExtraError(message, extra=extra, name=cause.name)
