// What every page shares (templates/base.html): the header's switches (high contrast, dark mode,
// language), the account link, and the service worker that makes the site installable.
import { postJSON, whoami } from "./account.js";
import { startChallengeBell } from "./challengebell.js";
import { initContrast } from "./contrast.js";
import { syncLooks } from "./looks.js";
import { initTheme } from "./theme.js";
import { startTournamentPush } from "./tournamentpush.js";

initContrast();
initTheme();
syncLooks();  // a logged-in player's board and piece themes, from the account
startChallengeBell();  // challenges received, accepted, declined: a notice on any page (web/people/people.py)
startTournamentPush();  // a tournament player's next game, whatever page is open (web/tournaments/push.py)

// The switches are a toolbar: one Tab stop, the arrow keys (and Home / End) move within it.
const tools = [...document.querySelectorAll(".switches button")];
tools.forEach((b, i) => {
  b.tabIndex = i === 0 ? 0 : -1;
  b.addEventListener("keydown", (e) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    const to = e.key === "Home" ? 0 : e.key === "End" ? tools.length - 1 :
      step === undefined ? null : (i + step + tools.length) % tools.length;
    if (to === null) return;
    e.preventDefault();
    b.tabIndex = -1;
    tools[to].tabIndex = 0;
    tools[to].focus();
  });
});

// On a phone the switches open from one button (style.css); Escape or a tap elsewhere closes them.
const display = document.getElementById("display");
const displayButton = document.getElementById("btn-display");
const openDisplay = (open) => {
  display?.classList.toggle("open", open);
  displayButton?.setAttribute("aria-expanded", String(open));
};
displayButton?.addEventListener("click", () => {
  const open = !display.classList.contains("open");
  openDisplay(open);
  if (open) tools.find((b) => b.tabIndex === 0)?.focus();
});
display?.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && display.classList.contains("open")) {
    openDisplay(false);
    displayButton.focus();
  }
});
document.addEventListener("click", (e) => { if (display && !display.contains(e.target)) openDisplay(false); });

const COOKIE = "jericho_lang";
const KEY = "jericho:lang";

// The language switch: remembered in a cookie (the server reads it) and in localStorage (the
// cookie may be cleared), and on the account of a logged-in player (put back at every log-in, in
// any browser); the page is reloaded in the other language, its address (and the seat in its
// #fragment) kept.
const langButton = document.getElementById("btn-lang");
langButton?.addEventListener("click", async () => {
  const next = langButton.dataset.lang;
  try {
    if ((await whoami()).account) await postJSON("/api/account/language", { language: next });
  } catch { /* the browser remembers it all the same */ }
  document.cookie = `${COOKIE}=${next}; path=/; max-age=31536000; samesite=lax`;
  try { localStorage.setItem(KEY, next); } catch { /* private mode */ }
  const url = new URL(location.href);
  if (url.searchParams.has("lang")) {
    url.searchParams.delete("lang"); // a ?lang= link would win over the switch
    location.replace(url.href);
  } else {
    location.reload();
  }
});
// the choice outlives a cleared cookie: it is put back, and the page shown in it
try {
  const hasCookie = document.cookie.split("; ").some((c) => c.startsWith(`${COOKIE}=`));
  const kept = localStorage.getItem(KEY);
  if (hasCookie) {
    localStorage.setItem(KEY, document.documentElement.lang);
  } else if (kept === "en" || kept === "fr") {
    document.cookie = `${COOKIE}=${kept}; path=/; max-age=31536000; samesite=lax`;
    if (kept !== document.documentElement.lang) location.reload();
  }
} catch { /* private mode */ }

// registered once the page has loaded: its install (fetching every static file) never competes
// with the page's own first requests
if ("serviceWorker" in navigator && window.isSecureContext) {
  const register = () => navigator.serviceWorker.register("/sw.js").catch(() => { /* the site works without it */ });
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}
