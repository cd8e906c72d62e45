"""Notifications in a real browser (issue 23, point 3): a notice and a sound when it becomes your
turn, a move arrives, an offer is made or the game ends; the sound switch is remembered; the
browser's Notification API is asked for only when the player opts in, and used only while the
tab is hidden; and the e-mail settings page, whose confirmation mail arrives at a real local SMTP
server.  The page's AudioContext and Notification are recorded by stand-ins (a headless browser
plays no sound and shows no notification), and the tab's visibility is set by the test."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, BrowserContext, Page, expect

from jericho_game.web.server import create_app
from jericho_game.web.social.notify import MailPolicy
from tests.web import test_browser
from tests.web.social.test_notify import Inbox, smtp_server
from tests.web.test_browser import ARTIFACTS, DESKTOP, PHONE, play_one, serve_in_thread, watch_errors

browser = test_browser.browser

STAND_INS = """
window.__tones = [];
window.__notes = [];
window.__asked = 0;
class FakeAudio {
  constructor() { this.state = "running"; this.currentTime = 0; this.destination = {}; }
  resume() { return Promise.resolve(); }
  createOscillator() {
    const o = { type: "", frequency: { value: 0 }, connect: (g) => g, stop() {},
      start: () => window.__tones.push(o.frequency.value) };
    return o;
  }
  createGain() {
    return { gain: { setValueAtTime() {}, exponentialRampToValueAtTime() {} }, connect: (d) => d };
  }
}
window.AudioContext = FakeAudio;
class FakeNotification {
  constructor(title, options) { window.__notes.push({ title, body: options.body, tag: options.tag }); }
  close() {}
}
FakeNotification.permission = sessionStorage.getItem("perm") || "default";
FakeNotification.requestPermission = () => {
  window.__asked += 1;
  FakeNotification.permission = "granted";
  sessionStorage.setItem("perm", "granted");
  return Promise.resolve("granted");
};
window.Notification = FakeNotification;
Object.defineProperty(Document.prototype, "hidden", { get() { return !!window.__hidden; } });
"""


@pytest.fixture(scope="module")
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as running:
        yield running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, smtp: tuple[Inbox, int]) -> Iterator[str]:
    db = tmp_path_factory.mktemp("notify") / "games.sqlite3"
    app = create_app(
        str(db),
        ai_processes=0,
        password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1),
        smtp=f"smtp://127.0.0.1:{smtp[1]}?from=jericho@example.org",
        mail_policy=MailPolicy(poll=0.2),
        public_url="https://jericho.example.org",
    )
    yield from serve_in_thread(app)


def _context(browser: Browser, viewport: dict[str, int]) -> BrowserContext:
    ctx = browser.new_context(viewport=viewport)
    ctx.add_init_script(STAND_INS)
    return ctx


def tones(page: Page) -> int:
    return int(page.evaluate("window.__tones.length"))


def notice(page: Page) -> Any:
    return page.locator("#notice")


def test_notices_sounds_and_browser_notifications_of_an_online_game(server: str, browser: Browser) -> None:
    a_ctx, b_ctx = _context(browser, DESKTOP), _context(browser, PHONE)
    a, b = a_ctx.new_page(), b_ctx.new_page()
    errors = [watch_errors(p) for p in (a, b)]
    a.goto(server + "/")
    expect(a.locator("#levels-main input").first).to_be_visible()  # wired: a click before submits the bare form
    a.get_by_label("Online").check()
    a.select_option("select[name=side]", "south")
    a.click("#start")
    a.wait_for_url("**/g/*")
    invite = a.locator("#invite-link").input_value()
    expect(a.locator("#switch-sound")).to_be_checked()  # sound is on by default
    expect(a.locator("#switch-browser")).not_to_be_checked()
    assert tones(a) == 0 and a.evaluate("window.__asked") == 0  # nothing asked before opting in

    # Brice joins: it is Ada's turn (South moves first): a notice and a sound
    b.goto(invite)
    expect(notice(a)).to_have_text("Your turn.", timeout=20_000)
    expect(notice(a)).to_be_visible()
    # Functions, not expressions: Playwright polls an expression that is not yet true with eval(),
    # which the page's CSP (script-src 'self') refuses; a function goes through the debugger protocol.
    a.wait_for_function("() => window.__tones.length > 0")
    assert a.evaluate("window.__notes.length") == 0  # the tab is visible: no browser notification

    # Ada opts in: only now is the permission asked for, once
    a.click("#switch-browser")
    expect(a.locator("#switch-browser")).to_be_checked()
    assert a.evaluate("window.__asked") == 1
    play_one(a, 0)
    expect(notice(b)).to_contain_text("A move has arrived", timeout=20_000)
    expect(notice(b)).to_contain_text("Your turn.", timeout=20_000)
    b.wait_for_function("() => window.__tones.length > 0")
    b.screenshot(path=str(ARTIFACTS / "notice-your-turn-phone.png"), animations="disabled")

    # Ada's tab goes to the background: Brice's move reaches her as a browser notification
    a.evaluate("window.__hidden = true")
    play_one(b, 1)
    a.wait_for_function("() => window.__notes.length === 1")
    note = a.evaluate("window.__notes[0]")
    assert note["title"] == "Jericho" and "Your turn." in note["body"] and note["tag"].startswith("jericho-")
    a.evaluate("window.__hidden = false")

    # Brice turns the sound off: remembered after a reload, and no tone with the next notice
    b.click("#switch-sound")
    b.reload()
    expect(b.locator("#switch-sound")).not_to_be_checked()
    expect(b.locator("#moves .mv")).to_have_count(2)
    before = tones(b)
    play_one(a, 2)
    expect(notice(b)).to_contain_text("Your turn.", timeout=20_000)
    time.sleep(0.3)
    assert tones(b) == before == 0

    # an offer and the game's end
    b.click("#btn-draw")
    expect(notice(a)).to_have_text("Your opponent offers a draw.", timeout=20_000)
    a.click("#btn-resign")
    a.click("#btn-resign")
    expect(notice(b)).to_have_text("The game has ended.", timeout=20_000)
    expect(notice(a)).to_have_text("The game has ended.", timeout=20_000)
    a.screenshot(path=str(ARTIFACTS / "notice-game-ended-desktop.png"), animations="disabled")
    for e in errors:
        assert e == [], e
    a_ctx.close()
    b_ctx.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_settings_page_takes_an_address_confirmed_by_mail(
    server: str, browser: Browser, smtp: tuple[Inbox, int], viewport: dict[str, int]
) -> None:
    inbox = smtp[0]
    ctx = _context(browser, viewport)
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/")
    page.click("#nav-settings")  # the home page links the settings
    page.wait_for_url("**/settings")
    expect(page.locator("#email-login")).to_be_visible()  # e-mail belongs to an account
    expect(page.locator("#switch-sound")).to_be_checked()  # this browser's switches need none
    name = f"ada{viewport['width']}"
    page.goto(server + "/signup?next=/settings")
    page.fill("#username", name)
    page.fill("#password", "a long enough password for ada")
    page.click("#account-submit")
    page.wait_for_url("**/settings")
    expect(page.locator("#email-form")).to_be_visible()
    expect(page.locator("#mail-turn")).to_be_checked()
    page.fill("#email-input", "ada<x>@example.org")
    page.click("#email-save")
    expect(page.locator("#email-error")).not_to_be_empty()
    n = len(inbox.mails)
    page.fill("#email-input", f"{name}@example.org")
    page.uncheck("#mail-invite")
    page.click("#email-save")
    expect(page.locator("#email-state")).to_contain_text("Waiting for confirmation")
    page.screenshot(path=str(ARTIFACTS / f"settings-email-{viewport['width']}.png"), full_page=True)
    msg = inbox.wait(n + 1)[n]
    assert msg["To"] == f"{name}@example.org"
    link = re.search(r"https?://\S+/api/notify/confirm\?\S+", msg.get_content())
    assert link
    parts = urlsplit(link.group(0))
    page.goto(server + parts.path + "?" + parts.query)
    page.wait_for_url("**/settings?email=confirmed")
    expect(page.locator("#settings-result")).to_have_text("Your e-mail address is confirmed.")
    expect(page.locator("#email-state")).to_have_text("Confirmed.")
    expect(page.locator("#mail-invite")).not_to_be_checked()
    # the one refusal asked for (the bad address) is the only error the console saw
    assert [e for e in errors if "status of 400" not in e] == [], errors
    ctx.close()
