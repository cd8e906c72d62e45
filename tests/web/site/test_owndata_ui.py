"""The settings page's "Your data" in a real browser (issue 54, point 5; web/site/owndata.py): a
visitor is asked to log in; a player downloads the archive, is told when the password to close the
account is wrong, and closing it with the right one logs them out for good."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, expect

from jericho_game.web.server import create_app
from tests.web import test_browser
from tests.web.test_browser import DESKTOP, serve_in_thread, watch_errors

browser = test_browser.browser
PW = "a long enough password for eve"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("owndata") / "games.sqlite3"
    app = create_app(
        str(db), ai_processes=0, password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )
    yield from serve_in_thread(app)


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_a_player_downloads_their_data_and_closes_their_account(server: str, browser: Browser, lang: str) -> None:
    ctx = browser.new_context(viewport=DESKTOP, locale=lang, accept_downloads=True)
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/settings")
    expect(page.locator("#owndata-login")).to_be_visible()
    expect(page.locator("#owndata")).to_be_hidden()
    name = f"eve{lang}"
    page.goto(server + "/signup?next=/settings")
    page.fill("#username", name)
    page.fill("#password", PW)
    page.click("#account-submit")
    page.wait_for_url("**/settings")
    expect(page.locator("#owndata-download")).to_be_visible()
    expect(page.locator("#owndata-title")).to_have_text("Your data" if lang == "en" else "Vos données")
    with page.expect_download() as got:
        page.click("#owndata-download")
    download = got.value
    assert download.suggested_filename == f"jericho-{name}-data.zip"
    path = download.path()
    assert path is not None
    with open(path, "rb") as f:
        account = json.loads(zipfile.ZipFile(io.BytesIO(f.read())).read("account.json"))
    assert account["username"] == name
    page.on("dialog", lambda d: d.accept())  # "Close your account for good?"
    page.fill("#close-password", "not the password at all")
    page.click("#close-account")
    expect(page.locator("#close-error")).not_to_be_empty()
    page.fill("#close-password", PW)
    page.click("#close-account")
    page.wait_for_url("**/?closed=1")
    page.goto(server + "/settings")
    expect(page.locator("#owndata-login")).to_be_visible()  # logged out: the account is gone
    assert errors == [] or all("401" in e for e in errors), errors
    ctx.close()
