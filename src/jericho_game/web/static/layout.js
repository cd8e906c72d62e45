// What every page shares (templates/base.html): the header's switches (high contrast, dark mode,
// language), the account link, and the service worker that makes the site installable.
import "./account.js";
import { initContrast } from "./contrast.js";
import { initTheme } from "./theme.js";

initContrast();
initTheme();

const COOKIE = "jericho_lang";
const KEY = "jericho:lang";

// The language switch: remembered in a cookie (the server reads it) and in localStorage (the
// cookie may be cleared); the page is reloaded in the other language, its address (and the
// seat in its #fragment) kept.
const langButton = document.getElementById("btn-lang");
langButton?.addEventListener("click", () => {
  const next = langButton.dataset.lang;
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

if ("serviceWorker" in navigator && window.isSecureContext) {
  navigator.serviceWorker.register("/sw.js").catch(() => { /* the site works without it */ });
}
