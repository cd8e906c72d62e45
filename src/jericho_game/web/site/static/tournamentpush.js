// A tournament's next game, on any page (layout.js; issue 52): a logged-in player's page holds the
// tournaments' push socket (/ws/tournaments, web/tournaments/push.py) while its player is in a
// tournament, and goes to each new game of theirs by itself, as on lichess.  The server closes an
// idle socket (the player is in no tournament); the tournament page opens it again on a join.
// A page where its player is at the board of a game being played (app.js: data-playing) stays,
// and a tab goes to a game once: a player who left it on purpose is not taken back.
import { whoami } from "./account.js";

const KEY = "jericho:tournament-games";
let socket = null;
let wait = 2000;

function visited() {
  try { return new Set(JSON.parse(sessionStorage.getItem(KEY) || "[]")); } catch { return new Set(); }
}

function remember(game) {
  const seen = visited();
  seen.add(game);
  try { sessionStorage.setItem(KEY, JSON.stringify([...seen].slice(-50))); } catch { /* no storage */ }
}

function go(msg) {
  const here = location.pathname.match(/^\/g\/([^/]+)$/);
  if (here && decodeURIComponent(here[1]) === msg.game) return;
  if (visited().has(msg.game)) return;
  if (document.documentElement.dataset.playing === "1") return;  // at the board of another game
  remember(msg.game);
  location.assign(`/g/${encodeURIComponent(msg.game)}`);
}

export async function startTournamentPush() {
  if (socket || !("WebSocket" in window)) return;
  if (!(await whoami()).account) return;
  const here = location.pathname.match(/^\/g\/([^/]+)$/);
  if (here) remember(decodeURIComponent(here[1]));  // this tab is at that game already
  const proto = location.protocol === "https:" ? "wss" : "ws";
  let idle = false;
  try { socket = new WebSocket(`${proto}://${location.host}/ws/tournaments`); } catch { socket = null; return; }
  socket.addEventListener("message", (e) => {
    let msg;
    try { msg = JSON.parse(e.data); } catch { return; }
    if (msg.type === "ready") wait = 2000;
    else if (msg.type === "idle" || msg.type === "error") idle = true;  // nothing to push, or refused
    else if (msg.type === "game" && typeof msg.game === "string") go(msg);
  });
  socket.addEventListener("close", () => {
    socket = null;
    if (idle) return;
    setTimeout(startTournamentPush, wait);  // a restart or a lost connection: again, less often
    wait = Math.min(wait * 2, 60000);
  });
}
