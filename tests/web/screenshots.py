"""Screenshots of every page of the site (issue 24 point 7): the stops of tests/web/tour.py in
light, dark, high contrast and French, at 1280x800 and on a phone (390x844), as PNG files named
``PAGE-LOOK-SIZE.png``.  One command makes them all (a server on a fresh database, Debian's
chromium):

    python3 tasks.py screenshots            # every page at both sizes, the looks in turn: artifacts/screenshots/
    python3 tasks.py screenshots --all      # every page in every look at both sizes: artifacts/screenshots-all/
    .venv/bin/python -m tests.web.screenshots --out DIR [--pages game,rules] [--looks fr] [--sizes phone]

The default set (kept in the repository, 32 pictures) has each page once at 1280x800 and once on
a phone, in light, dark, high contrast and French in turn, so that every look is seen on every
size; ``--all`` makes the 128.  The pictures are the visible screen, not the whole page, reduced
to 256 colours when Pillow is installed (a third of the size).
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterable
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from tests.web import tour
from tests.web.test_browser import chromium_path, serve_in_thread, watch_errors

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "artifacts" / "screenshots"
OUT_ALL = ROOT / "artifacts" / "screenshots-all"


def in_turn() -> list[tuple[str, str, str]]:
    """(page, look, size) of the default set: each page at each size once, the looks in turn."""
    looks = list(tour.LOOKS)
    out = []
    for i, name in enumerate(tour.STOPS):
        out.append((name, looks[i % len(looks)], "1280x800"))
        out.append((name, looks[(i + 2) % len(looks)], "phone"))
    return out


def shrink(path: Path) -> None:
    """The PNG in 256 colours (Pillow, when installed): UI pictures lose nothing one can see."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - the plot extra brings it
        return
    with Image.open(path) as im:
        small = im.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def every(
    pages: Iterable[str] | None = None, looks: Iterable[str] | None = None, sizes: Iterable[str] | None = None
) -> list[tuple[str, str, str]]:
    """(page, look, size) of every combination asked for (all of them by default)."""
    return [
        (name, look, size)
        for look in looks or tour.LOOKS
        for size in sizes or tour.SIZES
        for name in pages or tour.STOPS
    ]


def take(server: str, browser: Browser, out: Path, shots: list[tuple[str, str, str]]) -> list[Path]:
    """Save the screenshots; raise if a page has a script error.  Returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for look in dict.fromkeys(look for _, look, _ in shots):
        for size in dict.fromkeys(size for _, lk, size in shots if lk == look):
            ctx = tour.new_context(browser, look, tour.SIZES[size])
            page = ctx.new_page()
            errors = watch_errors(page)
            for name in [n for n, lk, sz in shots if lk == look and sz == size]:
                tour.STOPS[name](page, server)
                page.wait_for_function("() => document.fonts.status === 'loaded'")
                if name not in ("lobby", "review"):  # those two are shown where their part of the page is
                    page.evaluate("window.scrollTo(0, 0)")
                if name == "review":
                    page.locator("#review").scroll_into_view_if_needed()
                path = out / f"{name}-{look}-{size}.png"
                page.screenshot(path=str(path), animations="disabled")
                shrink(path)
                written.append(path)
            real = [e for e in errors if "status of 404" not in e]
            ctx.close()
            if real:
                raise RuntimeError(f"script errors in {look} at {size}: {real}")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, help=f"folder (default {OUT.relative_to(ROOT)}, or with --all {OUT_ALL.relative_to(ROOT)})"
    )
    parser.add_argument("--all", action="store_true", help="every page in every look at both sizes")
    parser.add_argument("--pages", help=f"comma-separated, of: {','.join(tour.STOPS)}")
    parser.add_argument("--looks", help=f"comma-separated, of: {','.join(tour.LOOKS)}")
    parser.add_argument("--sizes", help=f"comma-separated, of: {','.join(tour.SIZES)}")
    args = parser.parse_args(argv)
    from argon2 import PasswordHasher

    from jericho_game.web.server import create_app

    split = lambda v: v.split(",") if v else None  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(
            str(Path(tmp) / "games.sqlite3"), password_hasher=PasswordHasher(time_cost=1, memory_cost=1024)
        )
        serving = serve_in_thread(app)
        server = next(serving)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=chromium_path(), args=["--no-sandbox", "--disable-dev-shm-usage"]
            )
            try:
                picked = args.all or args.pages or args.looks or args.sizes
                shots = every(split(args.pages), split(args.looks), split(args.sizes)) if picked else in_turn()
                out = args.out or (OUT_ALL if args.all else OUT)
                files = take(server, browser, out, shots)
            finally:
                browser.close()
        next(serving, None)  # stop the server
    total = sum(f.stat().st_size for f in files)
    print(f"{len(files)} screenshots, {total / 1e6:.1f} MB, in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
