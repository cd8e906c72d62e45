// The lobby's tournaments (the home page): the featured ones first, then those playing now and
// starting soon (web/tournaments/tournaments.py), asked again every 30 s.
import { t } from "./i18n.js";
import { tournamentText } from "./tournament-text.js";

const list = document.getElementById("lobby-tournaments");

async function load() {
  let d;
  try {
    const r = await fetch("/api/tournaments", { cache: "no-store" });
    if (!r.ok) return;
    d = await r.json();
  } catch { return; }
  const seen = new Set();
  const items = [...d.featured, ...d.running, ...d.scheduled].filter((x) => !seen.has(x.id) && seen.add(x.id)).slice(0, 5);
  list.replaceChildren(...items.map((x) => {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `/tournaments/${encodeURIComponent(x.id)}`;
    a.textContent = x.name;
    const what = document.createElement("span");
    what.className = "muted";
    what.textContent = ` · ${tournamentText(x)} · ${x.status === "running" ? t("playing now") : t("starting soon")}`;
    li.append(a, what);
    if (x.featured) { const f = document.createElement("strong"); f.textContent = ` · ${t("featured")}`; li.append(f); }
    return li;
  }));
  if (!items.length) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = t("No tournament right now.");
    list.replaceChildren(li);
  }
}

if (list && location.pathname === "/") {
  load();
  setInterval(() => { if (!document.hidden) load(); }, 30000);
}
