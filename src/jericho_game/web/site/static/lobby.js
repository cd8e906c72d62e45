// The lobby on the home page: open public seeks (join in one click) and public games being
// played (watch), kept live over /lobby/ws.  Everything a player typed is shown as text only.
import { changeHeaders, whoami } from "./account.js";
import { t } from "./i18n.js";
import { storedName } from "./names.js";
import { perMoveText } from "./yourturn.js";

const $ = (id) => document.getElementById(id);
const SIDE = { south: t("South"), north: t("North") };

/** A game's time control: days per move (correspondence), minutes each (+ seconds per move), or none. */
function clockText(g) {
  if (g.per_move_days) return perMoveText(g.per_move_days);
  if (!g.clock) return t("No clock");
  return g.increment ? `${g.clock} + ${g.increment}` : t("{n} min each", { n: g.clock });
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

async function joinSeek(id, button, say) {
  const name = storedName();
  let me = await whoami();
  // the page's answer may be stale (a log-in in another tab, a failed first request): ask again
  if (!name && !me.account) me = await whoami(true);
  if (!name && !me.account) {  // an account holder plays under the account's name
    say(t("Choose your name first (above): your opponent sees it."));
    $("name-input").focus();
    return;
  }
  button.disabled = true;
  try {
    const r = await fetch(`/api/games/${encodeURIComponent(id)}/join`, {
      method: "POST", headers: await changeHeaders(), body: JSON.stringify({ name: name || undefined }),  // CSRF: a logged-in player
    });
    const data = await r.json();
    if (!r.ok) throw new Error(data.message || r.statusText);
    try { localStorage.setItem(`jericho:seat:${id}`, data.token); } catch { /* private mode */ }
    location.href = `/g/${id}`;
  } catch (err) {
    say(t("Could not join: {why}.", { why: err.message }));
    button.disabled = false;
  }
}

function render(data, say) {
  const seeks = $("lobby-seeks"), playing = $("lobby-playing");
  seeks.replaceChildren();
  for (const s of data.seeks) {
    const tr = document.createElement("tr");
    tr.dataset.id = s.id;
    cell(tr, s.name || "?", "who");
    cell(tr, s.rated ? `${Math.round(s.rating ?? 0)}` : "unrated", "rating");
    cell(tr, clockText(s));
    const other = s.side === "south" ? "north" : "south";
    cell(tr, t("You play {side}", { side: SIDE[other] }));
    const td = cell(tr, "");
    let mine = null;
    try { mine = localStorage.getItem(`jericho:seat:${s.id}`); } catch { /* no storage */ }
    if (mine) {  // this browser's own seek: open it (joining it would be playing oneself)
      const a = document.createElement("a");
      a.className = "button mine";
      a.href = `/g/${encodeURIComponent(s.id)}`;
      a.textContent = t("Your game");
      td.appendChild(a);
    } else {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "join";
      b.textContent = t("Join");
      b.setAttribute("aria-label", s.name ? t("Join {name}'s game as {side}", { name: s.name, side: SIDE[other] }) :
        t("Join this player's game as {side}", { side: SIDE[other] }));
      b.onclick = () => joinSeek(s.id, b, say);
      td.appendChild(b);
    }
    seeks.appendChild(tr);
  }
  $("lobby-seeks-empty").hidden = data.seeks.length > 0;
  playing.replaceChildren();
  for (const p of data.playing) {
    const tr = document.createElement("tr");
    tr.dataset.id = p.id;
    cell(tr, p.names.south || SIDE.south, "who south");
    cell(tr, p.names.north || SIDE.north, "who north");
    cell(tr, clockText(p));
    const td = cell(tr, "");
    const a = document.createElement("a");
    a.className = "button watch";
    a.href = `/g/${encodeURIComponent(p.id)}`;
    a.textContent = t("Watch");
    td.appendChild(a);
    playing.appendChild(tr);
  }
  $("lobby-playing-empty").hidden = data.playing.length > 0;
  const mins = Math.round(data.expiry.idle / 60);
  $("lobby-policy").textContent = t(mins === 1 ?
    "A game waiting for an opponent is withdrawn when its creator has left for 1 minute, or after {max} minutes." :
    "A game waiting for an opponent is withdrawn when its creator has left for {n} minutes, or after {max} minutes.",
  { n: mins, max: Math.round(data.expiry.max_age / 60) });
}

/** Show the lobby and keep it live (reconnects with back-off). */
export function startLobby(say) {
  $("lobby").hidden = false;
  let retry = 0;
  const connect = () => {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${proto}://${location.host}/lobby/ws`);
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.type === "lobby") { retry = 0; render(msg, say); $("lobby").dataset.ready = "1"; }
    };
    ws.onclose = () => { setTimeout(connect, Math.min(10000, 500 * 2 ** retry++)); };
  };
  connect();
}
