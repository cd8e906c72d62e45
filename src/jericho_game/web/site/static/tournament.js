// One tournament (/tournaments/ID): what it is, join / withdraw, the player's current game (and
// berserk), the live standings and the games (every game can be watched).  The page asks for the
// tournament every 3 s: that keeps the standings live and tells the server this player is here
// to be paired (web/tournaments/tournaments.py).  Text goes in by textContent only.
import { postJSON, whoami } from "./account.js";
import { formatDate, t } from "./i18n.js";
import { tournamentText } from "./tournament-text.js";
import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);
const id = decodeURIComponent(location.pathname.split("/").pop() || "");
let lastGame = null;
let account = null;

function button(text, onClick, bid) {
  const b = el("button", text);
  b.type = "button";
  if (bid) b.id = bid;
  b.addEventListener("click", onClick);
  return b;
}

async function act(what, body) {
  $("t-error").textContent = "";
  const r = await postJSON(`/api/tournaments/${encodeURIComponent(id)}/${what}`, body);
  if (!r.ok) $("t-error").textContent = r.data.message || t("Something went wrong.");
  await load();
}

function when(d) {
  if (d.status === "scheduled") return t("Starts {when}.", { when: formatDate(d.starts_at * 1000) });
  if (d.status === "finished") return t("Finished.");
  if (d.kind === "arena") {
    const left = Math.max(0, Math.round(d.ends_at - Date.now() / 1000));
    return t("Playing: {m} min {s} s left.", { m: Math.floor(left / 60), s: left % 60 });
  }
  return t("Playing round {n} of {total}.", { n: d.round, total: d.rounds });
}

function standings(d) {
  const table = $("t-standings");
  const cols = [[t("Rank"), "num"], [t("Player"), ""], [t("Score"), "num"], [t("Games"), "num"]];
  if (d.kind === "swiss") cols.push([t("Buchholz"), "num"], [t("Sonneborn-Berger"), "num"]);
  cols.push([t("Rating"), "num"]);
  const head = el("tr");
  for (const [h, cls] of cols) { const th = el("th", h, cls); th.scope = "col"; head.append(th); }
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  for (const s of d.standings) {
    const tr = el("tr");
    const who = el("td");
    const a = el("a", s.username);
    a.href = `/players/${encodeURIComponent(s.username)}`;
    who.append(a);
    if (s.fire) { const f = el("span", " 🔥"); f.title = t("on fire: the next game counts double"); f.setAttribute("aria-label", t("on fire")); who.append(f); }
    if (s.withdrawn) who.append(el("span", ` (${t("paused")})`, "muted"));
    tr.append(el("td", s.rank, "num"), who, el("td", s.score, "num"), el("td", s.games, "num"));
    if (d.kind === "swiss") tr.append(el("td", s.buchholz, "num"), el("td", s.sonneborn_berger, "num"));
    tr.append(el("td", s.rating, "num"));
    body.append(tr);
  }
  if (!d.standings.length) { const tr = el("tr"); const td = el("td", t("No player yet.")); td.colSpan = cols.length; tr.append(td); body.append(tr); }
  const cap = el("caption", t("{n} players", { n: d.players }), "sr");
  table.replaceChildren(cap, thead, body);
}

function games(d) {
  const result = (g) => g.status !== "done" ? t("playing") : g.north === null ? t("bye") :
    g.result === "draw" ? t("draw") : g.result === "south" ? "1-0" : g.result === "north" ? "0-1" : t("no result");
  const items = d.games.map((g) => {
    const li = el("li");
    if (d.kind === "swiss") li.append(el("span", t("Round {n}", { n: g.round }), "muted"));
    li.append(el("span", g.north === null ? g.south : t("{south} (South) against {north} (North)", { south: g.south, north: g.north })));
    li.append(el("span", result(g), "muted"));
    if (g.game) {
      const a = el("a", g.status === "done" ? t("Replay") : t("Watch"));
      a.href = `/g/${encodeURIComponent(g.game)}`;
      li.append(a);
    }
    return li;
  });
  $("t-games").replaceChildren(...(items.length ? items : [el("li", t("No game yet."), "empty")]));
}

async function load() {
  let r;
  try { r = await fetch(`/api/tournaments/${encodeURIComponent(id)}`, { cache: "no-store" }); } catch { return; }
  const d = await r.json();
  if (!r.ok) { $("t-title").textContent = t("No such tournament"); $("t-error").textContent = d.message || ""; return; }
  document.title = `Jericho · ${d.name}`;
  $("t-title").textContent = d.name;
  $("t-what").textContent = `${tournamentText(d)} · ${t("created by {name}", { name: d.creator })}`;
  $("t-when").textContent = when(d);
  $("t-breaks").hidden = d.kind !== "swiss";
  const actions = [];
  if (account && d.status !== "finished") {
    if (!d.me?.joined || d.me.withdrawn) actions.push(button(t("Join"), () => act("join"), "t-join"));
    else actions.push(button(d.kind === "arena" ? t("Pause") : t("Withdraw"), () => act("withdraw"), "t-withdraw"));
  }
  if (account?.admin) {
    actions.push(button(d.featured ? t("Stop featuring") : t("Feature on the home page"), () => act("feature", { featured: !d.featured })));
  }
  if (!account) { const a = el("a", t("Log in to join")); a.href = `/login?next=${encodeURIComponent(location.pathname)}`; actions.push(a); }
  const old = $("t-actions");
  const focused = old.contains(document.activeElement) ? document.activeElement.id : null;
  old.replaceChildren(...actions);
  if (focused && $(focused)) $(focused).focus();
  const mine = $("t-mygame");
  const game = d.me?.game;
  if (game) {
    if (game !== lastGame) {
      const a = el("a", t("Your game is ready: play it"));
      a.href = `/g/${encodeURIComponent(game)}`;
      const parts = [a];
      if (d.berserk) parts.push(button(t("Berserk (half your clock, +1 point for a win)"), () => act("berserk", { game }), "t-berserk"));
      mine.replaceChildren(...parts);
    }
  } else if (d.me?.joined && !d.me.withdrawn && d.status === "running") {
    if (mine.textContent !== t("Waiting for an opponent…")) mine.textContent = t("Waiting for an opponent…");
  } else mine.textContent = "";
  lastGame = game || null;
  standings(d);
  games(d);
}

async function init() {
  account = (await whoami()).account;
  await load();
  setInterval(() => { if (!document.hidden) load(); }, 3000);
}

init();
