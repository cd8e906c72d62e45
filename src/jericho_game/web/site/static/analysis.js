// The free analysis board (/analysis): any start (the standard start, a position text, a record,
// a game's ply), moves for both sides kept as a tree of variations, the AI's live evaluation with
// its line (streamed over /ws/analysis while the engine thinks: web/learn/analysis_stream.py), a link to
// share the position and the line as a .jgn record.  The server checks every move and draws
// nothing (web/learn/analysis_board.py); this module keeps the tree.  Text goes in through textContent
// only.
import { whoami } from "./account.js";
import { Board, COLOUR_NAME, describeTower, drawPiece } from "./board.js";
import { initContrast } from "./contrast.js";
import { formatNumber, t } from "./i18n.js";
import { moveLabel } from "./notation.js";
import { rove, trayKeys } from "./traykeys.js";

initContrast();
const $ = (id) => document.getElementById(id);
const SIDE_NAME = { south: t("South"), north: t("North") };

let nextId = 1;
const node = (move, parent) => ({ id: nextId++, move, parent, children: [] });
const A = {
  start: null,  // position text, null: the standard start
  position: null,  // the text of the position shown
  first: "south",
  root: node(null, null),
  cur: null,
  game: null,  // the server's view of the current position
  selected: null,
  engine: false,
  seq: 0,  // bumped on every step asked for: an older answer is dropped
};
// the engine's stream: one socket, one search at a time; `id` names the search the page wants,
// and anything about another one is dropped
const E = { ws: null, id: 0, state: "", retry: null, best: null };
A.cur = A.root;
let board = null;
let topo = null;

async function json(url, body) {
  const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const data = await r.json();
  if (!r.ok) {
    const err = new Error(data.message || r.statusText);
    err.code = data.error;
    err.status = r.status;
    throw err;
  }
  return data;
}

function pathOf(n) {
  const out = [];
  for (let x = n; x && x.move !== null; x = x.parent) out.unshift(x.move);
  return out;
}

function depth(n) {
  let d = 0;
  for (let x = n; x && x.move !== null; x = x.parent) d++;
  return d;
}

function error(text) {
  $("an-error").textContent = text || "";
}

/** Show node ``n``: ask the server for its position, draw it, and evaluate it if the engine is on. */
async function go(n) {
  const moves = pathOf(n);
  const seq = ++A.seq;
  try {
    const data = await json("/api/analysis/view", { start: A.start, moves });
    if (seq !== A.seq) return;  // a later step was asked for meanwhile: its answer counts
    A.cur = n;
    A.game = data.game;
    A.first = data.first;
    A.position = data.position;
    $("an-position").value = data.position || "";
    A.selected = null;
    $("info").textContent = "";
    error("");
  } catch (err) {
    error(t("That position cannot be shown: {why}", { why: err.message }));
    if (!A.game && n !== A.root) {  // a shared link with a bad move: show its start at least
      A.root.children = [];
      go(A.root);
    }
    return;
  }
  history.replaceState(null, "", `#${shareHash()}`);
  render();
  engineFollow();
}

function play(move) {
  if (!A.game) return;
  let child = A.cur.children.find((c) => c.move === move);
  if (!child) {
    child = node(move, A.cur);
    A.cur.children.push(child);  // the first child is the main line, later ones are variations
  }
  go(child);
}

function render() {
  const g = A.game;
  const turn = g.turn;
  const over = !!g.outcome;
  const ply = depth(A.cur);
  const after = t("after {move}", { move: `${moveLabel(ply, A.first)} ${A.cur.move}` });
  const where = ply ? ` · ${after}` : "";
  $("an-turn").textContent = over ? (g.outcome === "draw" ? t("Game over: a draw") :
    t("Game over: {side} wins", { side: SIDE_NAME[g.outcome] })) :
    t("{side} to move · {south}–{north} monoliths", { side: SIDE_NAME[turn], south: g.score[0], north: g.score[1] }) + where;
  const legal = new Set(A.selected ? g.legal[A.selected] || [] : []);
  board.render({ towers: g.towers, leaders: g.leaders, last: g.last }, { legalCells: legal, selected: A.selected });
  drawArrow();
  drawTray(turn, over);
  $("an-pass").hidden = over || Object.keys(g.legal).length > 0;
  $("an-back").disabled = A.cur === A.root;
  $("an-first").disabled = A.cur === A.root;
  $("an-forward").disabled = !A.cur.children.length;
  $("an-last").disabled = !A.cur.children.length;
  $("an-delete").disabled = A.cur === A.root;
  drawMoves();
}

function drawTray(side, over) {
  const tray = $("an-tray");
  $("an-tray-title").textContent = over ? t("No move: the game is over here") :
    t("{side}'s pieces (to move)", { side: SIDE_NAME[side] });
  tray.className = `tray side-${side}`;
  tray.replaceChildren();
  const reserve = new Set(A.game.reserves[side]);
  for (const size of [5, 4, 3, 2, 1]) {
    for (const c of ["R", "Y", "G", "B", "W"]) {
      const p = `${size}${c}`;
      const b = document.createElement("button");
      b.type = "button";
      b.className = "slot";
      b.dataset.piece = p;
      const has = reserve.has(p);
      const playable = has && !over && (A.game.legal[p] || []).length > 0;
      b.disabled = !has;
      b.classList.toggle("used", !has);
      b.classList.toggle("playable", playable);
      b.classList.toggle("selected", A.selected === p);
      b.setAttribute("aria-pressed", String(A.selected === p));
      const words = t("size {size}, {colour}", { size, colour: COLOUR_NAME[c] });
      b.setAttribute("aria-label", `${p}, ${words}${has ? "" : `, ${t("already placed")}`}`);
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.setAttribute("viewBox", "-45 -2 90 34");
      if (has) drawPiece(svg, p, 0, 0, 30);
      b.appendChild(svg);
      b.onclick = () => {
        if (!playable) {
          $("info").textContent = has && !over ? t("{piece} fits nowhere in this position.", { piece: p }) : "";
          return;
        }
        A.selected = A.selected === p ? null : p;
        const n = A.selected ? A.game.legal[p].length : 0;
        $("info").textContent = !A.selected ? "" : n === 1 ? t("{piece}: 1 cell highlighted.", { piece: p }) :
          t("{piece}: {n} cells highlighted.", { piece: p, n });
        render();
        if (A.selected && b.matches(":focus-visible")) board.focusCell(A.game.legal[p][0]);
      };
      tray.appendChild(b);
    }
  }
  trayKeys(tray);  // one Tab stop, the arrow keys within (static/traykeys.js)
  rove(tray);
}

/** The tree as text: the main line, each variation in parentheses after the move it replaces. */
function drawMoves() {
  const box = $("an-moves");
  box.replaceChildren();
  const button = (n, d, withNumber) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `an-mv${n === A.cur ? " current" : ""}`;
    b.dataset.node = n.id;
    const label = moveLabel(d, A.first);
    b.textContent = withNumber || label.endsWith(".") && !label.endsWith("...") ? `${label} ${n.move}` : n.move;
    b.setAttribute("aria-label", `${label} ${n.move}`);
    if (n === A.cur) b.setAttribute("aria-current", "step");
    b.onclick = () => go(n);
    return b;
  };
  const line = (start, d, into) => {
    let n = start, k = d, first = true;
    while (n.children.length) {
      const main = n.children[0];
      into.appendChild(button(main, k + 1, first));
      first = false;
      for (const alt of n.children.slice(1)) {
        const v = document.createElement("span");
        v.className = "an-var";
        v.append("(");
        v.appendChild(button(alt, k + 1, true));
        line(alt, k + 1, v);
        v.append(")");
        into.appendChild(v);
        first = true;
      }
      n = main;
      k++;
    }
  };
  line(A.root, 0, box);
  if (!A.root.children.length) box.textContent = t("No moves yet.");
}

/** The tree as the server reads it: nodes {move, children}, the first child the main line. */
function treeOf(n) {
  return n.children.map((c) => ({ move: c.move, children: treeOf(c) }));
}

function shareHash() {
  const p = new URLSearchParams();
  if (A.start) p.set("start", A.start);
  const moves = pathOf(A.cur);
  if (moves.length) p.set("moves", moves.join(" "));
  return p.toString();
}

/** The engine follows the position shown: a new search for it (which ends the running one). */
function engineFollow() {
  if (A.engine) {
    analyse();
  } else {
    E.id += 1;  // what the running search still says is no longer wanted
    showEval(null);
  }
}

function socket() {
  if (E.ws && E.ws.readyState <= WebSocket.OPEN) return E.ws;
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/analysis`);
  ws.onmessage = (ev) => onEngine(JSON.parse(ev.data));
  ws.onclose = () => {
    if (E.ws !== ws) return;
    E.ws = null;
    if (A.engine && E.state !== "done" && E.state !== "stopped") {  // lost while thinking: try again
      setState("", t("Connection to the engine lost: trying again…"));
      clearTimeout(E.retry);
      E.retry = setTimeout(() => A.engine && analyse(), 1500);
    }
  };
  E.ws = ws;
  return ws;
}

function send(msg) {
  const ws = socket();
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  else ws.addEventListener("open", () => ws.send(JSON.stringify(msg)), { once: true });
}

function analyse() {
  if (!A.game) return;
  E.id += 1;
  showEval(null);
  setState("thinking", t("The engine is thinking…"));
  send({ type: "analyse", id: E.id, start: A.start, moves: pathOf(A.cur) });
}

function stopEngine() {
  if (E.state === "thinking" || E.state === "queued") send({ type: "stop" });
}

/** The state line (announced to screen readers) and the Stop button, which only a running search has. */
function setState(state, text) {
  E.state = state;
  $("an-eval-box").dataset.state = state;
  $("an-engine-state").textContent = text;
  const stop = $("an-stop");
  const had = stop === document.activeElement;
  stop.disabled = !(state === "thinking" || state === "queued");
  if (had && stop.disabled) $("an-engine").focus();  // the focus stays on a usable button
}

function onEngine(msg) {
  if (msg.id !== undefined && msg.id !== null && msg.id !== E.id) return;  // about an older search
  if (msg.type === "update") {
    showEval(msg);
  } else if (msg.type === "queued") {
    setState("queued", t("The AI is busy with games: the engine waits for its turn…"));
  } else if (msg.type === "done") {
    const out = $("an-eval");
    const sims = formatNumber(msg.sims || 0);
    const words = {
      cap: t("The engine stopped at its limit ({n} simulations).", { n: sims }),
      proven: t("The engine proved the result."),
      solved: t("The endgame solver decided this position to the end of the game."),
      decided: t("Nothing to search: the result is decided."),
      stopped: t("Stopped at {n} simulations.", { n: sims }),
    };
    setState(msg.reason === "stopped" ? "stopped" : "done", words[msg.reason] || t("The engine stopped."));
    out.dataset.final = "true";
  } else if (msg.type === "error") {
    if (msg.id === undefined || msg.id === null) return;  // a refused message of ours, not a search
    setState("done", t("No evaluation: {why}", { why: msg.message }));
  }
}

/** The figures of an update (``null``: none): the bar, South's chance and the line as buttons. */
function showEval(data) {
  const out = $("an-eval");
  const bar = $("an-evalbar-south");
  const pv = $("an-pv");
  $("an-eval-box").dataset.engine = A.engine ? "on" : "off";
  E.best = data && data.best && data.best.includes("@") ? data.best : null;
  drawArrow();
  if (!data) {
    out.textContent = "";
    out.dataset.sims = "";
    out.dataset.final = "";
    out.dataset.solved = "";
    bar.style.width = "50%";
    pv.replaceChildren();
    if (!A.engine) setState("", "");
    return;
  }
  const chance = Math.round(data.south * 100);
  bar.style.width = `${data.south * 100}%`;
  const sims = formatNumber(data.sims);
  const solved = data.value !== null && data.value !== undefined;
  out.dataset.solved = solved ? "true" : "";
  if (solved) {  // the endgame solver's verdict, for the side to move, as a tablebase says it
    out.textContent = `${tablebase(data.value, data.plies)} · ${t("{side} to move, solved to the end of the game",
      { side: SIDE_NAME[data.turn] })}`;
  } else {
    out.textContent = (data.exact ? t("South's winning chance {n}% (decided)", { n: chance }) :
      t("South's winning chance {n}%", { n: chance })) + (data.sims ? ` · ${t("{n} simulations", { n: sims })}` : "");
  }
  out.dataset.sims = String(data.sims);
  out.dataset.south = String(chance);
  pv.replaceChildren();
  pv.classList.toggle("solved", solved);
  if (data.best) {
    pv.append(solved ? `${t("The solver's line:")} ` : `${t("best {move}", { move: data.best })} · ${t("line:")} `);
    data.line.forEach((mv, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "an-mv";
      b.textContent = `${data.labels[i]} ${mv}`;
      b.title = t("Play the line up to this move");
      b.onclick = () => playLine(data.line.slice(0, i + 1), data.ply);
      pv.append(b, " ");
    });
  }
}

/** The solver's value for the side to move in a tablebase's words: "Win in 7 plies", "Draw", "Loss in 4 plies". */
function tablebase(value, plies) {
  if (value === 0) return t("Draw");
  if (value > 0) return plies === 1 ? t("Win in 1 ply") : t("Win in {n} plies", { n: plies });
  return plies === 1 ? t("Loss in 1 ply") : t("Loss in {n} plies", { n: plies });
}

const ARROW_KEY = "jericho:analysis-arrow";

function arrowWanted() {
  try { return localStorage.getItem(ARROW_KEY) !== "off"; } catch { return true; }
}

/** The engine's best move drawn on the board: an arrow from the mover's edge to the cell, with the
 * piece at its foot (a pass draws nothing).  Redrawn after every render; off when toggled off. */
function drawArrow() {
  const svg = $("board");
  const old = svg.querySelector("#an-arrow");
  if (old) old.remove();
  const move = E.best;
  if (!board || !topo || !A.game || !move || !arrowWanted() || A.game.outcome) return;
  const [piece, cell] = move.split("@");
  const c = topo.cells.find((x) => x.name === cell);
  if (!c) return;
  const ns = "http://www.w3.org/2000/svg";
  const mk = (tag, attrs, parent) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    parent.appendChild(e);
    return e;
  };
  const [x1, y1] = board.P(c.x, c.y);
  const [x0, y0] = board.P(c.x * 0.55, A.game.turn === "south" ? -4.7 : 4.7);
  const g = mk("g", { id: "an-arrow", class: "an-arrow", "aria-hidden": "true", "pointer-events": "none",
    "data-move": move }, svg);
  const defs = mk("defs", {}, g);
  const marker = mk("marker", { id: "an-arrow-head", viewBox: "0 0 10 10", refX: "6", refY: "5",
    markerWidth: "3.2", markerHeight: "3.2", orient: "auto-start-reverse" }, defs);
  mk("path", { d: "M0,0 L10,5 L0,10 z", class: "an-arrow-head" }, marker);
  const len = Math.hypot(x1 - x0, y1 - y0) || 1;
  const stop = Math.max(0, len - 34);  // the head ends on the cell's edge, not over its tower
  mk("line", { x1: x0, y1: y0, x2: x0 + (x1 - x0) * stop / len, y2: y0 + (y1 - y0) * stop / len,
    class: "an-arrow-shaft", "marker-end": "url(#an-arrow-head)" }, g);
  drawPiece(g, piece, x0, y0 - 14, 28);
}

/** Play the engine's line from the position it was given for (kept in the tree as a variation). */
function playLine(moves, ply) {
  let n = A.cur;
  if (depth(n) !== ply) return;
  for (const mv of moves) {
    let child = n.children.find((c) => c.move === mv);
    if (!child) {
      child = node(mv, n);
      n.children.push(child);
    }
    n = child;
  }
  go(n);
}

async function load(body) {
  try {
    const data = await json("/api/analysis/load", body);
    if (data.tree) startTree(data.start, data.tree, body.at ?? null);
    else start(data.start, data.moves, body.ply ?? null);
  } catch (err) {
    error(t("Could not load it: {why}", { why: err.message }));
  }
}

/** A new tree from ``startText`` with ``moves`` as its main line; shows ``ply`` of it (null: the end). */
function start(startText, moves, ply = null) {
  A.start = startText || null;
  A.root = node(null, null);
  let n = A.root;
  let at = A.root;
  moves.forEach((mv, i) => {
    const c = node(mv, n);
    n.children.push(c);
    n = c;
    if (ply !== null && i + 1 === ply) at = c;
  });
  go(ply === null ? n : at);
}

/** A new tree from a loaded record's ``tree`` (variations included); shows the path ``at`` if it
 * leads somewhere in it, else the end of the main line. */
function startTree(startText, tree, at) {
  A.start = startText || null;
  A.root = node(null, null);
  const build = (parent, nodes) => {
    for (const x of nodes) {
      const c = node(x.move, parent);
      parent.children.push(c);
      build(c, x.children || []);
    }
  };
  build(A.root, tree);
  let n = A.root;
  if (at !== null) {
    for (const mv of at.split(" ").filter(Boolean)) {
      const c = n.children.find((x) => x.move === mv);
      if (!c) break;
      n = c;
    }
  } else {
    while (n.children.length) n = n.children[0];
  }
  go(n);
}

function wire() {
  $("an-back").onclick = () => A.cur.parent && go(A.cur.parent);
  $("an-forward").onclick = () => A.cur.children.length && go(A.cur.children[0]);
  $("an-first").onclick = () => go(A.root);
  $("an-last").onclick = () => {
    let n = A.cur;
    while (n.children.length) n = n.children[0];
    go(n);
  };
  $("an-pass").onclick = () => play("pass");
  $("an-delete").onclick = () => {
    const n = A.cur, p = n.parent;
    if (!p) return;
    p.children = p.children.filter((c) => c !== n);
    go(p);
  };
  const toggle = () => {
    if ($("an-engine").disabled) return;  // no position yet (the key "e" while the page loads)
    A.engine = !A.engine;
    $("an-engine").setAttribute("aria-pressed", String(A.engine));
    $("an-engine").textContent = A.engine ? t("Turn the engine off") : t("Start the engine");
    if (!A.engine) stopEngine();
    engineFollow();
  };
  $("an-engine").onclick = toggle;
  $("an-stop").onclick = stopEngine;
  $("an-share").onclick = async () => {
    // the whole tree as a record (variations included), and the path to the position shown
    let url = `${location.origin}/analysis#${shareHash()}`;
    try {
      const r = await fetch("/api/analysis/record", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ start: A.start, tree: treeOf(A.root) }) });
      if (r.ok) {
        const p = new URLSearchParams({ record: await r.text(), at: pathOf(A.cur).join(" ") });
        url = `${location.origin}/analysis#${p.toString()}`;
      }
    } catch { /* the link to the line alone */ }
    const input = $("an-link");
    input.hidden = false;
    input.value = url;
    try { await navigator.clipboard.writeText(url); $("an-share").textContent = t("Link copied"); } catch { input.select(); }
  };
  $("an-export").onclick = async () => {
    try {
      const r = await fetch("/api/analysis/record", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ start: A.start, tree: treeOf(A.root) }) });
      if (!r.ok) throw new Error((await r.json()).message);
      const url = URL.createObjectURL(await r.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = "jericho-analysis.jgn";
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) {
      error(t("Could not export: {why}", { why: err.message }));
    }
  };
  $("an-load").onclick = () => {
    const text = $("an-text").value.trim();
    if (!text) { error(t("Paste a position text or a record first.")); return; }
    load(text.startsWith("[") || /\b1\.\s/.test(text) ? { record: text } : { position: text });
  };
  $("an-file").onchange = async () => {
    const f = $("an-file").files[0];
    if (f) load({ record: await f.text() });
  };
  $("an-reset").onclick = () => start(null, []);
  // the current position as text: copy it, or paste another and load it (a bad one is named)
  $("an-copy-position").onclick = async () => {
    const box = $("an-position");
    box.value = A.position || box.value;
    box.select();
    try {
      await navigator.clipboard.writeText(box.value);
      $("info").textContent = t("Position copied.");
    } catch {
      $("info").textContent = t("Select the text and copy it (Ctrl+C).");
    }
  };
  const loadPosition = () => {
    const text = $("an-position").value.trim();
    if (!text) { error(t("Paste a position text first.")); return; }
    if (text === A.position) return;
    load({ position: text });
  };
  $("an-load-position").onclick = loadPosition;
  $("an-position").addEventListener("keydown", (e) => { if (e.key === "Enter") loadPosition(); });
  // logged in: search the account's games for the position shown (the link is built when followed)
  whoami().then((me) => {
    if (!me.account) return;
    const find = $("an-find-games");
    const base = `/players/${encodeURIComponent(me.account.username)}/games`;
    const update = () => { find.href = `${base}?${new URLSearchParams({ position: $("an-position").value.trim() })}`; };
    find.addEventListener("click", update);
    find.addEventListener("focus", update);
    update();
    $("an-find-wrap").hidden = false;
  }).catch(() => {});
  $("an-arrow-toggle").checked = arrowWanted();
  $("an-arrow-toggle").onchange = () => {
    try { localStorage.setItem(ARROW_KEY, $("an-arrow-toggle").checked ? "on" : "off"); } catch { /* private mode */ }
    drawArrow();
  };
  document.addEventListener("keydown", (e) => {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA")) return;
    if (e.key === "ArrowLeft" && A.cur.parent) go(A.cur.parent);
    if (e.key === "ArrowRight" && A.cur.children.length) go(A.cur.children[0]);
    if (e.key === "Escape") { A.selected = null; render(); }
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "e") toggle();  // as lichess's "l": the engine on or off
    if (e.key === "s") stopEngine();
  });
}

async function main() {
  topo = await (await fetch("/api/topology")).json();
  board = new Board($("board"), topo, {
    onCell: (cell) => {
      if (A.selected && (A.game.legal[A.selected] || []).includes(cell)) play(`${A.selected}@${cell}`);
      else $("info").textContent = describeTower(cell, A.game.towers[cell] || [], topo.cells.find((x) => x.name === cell).camp);
    },
    onAlignment: (name) => {
      if (name && A.game) $("info").textContent = t("Alignment {name}: {reason}.", { name, reason: A.game.confrontations[name].reason });
    },
    onCellInfo: () => {},
  });
  board.build();
  wire();
  // where to start: #game=ID&ply=N (a game's position), #start=TEXT&moves=A B C (a shared link),
  // ?position=TEXT (a link from elsewhere, e.g. a puzzle), else the standard start
  const hash = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  if (hash.get("record")) {  // a shared tree: the record, and the path to the position shown
    await load({ record: hash.get("record"), at: hash.get("at") || "" });
  } else if (hash.get("game")) {
    const ply = Number(hash.get("ply"));
    await load({ game: hash.get("game"), ply: Number.isInteger(ply) && ply >= 0 ? ply : null });
  } else if (hash.get("start") || hash.get("moves")) {
    start(hash.get("start"), (hash.get("moves") || "").split(" ").filter(Boolean));
  } else if (query.get("position")) {
    await load({ position: query.get("position") });
  } else {
    start(null, []);
  }
  // usable once there is a position to analyse: a click before (a slow network) was lost
  $("an-engine").disabled = false;
}

main().catch((err) => error(t("Could not load the analysis board: {why}", { why: err.message })));
