"""Build the optional C kernel, ``jericho_game._kernel`` (metadata lives in pyproject.toml).

When no C compiler (or no Python headers) is available the build warns and installs
the package without the extension: everything then runs on the pure-Python core.
Set ``JERICHO_REQUIRE_KERNEL=1`` to make a failed build an error instead (CI does).
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """``build_ext`` that falls back to the pure-Python core when compiling fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler failure means "no kernel"
            self._skip(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._skip(exc)

    def _skip(self, exc: BaseException) -> None:
        if os.environ.get("JERICHO_REQUIRE_KERNEL") == "1":
            raise exc
        print(
            f"WARNING: the C kernel could not be built ({exc}); jericho-game will use the "
            "pure-Python core (slower). Install gcc and the Python headers to build it.",
            file=sys.stderr,
        )


setup(
    ext_modules=[
        Extension(
            "jericho_game._kernel",
            sources=["src/jericho_game/_kernel.c"],
            optional=True,  # the compiler flags are Python's own (-O3 on CPython's usual builds)
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
