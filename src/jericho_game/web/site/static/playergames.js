// A player's games searched (/players/NAME/games, web/people/gamesearch.py): the form's fields are the
// query parameters of GET /api/players/NAME/games, kept in the page's address (a search can be shared
// and the Back button returns to it); "More games" asks for the next page by its key; the download link
// carries the same filters to .../games.jgn.  Names are text only.
import { formatDate, t } from "./i18n.js";
import { levelName } from "./levels.js";

const $ = (id) => document.getElementById(id);
const FIELDS = ["opponent", "result", "side", "rated", "speed", "mode", "level", "from", "to", "position"];
const SIDE = { south: t("South"), north: t("North"), both: t("Both (hot-seat)") };
const REASON = {
  seven: t("seven monoliths"), exhaustion: t("both passed"), resign: t("resignation"), time: t("on time"),
  agreed: t("by agreement"), claim: t("opponent left"), aborted: t("aborted"), expired: t("nobody joined"),
};
const SPEED = {
  bullet: t("Bullet"), blitz: t("Blitz"), rapid: t("Rapid"), classical: t("Classical"),
  correspondence: t("Correspondence"), none: t("No clock"),
};

/** The player's name, from /players/NAME/games. */
export const playerName = () => decodeURIComponent(location.pathname.split("/")[2] || "");

function resultText(g) {
  if (g.status !== "over") return t("In progress");
  const why = REASON[g.reason] ? ` (${REASON[g.reason]})` : "";
  const winner = { "south won": SIDE.south, "north won": SIDE.north }[g.result];
  const head = { won: t("Won"), lost: t("Lost"), draw: t("Draw") }[g.result] ||
    (winner ? t("{side} won", { side: winner }) : t("No result"));
  return head + why;
}

function opponentText(o) {
  if (o.kind === "hotseat") return t("Hot-seat");
  if (o.kind === "ai") return `${t("AI")} · ${levelName(o.level)}`;
  return o.name || t("Anonymous");
}

function speedText(g) {
  const name = SPEED[g.speed] || g.speed;
  if (g.speed === "correspondence") return `${name} · ${t("{n} days per move", { n: g.per_move_days })}`;
  if (!g.clock) return name;
  return `${name} · ${Math.round(g.clock * 10) / 10}+${g.increment || 0}`;
}

function row(g, heads) {
  const tr = document.createElement("tr");
  tr.dataset.id = g.id;
  const cells = [
    [formatDate(g.date * 1000), ""], [opponentText(g.opponent), "who"], [SIDE[g.side] || g.side, ""],
    [resultText(g) + (g.rated ? ` · ${t("rated")}` : ""), "result"], [speedText(g), ""], [String(g.moves), "num"],
  ];
  for (const [text, cls] of cells) {
    const td = document.createElement("td");
    td.textContent = text;
    td.dataset.label = heads[tr.children.length] || "";
    if (cls) td.className = cls;
    tr.append(td);
  }
  const td = document.createElement("td");
  td.dataset.label = heads[tr.children.length] || "";
  const a = document.createElement("a");
  a.href = `/g/${encodeURIComponent(g.id)}`;
  a.textContent = g.status === "over" ? t("Replay") : t("Resume");
  td.append(a);
  tr.append(td);
  return tr;
}

function addLevel(select, id) {
  const o = document.createElement("option");
  o.value = id;
  o.textContent = levelName(id);
  select.append(o);
}

/** The AI level filter's list: every level the server plays (GET /api/levels), by its name in the
 * page's language (it was a text box, where a player had to guess the ids: issue 52). */
async function levels(select) {
  try {
    const r = await fetch("/api/levels");
    if (r.ok) for (const id of (await r.json()).levels) addLevel(select, id);
  } catch {
    // offline or refused: the list keeps "Any" and whatever the address names
  }
}

/** The form's filled fields as query parameters. */
function filters(form) {
  const q = new URLSearchParams();
  for (const name of FIELDS) {
    const v = String(form.elements[name].value || "").trim();
    if (v) q.set(name, v);
  }
  return q;
}

async function main() {
  const name = playerName();
  const api = `/api/players/${encodeURIComponent(name)}`;
  document.title = `Jericho · ${name}`;
  $("pg-title").textContent = t("Games of {name}", { name });
  $("pg-profile").href = `/players/${encodeURIComponent(name)}`;
  $("pg-stats").href = `/players/${encodeURIComponent(name)}/stats`;
  const form = $("pg-form");
  const body = $("pg-games").tBodies[0];
  const heads = [...$("pg-games").tHead.rows[0].cells].map((th) => th.textContent);
  const more = $("pg-more");
  let next = null;
  let shown = 0;

  async function load(query, append) {
    $("pg-error").textContent = "";
    const q = new URLSearchParams(query);
    if (append && next) q.set("before", next);
    const r = await fetch(`${api}/games?${q}`);
    const data = await r.json();
    if (!r.ok) {
      $("pg-error").textContent = data.message || r.statusText;
      if (!append) body.replaceChildren();
      more.hidden = true;
      $("pg-status").textContent = "";
      return;
    }
    if (!append) { body.replaceChildren(); shown = 0; }
    for (const g of data.games) body.append(row(g, heads));
    shown += data.games.length;
    next = data.next;
    more.hidden = !next;
    let status = shown === 1 ? t("1 game shown") : t("{n} games shown", { n: shown });
    if (!data.all_games) status += ` · ${t("Public and rated games only.")}`;
    if (data.scan_limited) status += ` · ${t("The position search looked at {n} games: ask for more to go on.", { n: data.scanned })}`;
    $("pg-status").textContent = status;
  }

  function fill(q) {
    // a level the list lacks (a research player's, from an old address) becomes an option of its own
    const level = q.get("level");
    if (level && ![...form.elements.level.options].some((o) => o.value === level)) addLevel(form.elements.level, level);
    for (const f of FIELDS) form.elements[f].value = q.get(f) || "";
    $("pg-export").href = `${api}/games.jgn?${q}`;
  }

  await levels(form.elements.level);
  const start = new URLSearchParams(location.search);
  start.delete("lang");
  fill(start);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = filters(form);
    history.pushState(null, "", `${location.pathname}${q.size ? `?${q}` : ""}`);
    fill(q);
    load(q, false);
  });
  form.addEventListener("reset", () => setTimeout(() => form.requestSubmit(), 0));
  more.addEventListener("click", () => load(filters(form), true));
  window.addEventListener("popstate", () => {
    const q = new URLSearchParams(location.search);
    fill(q);
    load(q, false);
  });
  await load(start, false);
}

main();
