// The tournaments page (/tournaments): the list (playing now, starting soon, finished) and the
// creation form (web/tournaments/tournaments.py).  Text goes in by textContent only.
import { postJSON, whoami } from "./account.js";
import { formatDate, t } from "./i18n.js";
import { tournamentText } from "./tournament-text.js";
import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);

function row(x) {
  const li = el("li");
  const a = el("a", x.name);
  a.href = `/tournaments/${encodeURIComponent(x.id)}`;
  li.append(a, el("span", tournamentText(x), "muted"),
    el("span", x.players === 1 ? t("1 player") : t("{n} players", { n: x.players }), "muted"));
  if (x.status === "scheduled") li.append(el("span", t("starts {when}", { when: formatDate(x.starts_at * 1000) })));
  if (x.featured) li.append(el("strong", t("featured")));
  return li;
}

async function load() {
  const r = await fetch("/api/tournaments", { cache: "no-store" });
  if (!r.ok) return;
  const d = await r.json();
  for (const key of ["running", "scheduled", "finished"]) {
    const items = d[key];
    $(`t-${key}`).replaceChildren(...(items.length ? items.map(row) : [el("li", t("None."), "empty")]));
  }
}

function kindChanged() {
  const arena = $("t-kind").value === "arena";
  for (const id of ["t-length", "t-length-label", "t-berserk-label"]) $(id).hidden = !arena;
  for (const id of ["t-rounds", "t-rounds-label"]) $(id).hidden = arena;
}

async function init() {
  await load();
  setInterval(() => { if (!document.hidden) load(); }, 15000);
  if (!(await whoami()).account) { $("t-login").hidden = false; return; }
  $("t-form").hidden = false;
  $("t-kind").addEventListener("change", kindChanged);
  kindChanged();
  $("t-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("t-error").textContent = "";
    const [clock, increment] = $("t-clock").value.split("+").map(Number);
    const kind = $("t-kind").value;
    const body = { name: $("t-name").value, kind, clock, increment, rated: $("t-rated").checked,
      starts_in: Number($("t-start").value) };
    if (kind === "arena") Object.assign(body, { minutes: Number($("t-length").value), berserk: $("t-berserk").checked });
    else body.rounds = Number($("t-rounds").value);
    const r = await postJSON("/api/tournaments", body);
    if (!r.ok) { $("t-error").textContent = r.data.message || t("Something went wrong."); return; }
    location.href = `/tournaments/${encodeURIComponent(r.data.id)}`;
  });
}

init();
