// "My games": the games whose seat tokens this browser keeps (localStorage jericho:seat:ID),
// listed by the server (POST /api/mygames) and downloadable as one .jgn file.  Names are text only.
import { initContrast } from "./contrast.js";

initContrast();
const $ = (id) => document.getElementById(id);
const SIDE = { south: "South", north: "North", both: "Both (hot-seat)" };
const REASON = {
  seven: "seven monoliths", exhaustion: "both passed", resign: "resignation", time: "on time",
  agreed: "by agreement", claim: "opponent left", aborted: "aborted", expired: "nobody joined",
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
  if (g.status === "waiting") return "Waiting for an opponent";
  if (g.status === "playing") return "In progress";
  const why = REASON[g.reason] ? ` (${REASON[g.reason]})` : "";
  const head = { won: "Won", lost: "Lost", draw: "Draw", none: "No result" }[g.outcome] || g.outcome || "Over";
  return head + why;
}

function opponentText(g) {
  const o = g.opponent;
  if (o.kind === "hotseat") return "Hot-seat";
  if (o.kind === "open") return "(nobody yet)";
  if (o.kind === "ai") return o.name;
  return o.name || "Anonymous";
}

async function post(path, games) {
  return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ games }) });
}

async function main() {
  const games = held();
  const body = $("games");
  let rows = [];
  try {
    const r = await post("/api/mygames", games);
    const data = await r.json();
    if (!r.ok) throw new Error(data.message || r.statusText);
    rows = data.games;
  } catch (err) {
    $("games-error").textContent = `Could not load your games: ${err.message}`;
  }
  for (const g of rows) {
    const tr = document.createElement("tr");
    tr.dataset.id = g.id;
    for (const [text, cls] of [[g.date, "date"], [opponentText(g), "who"], [SIDE[g.side] || g.side, ""],
      [resultText(g), "result"], [String(g.moves ?? Math.ceil(g.plies / 2)), "num"]]) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    const td = document.createElement("td");
    const a = document.createElement("a");
    a.className = "button open";
    a.href = `/g/${encodeURIComponent(g.id)}`;
    a.textContent = g.status === "over" ? "Replay" : "Resume";
    td.appendChild(a);
    tr.appendChild(td);
    body.appendChild(tr);
  }
  $("games-empty").hidden = rows.length > 0;
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
      $("games-error").textContent = `Could not download: ${err.message}`;
    } finally {
      dl.disabled = false;
    }
  };
}

main();
