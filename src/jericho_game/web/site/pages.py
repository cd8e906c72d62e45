"""The site's pages: one layout, rendered on the server (docs/web.md, "Pages").

Every page is a Jinja2 template in ``templates/`` that extends ``base.html``: the header, the
navigation, the contrast / dark / language switches, the manifest and the translations for the
page's scripts are written once there.  Templates rather than a script that builds the header:
the page arrives whole (no jump when the header appears, readable without scripts), and the
language is chosen before the first byte (``<html lang>``, the text itself).

The pages are the same for everyone but the language: nothing private is rendered here (the
account links and the games are filled in by the page's scripts, from the API).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Coroutine
from functools import cache
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
    from starlette.routing import Route
    from starlette.templating import Jinja2Templates
except ImportError as exc:  # pragma: no cover - the web extra brings them
    raise missing_extra("the web app's pages", "web", exc) from exc

from jericho_game.web import i18n
from jericho_game.web.accounts.accounts import safe_next
from jericho_game.web.common.budget import free

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
COOKIE_AGE = 365 * 24 * 3600  # a year: the language switch is remembered in this browser

env = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=select_autoescape(["html"]),
    extensions=["jinja2.ext.i18n"],
    trim_blocks=True,
    lstrip_blocks=True,
)
env.policies["ext.i18n.trimmed"] = True  # a {% trans %} block's line breaks are not part of its message
templates = Jinja2Templates(env=env)

# path -> (template, the navigation entry it is)
PAGES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "new"),
    "/g/{id}": ("index.html", "game"),
    "/rules": ("rules.html", "rules"),
    "/learn": ("learn.html", "learn"),
    "/games": ("games.html", "games"),
    "/login": ("account.html", "login"),
    "/signup": ("account.html", "signup"),
    "/leaderboard": ("leaderboard.html", "leaderboard"),
    "/players/{name}": ("profile.html", "profile"),
    "/players/{name}/games": ("playergames.html", "profile"),  # search and export (web/people/gamesearch.py)
    "/players/{name}/stats": ("playerstats.html", "profile"),  # statistics (web/people/playerstats.py)
    "/analysis": ("analysis.html", "analysis"),
    "/puzzles": ("puzzles.html", "puzzles"),
    "/settings": ("settings.html", "settings"),  # notifications (static/settings.js, web/social/notify.py)
    "/unsubscribe": ("unsubscribe.html", "settings"),  # a mail's unsubscribe link: confirm with a POST
    "/puzzles/{id}": ("puzzles.html", "puzzles"),
    "/offline": ("offline.html", "offline"),
    "/challenges": ("challenges.html", "challenges"),  # static/challenges.js, web/people/people.py
    "/tournaments": ("tournaments.html", "tournaments"),  # web/tournaments/tournaments.py
    "/tournaments/{id}": ("tournament.html", "tournaments"),
}


def context(request: Request, nav: str, lang: str | None = None) -> dict[str, Any]:
    """What every template gets: the language, its gettext callables, the scripts' catalog."""
    lang = lang or i18n.request_language(request)
    tr = i18n.translations(lang)
    return {
        "request": request,
        "lang": lang,
        "other_lang": next(x for x in i18n.LANGUAGES if x != lang),
        "native": i18n.NATIVE,
        "nav": nav,
        # the i18n extension's {% trans %} looks these up in the context first
        "gettext": tr.gettext,
        "ngettext": tr.ngettext,
        "pgettext": tr.pgettext,  # a message in a context: the header's short labels ("nav")
        "_": tr.gettext,
        "js_catalog": i18n.js_catalog(lang),
        # numbers and dates as the language writes them (Babel): {{ number(1234) }}, {{ date(ts) }}
        "number": lambda value: i18n.format_number(value, lang),
        "date": lambda ts, time=True: i18n.format_date(ts, lang, time),
    }


def render(request: Request, template: str, nav: str, status: int = 200) -> Response:
    """A page of the site in the request's language; a ``?lang=`` choice is remembered (cookie)."""
    lang = i18n.request_language(request)
    response = templates.TemplateResponse(
        request,
        template,
        context(request, nav, lang),
        status_code=status,
        headers={"Cache-Control": "no-cache", "Vary": "Accept-Language, Cookie"},
    )
    if request.query_params.get("lang") in i18n.LANGUAGES:
        response.set_cookie(i18n.COOKIE, lang, max_age=COOKIE_AGE, samesite="lax")
    return response


def _page(template: str, nav: str) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    # async: rendered on the event loop, never in a worker thread (the template is small)
    @free("a page from a small template; its data comes from the API")
    async def endpoint(request: Request) -> Response:
        if template == "account.html":
            asked = request.query_params.get("next")
            if asked is not None and safe_next(asked) != asked:
                # a `next` that would leave the site: the same page without it (the script checks too)
                return RedirectResponse(request.url.path, status_code=303)
        return render(request, template, nav)

    return endpoint


def not_found(request: Request) -> Response:
    """An unknown page: an HTML 404 in the site's layout (the API keeps its JSON errors)."""
    return render(request, "404.html", "404", status=404)


def wants_html(request: Request) -> bool:
    """Whether an error on this path is for a person (a page) rather than a program (the API)."""
    path = request.url.path
    return not (path.startswith("/api/") or path == "/healthz" or path.startswith("/ws/"))


@free("the manifest, a few fields")
async def manifest(request: Request) -> Response:
    """The web app manifest, in the request's language (name and description)."""
    tr = i18n.translations(i18n.request_language(request))
    data = {
        "name": "Jericho",
        "short_name": "Jericho",
        "description": tr.gettext("The strategy game by Jean-Louis Roubira: build towers, hold seven monoliths."),
        "lang": i18n.request_language(request),
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": "#f4eee2",
        "theme_color": "#6b4b26",
        "icons": [
            {"src": "/static/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
            {"src": "/static/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
            {"src": "/static/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any maskable"},
        ],
    }
    return JSONResponse(data, media_type="application/manifest+json", headers={"Cache-Control": "no-cache"})


@cache
def _worker_source() -> str:
    """``static/sw.js`` with this release's version (a digest of every file the site is drawn
    from: a changed file is a new worker, hence a fresh cache) and the list of static files."""
    files = sorted(p for d in (STATIC, TEMPLATES, i18n.LOCALE_DIR) for p in d.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.relative_to(HERE.parent).as_posix().encode())  # the web package: static, templates, locale
        digest.update(f.read_bytes())
    assets = [
        f"/static/{p.relative_to(STATIC).as_posix()}"
        for p in files
        if p.is_relative_to(STATIC) and p.name != "sw.js" and not p.name.startswith(".")
    ]
    source = (STATIC / "sw.js").read_text(encoding="utf-8")
    return source.replace("__VERSION__", digest.hexdigest()[:16]).replace("__ASSETS__", json.dumps(assets))


@free("a script built once per process")
async def service_worker(request: Request) -> Response:
    """The service worker, served from the root so that its scope is the whole site."""
    return Response(
        _worker_source(),
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache", "Service-Worker-Allowed": "/"},
    )


@free("a language's messages, built once per process")
async def catalog(request: Request) -> Response:
    """The page scripts' messages of a language, as JSON (the pages carry them inline too)."""
    lang = request.path_params["lang"]
    if lang not in i18n.LANGUAGES:
        return not_found(request)
    return JSONResponse(i18n.js_catalog(lang), headers={"Cache-Control": "no-cache"})


def routes() -> list[Route]:
    """The pages' routes; listed before the API's in the app (the first match wins)."""
    out = [Route(path, _page(template, nav)) for path, (template, nav) in PAGES.items()]
    out += [
        Route("/manifest.webmanifest", manifest),
        Route("/sw.js", service_worker),
        Route("/i18n/{lang}.json", catalog),
    ]
    return out


def html_error(request: Request, status: int) -> HTMLResponse | None:
    """The HTML page for an HTTP error on a page's path (None: the API answers JSON)."""
    if status == 404 and wants_html(request):
        response = not_found(request)
        assert isinstance(response, HTMLResponse)
        return response
    return None
