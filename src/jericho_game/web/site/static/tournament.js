// One tournament (/tournaments/ID): what it is, join / withdraw, the player's current game (and
// berserk), the live standings, the games (every game can be watched) and the chat.  The page asks for the
// tournament every 3 s, which keeps the standings live; a player is paired whether or not it is open,
// and goes to each game by itself from any page (tournamentpush.js).  Text goes in by textContent only.
import { postJSON, whoami } from "./account.js";
import { formatDate, t } from "./i18n.js";
import { tournamentText } from "./tournament-text.js";
import { el } from "./dom.js";
import { startTournamentPush } from "./tournamentpush.js";
import { TournamentChat } from "./tournament-chat.js";

const $ = (id) => document.getElementById(id);
const id = decodeURIComponent(location.pathname.split("/").pop() || "");
let lastGame = null;
let account = null;
let chat = null;  // the tournament's chat (tournament-chat.js): read with the tournament
// the countdown (issue 52): the moments it counts to, on this browser's clock (the server says how
// many seconds are left, so a browser whose clock is off still counts right)
const clock = { status: null, kind: null, startAt: 0, endAt: null };

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
  else if (what === "join") startTournamentPush();  // from now on, the next game comes by itself
  await load();
}

function when(d) {
  if (d.status === "scheduled") return t("Starts {when}.", { when: formatDate(d.starts_at * 1000) });
  if (d.status === "finished") {
    const first = d.podium?.[0];
    return first ? t("Finished: {name} wins with {score} points.", { name: first.username, score: first.score }) : t("Finished.");
  }
  if (d.kind === "arena") return t("Playing until {when}.", { when: formatDate(d.ends_at * 1000) });
  return t("Playing round {n} of {total}.", { n: d.round, total: d.rounds });
}

// "1:04:09", "4:09": hours only when there are some
function hms(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  const two = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${two(m)}:${two(r)}` : `${m}:${two(r)}`;
}

// the countdown to the start, then to the end (an arena): ticks every second, read out by nobody
// (the status line above says the same once)
function tick() {
  const box = $("t-countdown");
  const now = Date.now();
  let text = "";
  if (clock.status === "scheduled") text = t("Starts in {time}", { time: hms((clock.startAt - now) / 1000) });
  else if (clock.status === "running" && clock.endAt !== null) text = t("Ends in {time}", { time: hms((clock.endAt - now) / 1000) });
  if (box.textContent !== text) box.textContent = text;
  box.hidden = !text;
}

function podium(d) {
  const box = $("t-podium-box");
  box.hidden = !(d.status === "finished" && d.podium?.length);
  if (box.hidden) return;
  const medals = ["🥇", "🥈", "🥉"];
  const items = d.podium.map((p, i) => {
    const li = el("li", "", `place-${i + 1}`);
    const medal = el("span", medals[i] || "", "medal");
    medal.setAttribute("aria-hidden", "true");
    const a = el("a", p.username);
    a.href = `/players/${encodeURIComponent(p.username)}`;
    li.append(medal, a, el("span", t("{score} points", { score: p.score }), "podium-score"),
      el("span", t("{games} games, {wins} won", { games: p.games, wins: p.wins }), "muted"));
    return li;
  });
  $("t-podium").replaceChildren(...items);
}

// a player's games, as lichess's score sheet: each game's points, doubled ones (on fire) marked,
// berserked ones with a ⚡; the words for a screen reader
function sheet(s) {
  const box = el("span", "", "sheet");
  if (!s.sheet?.length) return null;
  const said = [];
  for (const g of s.sheet) {
    const mark = el("span", `${g.points}${g.berserk ? "⚡" : ""}`, `pts ${g.result || "none"}${g.double ? " double" : ""}`);
    mark.setAttribute("aria-hidden", "true");
    box.append(mark);
    let word = String(g.points);
    if (g.double) word += ` (${t("double")})`;
    if (g.berserk) word += ` (${t("berserk")})`;
    said.push(word);
  }
  const sr = el("span", `${t("Points per game")}: ${said.join(", ")}`, "sr");
  box.append(sr);
  return box;
}

function standings(d) {
  const table = $("t-standings");
  // on a phone the optional columns (games, tie-breaks) give way: the rest fits 360 px (community.css)
  const cols = [[t("Rank"), "num"], [t("Player"), "player"], [t("Score"), "num"], [t("Games"), "num opt"]];
  if (d.kind === "swiss") cols.push([t("Buchholz"), "num opt"], [t("Sonneborn-Berger"), "num opt"]);
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
    const marks = sheet(s);
    if (marks) who.append(marks);
    who.className = "player";
    tr.append(el("td", s.rank, "num"), who, el("td", s.score, "num"), el("td", s.games, "num opt"));
    if (d.kind === "swiss") tr.append(el("td", s.buchholz, "num opt"), el("td", s.sonneborn_berger, "num opt"));
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
  const said = when(d);
  if ($("t-when").textContent !== said) $("t-when").textContent = said;
  clock.status = d.status;
  clock.startAt = Date.now() + d.starts_in * 1000;
  clock.endAt = d.ends_in === null || d.ends_in === undefined ? null : Date.now() + d.ends_in * 1000;
  tick();
  podium(d);
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
  chat?.refresh();
}

async function init() {
  account = (await whoami()).account;
  $("tc-login").href = `/login?next=${encodeURIComponent(location.pathname)}`;
  chat = new TournamentChat($("t-chat"), id, !!account);
  await load();
  setInterval(() => { if (!document.hidden) load(); }, 3000);
  setInterval(tick, 1000);
}

init();
