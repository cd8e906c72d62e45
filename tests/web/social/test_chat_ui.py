"""The games' chat in a real browser (issue 23, point 4): two players, one on a desktop and one on
a phone, chat with the keyboard alone; a message that would be markup stays text; the phone's
player mutes the opponent, reports a message; a watcher sees only the spectators' room during
the game and both rooms once it is over.  Screenshots go to artifacts/."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.web import test_browser
from tests.web.test_browser import ARTIFACTS, DESKTOP, PHONE, play_one, watch_errors

server = test_browser.server
browser = test_browser.browser

EVIL = '<img src=x onerror="window.p=1">'


def pwned(page: Page) -> Any:
    return page.evaluate("() => typeof window.p !== 'undefined' || !!document.querySelector('#chat img')")


def say_by_keyboard(page: Page, text: str) -> None:
    """Write in the chat with the keyboard only: Tab into the field, type, Enter."""
    page.locator("#chat-log").focus()
    for _ in range(12):  # from the log, past its Report buttons, to the message field
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement && document.activeElement.id") == "chat-input":
            break
    expect(page.locator("#chat-input")).to_be_focused()
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    expect(page.locator("#chat-input")).to_have_value("")  # stored: the field is cleared


def test_two_players_chat_on_desktop_and_phone_and_a_watcher_waits(server: str, browser: Browser) -> None:
    a_ctx = browser.new_context(viewport=DESKTOP)
    b_ctx = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    c_ctx = browser.new_context(viewport=DESKTOP)
    a, b, c = a_ctx.new_page(), b_ctx.new_page(), c_ctx.new_page()
    errors = [watch_errors(p) for p in (a, b, c)]
    for page, name in ((a, "Ada"), (b, "Brice")):
        page.goto(server + "/")
        page.fill("#name-input", name)
        page.click("#name-save")
    g = a.request.post(server + "/api/games", data={"mode": "online", "name": "Ada", "side": "south"}).json()
    a.goto(g["links"]["play"])
    b.goto(g["links"]["invite"])
    expect(b.locator("#north-name")).to_have_text("You (Brice)")
    c.goto(g["links"]["watch"])
    for page in (a, b, c):
        expect(page.locator("#chat")).to_be_visible()

    # the players' room: typed on the desktop, read on the phone, as text
    expect(a.locator("#chat-tab-spectators")).to_be_hidden()  # a player sees the players' room only
    say_by_keyboard(a, EVIL)
    expect(b.locator("#chat-log .chat-text")).to_have_text([EVIL])
    expect(b.locator("#chat-log .chat-author")).to_have_text(["Ada"])
    expect(a.locator("#chat-log .chat-text")).to_have_text([EVIL])
    assert not pwned(a) and not pwned(b)
    say_by_keyboard(b, "bonne chance")
    expect(a.locator("#chat-log .chat-text")).to_have_text([EVIL, "bonne chance"])
    # the phone: the panel fits the screen, its field does not make the phone zoom
    box = b.locator("#chat").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert b.locator("#chat-input").evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 16
    b.locator("#chat").scroll_into_view_if_needed()
    b.screenshot(path=str(ARTIFACTS / "chat-players-phone.png"), animations="disabled")

    # the watcher: the spectators' room only, none of the players' words
    expect(c.locator("#chat-tab-players")).to_be_hidden()
    expect(c.locator("#chat-log .chat-empty")).to_be_visible()
    expect(c.locator("#chat-log .chat-text")).to_have_count(0)
    # anonymous watchers read, accounts write: the box says so and takes nothing (issue 34)
    expect(c.locator("#chat-input")).to_be_disabled()
    expect(c.locator("#chat-signin")).to_contain_text("Sign in or play to chat")

    # the phone's player reports the message, then mutes the opponent
    report = b.locator("#chat-log .chat-report").first
    expect(report).to_have_text("Report")
    report.focus()
    b.keyboard.press("Enter")
    expect(report).to_have_text("Reported")
    expect(b.locator("#chat-note")).to_contain_text("reported")
    play_one(a, 0)  # a move: the next message is written at ply 1
    expect(b.locator("#moves .mv")).to_have_count(1)
    b.locator("#chat-mute").check()
    expect(b.locator("#chat-log .chat-text")).to_have_text(["bonne chance"])  # Ada's words hidden
    say_by_keyboard(a, "are you there?")
    expect(a.locator("#chat-log .chat-text")).to_have_text([EVIL, "bonne chance", "are you there?"])
    b.wait_for_timeout(500)
    expect(b.locator("#chat-log .chat-text")).to_have_text(["bonne chance"])
    b.locator("#chat-mute").uncheck()
    expect(b.locator("#chat-log .chat-text")).to_have_text([EVIL, "bonne chance", "are you there?"])

    # the game ends: both rooms open to everyone; the watcher reads the players' chat, by keyboard
    a.click("#btn-resign")
    a.click("#btn-resign")
    expect(c.locator("#chat-tab-players")).to_be_visible()
    c.locator("#chat-tab-spectators").focus()
    c.keyboard.press("ArrowLeft")
    expect(c.locator("#chat-tab-players")).to_have_attribute("aria-selected", "true")
    expect(c.locator("#chat-log .chat-text")).to_have_text([EVIL, "bonne chance", "are you there?"])
    assert not pwned(c)
    c.locator("#chat").screenshot(path=str(ARTIFACTS / "chat-after-game-desktop.png"), animations="disabled")
    # the replay shows the chat as it stood at the position on the board
    c.click("#btn-replay")  # it opens at the final position (issue 24), with the whole chat
    expect(c.locator("#chat-log .chat-text")).to_have_text([EVIL, "bonne chance", "are you there?"])
    c.click("#rp-first")
    expect(c.locator("#rp-pos")).to_have_text("Start")
    expect(c.locator("#chat-log .chat-text")).to_have_text([EVIL, "bonne chance"])
    c.click("#rp-last")
    expect(c.locator("#chat-log .chat-text")).to_have_text([EVIL, "bonne chance", "are you there?"])
    assert all(not e for e in errors), errors
    for ctx in (a_ctx, b_ctx, c_ctx):
        ctx.close()
