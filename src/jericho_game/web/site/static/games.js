// "My games": the games whose seat tokens this browser keeps (localStorage jericho:seat:ID),
// listed by the server (POST /api/mygames) and downloadable as one .jgn file.  Names are text only.
import { whoami } from "./account.js";
import { initContrast } from "./contrast.js";
import { formatDate, t } from "./i18n.js";
import { levelName } from "./levels.js";
import { startYourTurn } from "./yourturn.js";

initContrast();
const $ = (id) => document.getElementById(id);
const SIDE = { south: t("South"), north: t("North"), both: t("Both (hot-seat)") };
const REASON = {
  seven: t("seven monoliths"), exhaustion: t("both passed"), resign: t("resignation"), time: t("on time"),
  agreed: t("by agreement"), claim: t("opponent left"), aborted: t("aborted"), expired: t("nobody joined"),
};

function held() {
  const games = {};
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      const m = key && key.match(/^jericho:seat:([A-Za-z0-9_-]{1,32})$/);
      if (m) games[m[1]] = localStorage.getItem(key);
    }
  } catch { /* no storage: no games */ }
  return games;
}

function resultText(g) {
  if (g.status === "waiting") return t("Waiting for an opponent");
  if (g.status === "playing") return t("In progress");
  const why = REASON[g.reason] ? ` (${REASON[g.reason]})` : "";
  const winner = { "south won": SIDE.south, "north won": SIDE.north }[g.outcome];  // a hot-seat game's winner
  const head = { won: t("Won"), lost: t("Lost"), draw: t("Draw"), none: t("No result") }[g.outcome] ||
    (winner ? t("{side} won", { side: winner }) : t("Over"));
  return head + why;
}

function opponentText(g) {
  const o = g.opponent;
  if (o.kind === "hotseat") return t("Hot-seat");
  if (o.kind === "open") return t("(nobody yet)");
  if (o.kind === "ai") return o.level ? `${t("AI")} · ${levelName(o.level)}` : o.name;
  return o.name || t("Anonymous");
}

/** Shows the rows that match the filter's text, result and kind of game, and says how many. */
function filterRows() {
  const find = $("games-find").value.trim().toLowerCase();
  const outcome = $("games-outcome").value, kind = $("games-kind").value;
  const rows = [...$("games").rows];
  let shown = 0;
  for (const tr of rows) {
    const ok = (!find || tr.textContent.toLowerCase().includes(find)) && (!outcome || tr.dataset.outcome === outcome)
      && (!kind || tr.dataset.kind === kind);
    tr.hidden = !ok;
    shown += ok ? 1 : 0;
  }
  $("games-filter").hidden = false;
  $("games-count").textContent = t("Games shown: {shown} of {total}", { shown, total: rows.length });
}

for (const id of ["games-find", "games-outcome", "games-kind"]) $(id).addEventListener("input", filterRows);
$("games-filter").addEventListener("submit", (e) => e.preventDefault());

async function post(path, games) {
  return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ games }) });
}

async function main() {
  // logged in: every game of the account can be searched (web/people/gamesearch.py)
  whoami().then((me) => {
    if (!me.account) return;
    $("games-search-link").href = `/players/${encodeURIComponent(me.account.username)}/games`;
    $("games-search").hidden = false;
  }).catch(() => {});
  const games = held();
  const body = $("games");
  let rows = [];
  try {
    const r = await post("/api/mygames", games);
    const data = await r.json();
    if (!r.ok) throw new Error(data.message || r.statusText);
    rows = data.games;
  } catch (err) {
    $("games-error").textContent = t("Could not load your games: {why}", { why: err.message });
  }
  // each cell carries its column's name: on a phone the rows are drawn as cards (style.css)
  const heads = [...document.querySelectorAll(".games-table thead th")].map((th) => th.textContent);
  for (const g of rows) {
    const tr = document.createElement("tr");
    tr.dataset.id = g.id;
    for (const [text, cls] of [[g.created_at ? formatDate(g.created_at * 1000) : g.date, "date"], [opponentText(g), "who"], [SIDE[g.side] || g.side, ""],
      [resultText(g), "result"], [String(g.moves ?? Math.ceil(g.plies / 2)), "num"]]) {
      const td = document.createElement("td");
      td.textContent = text;
      td.dataset.label = heads[tr.children.length] || "";
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    const td = document.createElement("td");
    const a = document.createElement("a");
    a.className = "button open";
    a.href = `/g/${encodeURIComponent(g.id)}`;
    a.textContent = g.status === "over" ? t("Replay") : t("Resume");
    td.appendChild(a);
    tr.appendChild(td);
    // what the filter above the list looks at (the browser's list is short: filtered here, not asked again)
    tr.dataset.outcome = g.status === "over" ? g.outcome || "none" : "playing";
    tr.dataset.kind = g.opponent.kind === "open" ? "human" : g.opponent.kind;
    body.appendChild(tr);
  }
  $("games-empty").hidden = rows.length > 0;
  if (rows.length) filterRows();
  const dl = $("download-all");
  dl.disabled = rows.length === 0;
  dl.onclick = async () => {
    dl.disabled = true;
    try {
      const r = await post("/api/mygames/record", games);
      if (!r.ok) throw new Error((await r.json()).message || r.statusText);
      const url = URL.createObjectURL(await r.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = "jericho-my-games.jgn";
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) {
      $("games-error").textContent = t("Could not download: {why}", { why: err.message });
    } finally {
      dl.disabled = false;
    }
  };
}

startYourTurn($("your-turn"));
main();
