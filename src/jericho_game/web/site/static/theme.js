// Dark mode: follows the system (prefers-color-scheme) until the header's switch is used, then
// the choice is remembered in this browser.  The CSS does the rest (style.css, [data-theme]).
const KEY = "jericho:theme";
let done = false;

function stored() {
  try { return localStorage.getItem(KEY); } catch { return null; }
}

export function initTheme() {
  if (done) return;
  done = true;
  const root = document.documentElement;
  const system = matchMedia("(prefers-color-scheme: dark)");
  const apply = (theme) => {
    root.dataset.theme = theme;
    document.getElementById("btn-theme")?.setAttribute("aria-pressed", String(theme === "dark"));
  };
  apply(stored() ?? (system.matches ? "dark" : "light"));
  system.addEventListener("change", (e) => { if (!stored()) apply(e.matches ? "dark" : "light"); });
  document.getElementById("btn-theme")?.addEventListener("click", () => {
    const next = root.dataset.theme === "dark" ? "light" : "dark";
    apply(next);
    try { localStorage.setItem(KEY, next); } catch { /* private mode */ }
  });
}
