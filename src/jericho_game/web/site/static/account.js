// Accounts in the page: who is logged in, the CSRF token, and the header's account links.
// Optional for players: every page works without an account.  Text goes in by textContent only.
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

let current = null; // the promise of GET /api/account: {account, csrf, signup}

// A path on this site: "/" then anything but a second "/" or a backslash (both make "//host", another
// site), with no backslash, whitespace or control character anywhere (browsers drop tabs and
// newlines, so "/\t/host" became "//host"), also once percent-decoded.  The same rule as
// accounts.safe_next on the server.
const SAFE_PATH = /^\/(?![\/\\])[^\\\s\u0000-\u001f\u007f]*$/;

/** ``raw`` when it is a same-origin path to go to after logging in, else "/" (never an open redirect). */
export function safeNext(raw) {
  if (typeof raw !== "string" || raw.length > 2000 || !SAFE_PATH.test(raw)) return "/";
  let decoded;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return "/";
  }
  if (!SAFE_PATH.test(decoded)) return "/";
  try {
    if (new URL(raw, location.origin).origin !== location.origin) return "/";
  } catch {
    return "/";
  }
  return raw;
}

/** Who is logged in ({account: {...} | null, csrf, signup}); fetched once per page. */
export function whoami(fresh = false) {
  if (!current || fresh) {
    current = fetch("/api/account", { cache: "no-store" })
      .then((r) => r.json())
      .catch(() => ({ account: null, csrf: "", signup: false }));
  }
  return current;
}

/** The headers of a state-changing request: JSON and the CSRF token (the session's, or the
 * pre-session one of log-in and sign-up).  A request with the session cookie but without it is refused. */
export async function changeHeaders() {
  const me = await whoami();
  return { "Content-Type": "application/json", "X-CSRF-Token": me.csrf || "" };
}

/** POST a JSON body with the CSRF token; resolves to {ok, status, data}. */
export async function postJSON(url, body = {}) {
  const r = await fetch(url, { method: "POST", headers: await changeHeaders(), body: JSON.stringify(body) });
  let data = {};
  try { data = await r.json(); } catch { /* empty body */ }
  return { ok: r.ok, status: r.status, data };
}

function link(href, text, id) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  if (id) a.id = id;
  return a;
}

/** Fill the header's account link (#account-nav: one Tab stop, it fits a phone's header): "Log in",
 * or the player's name and rating (their profile, where they log out); and the home page's line
 * (#account-home): the leaderboard, and sign-up or log-out. */
export async function renderNav() {
  const me = await whoami();
  const nav = $("account-nav");
  const next = `?next=${encodeURIComponent(location.pathname)}`;
  if (nav) {
    const a = me.account;
    nav.replaceChildren(a ?
      link(`/players/${encodeURIComponent(a.username)}`, `${a.username} (${a.rating})`, "nav-me") :
      link(`/login${next}`, t("Log in"), "nav-login"));
  }
  const home = $("account-home");
  if (home) {
    const parts = [link("/leaderboard", t("Leaderboard"), "nav-leaderboard"),
      link("/settings", t("Settings"), "nav-settings")];  // themes, sound, browser notifications, e-mail
    if (me.account) {
      const out = document.createElement("button");
      out.type = "button";
      out.id = "nav-logout";
      out.textContent = t("Log out");
      out.addEventListener("click", async () => {
        await postJSON("/api/account/logout");
        location.href = "/";
      });
      parts.push(out);
    } else if (me.signup) {
      parts.push(link(`/signup${next}`, t("Sign up"), "nav-signup"));
      parts.push(document.createTextNode(t(" to play rated games (optional)")));
    }
    home.replaceChildren(...parts);
  }
}

renderNav();
