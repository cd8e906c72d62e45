// "Your turn": every game waiting for this player's move (the account's games and the seats this
// browser keeps), most urgent first, with each deadline in the player's own time zone
// (POST /api/yourturn, web/round/correspondence.py).  Shown on the home page and on /games; names are text only.
import { lang, t } from "./i18n.js";

/** The seats this browser keeps: {gameId: token} (localStorage jericho:seat:ID). */
export function heldSeats() {
  const games = {};
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      const m = key && key.match(/^jericho:seat:([A-Za-z0-9_-]{1,32})$/);
      if (m) games[m[1]] = localStorage.getItem(key);
    }
  } catch { /* no storage: no seats */ }
  return games;
}

/** "2 d 3 h", "5 h 10 min", "12 min" left until `deadline` (seconds since the epoch). */
export function timeLeft(deadline, now = Date.now() / 1000) {
  const s = Math.max(0, deadline - now);
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  if (d) return t("{d} d {h} h", { d, h });
  if (h) return t("{h} h {m} min", { h, m });
  return t("{m} min", { m });
}

/** "3 days per move" (a correspondence game's time control). */
export function perMoveText(n) {
  return n === 1 ? t("1 day per move") : t("{n} days per move", { n });
}

/** A deadline as a date and time in the player's time zone, with the zone's name. */
export function deadlineText(deadline) {
  // (dateStyle cannot be combined with timeZoneName: the fields one by one)
  return new Intl.DateTimeFormat(lang(), { weekday: "short", day: "numeric", month: "short", hour: "2-digit",
    minute: "2-digit", timeZoneName: "short" }).format(new Date(deadline * 1000));
}

function row(g) {
  const li = document.createElement("li");
  li.className = "your-turn-game";
  li.dataset.id = g.id;
  const a = document.createElement("a");
  a.href = `/g/${encodeURIComponent(g.id)}`;
  a.textContent = t("Against {name}", { name: g.opponent || t("Anonymous") });
  const what = document.createElement("span");
  what.className = "muted";
  const kind = g.per_move_days ? perMoveText(g.per_move_days) :
    g.clock ? t("{m} min", { m: g.clock }) : t("no clock");
  what.textContent = ` · ${t("move {n}", { n: g.moves + 1 })} · ${kind}${g.rated ? ` · ${t("rated")}` : ""}`;
  li.append(a, what);
  if (g.deadline) {
    const when = document.createElement("span");
    when.className = "deadline";
    when.textContent = t("Deadline: {when} ({left} left)", { when: deadlineText(g.deadline), left: timeLeft(g.deadline) });
    if (g.deadline - Date.now() / 1000 < 86400 / 4) when.classList.add("urgent");
    li.append(document.createElement("br"), when);
  }
  return li;
}

/** Fill `section` (with an <ol> inside) with the games waiting for this player; hidden when none.
 * Asked again every 30 s and when the page comes back into view. */
export function startYourTurn(section) {
  const list = section.querySelector("ol");
  let busy = false;
  async function load() {
    if (busy) return;
    busy = true;
    try {
      const r = await fetch("/api/yourturn", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ games: heldSeats() }), cache: "no-store" });
      if (!r.ok) return;
      const data = await r.json();
      list.replaceChildren(...data.games.map(row));
      section.hidden = data.games.length === 0;
      section.dataset.ready = "1";
    } catch (err) {
      if (!(err instanceof TypeError && /fetch/i.test(err.message))) console.error(err);  // a bug, not the network
    } finally { busy = false; }
  }
  load();
  setInterval(() => { if (!document.hidden) load(); }, 30000);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) load(); });
  return load;
}
