// The high-contrast option: a toggle in the header, remembered in this browser; on by default
// when the system asks for more contrast.
const KEY = "jericho:contrast";
let done = false; // the layout and the page's own script may both call initContrast

function stored() {
  try { return localStorage.getItem(KEY); } catch { return null; }
}

export function initContrast() {
  if (done) return;
  done = true;
  const root = document.documentElement;
  const wanted = stored() ?? (matchMedia("(prefers-contrast: more)").matches ? "high" : "normal");
  root.dataset.contrast = wanted;
  const button = document.getElementById("btn-contrast");
  if (!button) return;
  button.setAttribute("aria-pressed", String(wanted === "high"));
  button.addEventListener("click", () => {
    const next = root.dataset.contrast === "high" ? "normal" : "high";
    root.dataset.contrast = next;
    button.setAttribute("aria-pressed", String(next === "high"));
    try { localStorage.setItem(KEY, next); } catch { /* private mode */ }
  });
}
