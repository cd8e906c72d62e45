// The tutorial: seven short lessons, each a position played on the real engine
// (jericho_game.web.tutorial answers every move: legal or not, the tutor's reply, feedback).
import { Board, COLOUR_NAME, describePreview, describeTower, drawPiece } from "./board.js";
import { initContrast } from "./contrast.js";
import { t } from "./i18n.js";
import { showOffline, unreachable } from "./offline.js";
import { rove, trayKeys } from "./traykeys.js";

initContrast();
const $ = (id) => document.getElementById(id);
const SIDE_NAME = { south: t("South"), north: t("North") };
const T = { lessons: [], index: 0, moves: [], game: null, selected: null, previewCell: null, done: new Set(), busy: false };
let board = null;
let topo = null;

function feedback(text, kind = "") {
  $("feedback").textContent = text;
  $("feedback").className = `feedback ${kind}`;
}

async function json(url, body) {
  const r = await fetch(url, body === undefined ? {} :
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const data = await r.json();
  if (!r.ok) throw new Error(data.message || r.statusText);
  return data;
}

/** Open lesson ``index``; ``how``: "load" (the address already says it), "user" (a new
 * history entry, so Back returns to the lesson before) or "history" (Back / Forward). */
async function open(index, how = "load") {
  T.index = index;
  const lesson = T.lessons[index];
  const data = await json(`/api/tutorial/${lesson.id}`);
  T.moves = [];
  T.game = data.game;
  T.selected = null;
  T.previewCell = null;
  $("lesson-title").textContent = lesson.title;
  $("lesson-text").textContent = lesson.text;
  $("lesson-goal").textContent = t("Your turn: {goal}", { goal: lesson.goal });
  $("btn-next").hidden = true;
  $("btn-play").hidden = true;
  $("btn-hint").hidden = !lesson.hint;
  feedback("");
  if (how === "user" && location.hash !== `#${lesson.id}`) history.pushState(null, "", `#${lesson.id}`);
  else history.replaceState(null, "", `#${lesson.id}`);
  render();
  // the focus was on a button that the new lesson hides or redraws: it goes to the lesson's title
  if (how !== "load") $("lesson-title").focus();
}

function render() {
  const g = T.game;
  const nav = $("lesson-nav");
  nav.replaceChildren();
  T.lessons.forEach((l, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = String(i + 1);
    b.title = l.title;
    b.setAttribute("aria-label", T.done.has(l.id) ? t("{title} (done)", { title: l.title }) : l.title);
    if (i === T.index) b.setAttribute("aria-current", "step");
    b.classList.toggle("done", T.done.has(l.id));
    b.onclick = () => open(i, "user");
    nav.appendChild(b);
  });
  const playing = !g.outcome && g.turn === "south" && !T.busy;
  const legal = new Set(T.selected && playing ? g.legal[T.selected] || [] : []);
  let cells = null, lines = null;
  if (T.selected && playing) {
    const effects = g.effects[T.selected[0]] || {};
    cells = {};
    for (const cell of legal) cells[cell] = describePreview(effects[cell] || [], "south", SIDE_NAME);
    if (T.previewCell && cells[T.previewCell]) {
      lines = {};
      for (const [a, , now] of effects[T.previewCell] || []) lines[a] = now;
      $("info").textContent = `${T.selected}@${T.previewCell}: ${cells[T.previewCell].words}.`;
    }
  }
  board.render({ towers: g.towers, leaders: g.leaders, last: g.last },
    { legalCells: legal, selected: T.selected, preview: cells, previewLines: lines });
  const tray = $("tray-mine");
  // the tray is drawn anew: a piece that had the focus gets it back (else it fell to <body>)
  const focused = tray.contains(document.activeElement) ? document.activeElement.dataset.piece : null;
  tray.replaceChildren();
  const reserve = new Set(g.reserves.south);
  for (const size of [5, 4, 3, 2, 1]) {
    for (const c of ["R", "Y", "G", "B", "W"]) {
      const p = `${size}${c}`;
      const b = document.createElement("button");
      b.type = "button";
      b.className = "slot";
      b.dataset.piece = p;
      const has = reserve.has(p);
      b.disabled = !has;
      b.classList.toggle("used", !has);
      b.classList.toggle("playable", has && playing);
      b.classList.toggle("selected", T.selected === p);
      b.setAttribute("aria-pressed", String(T.selected === p));
      const words = t("size {size}, {colour}", { size, colour: COLOUR_NAME[c] });
      b.setAttribute("aria-label", `${p}, ${words}${has ? "" : t(", already placed")}`);
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.setAttribute("viewBox", "-45 -2 90 34");
      if (has) drawPiece(svg, p, 0, 0, 30);
      b.appendChild(svg);
      b.onclick = (e) => {
        if (!playing) return;
        T.selected = T.selected === p ? null : p;
        T.previewCell = null;
        const n = T.selected ? (g.legal[p] || []).length : 0;
        const badges = t("the badges show how each move changes your lead in monoliths.");
        $("info").textContent = !T.selected ? "" : n === 1 ? t("{piece}: 1 cell highlighted; {badges}", { piece: p, badges }) :
          t("{piece}: {n} cells highlighted; {badges}", { piece: p, n, badges });
        if (T.selected && !n) feedback(t("{piece} fits nowhere here: every tower holds its size or its colour.", { piece: p }), "bad");
        render();
        // with the keyboard (Enter or Space: no pointer, detail 0) the focus goes to the first
        // cell the piece may go to, as in a game; the arrow keys move between cells
        if (T.selected && n && e.detail === 0) board.focusCell(g.legal[p][0]);
        // on a phone the tray lies under the board: picking a piece brings the board back in sight
        else if (T.selected) board.bringIntoView();
      };
      tray.appendChild(b);
    }
  }
  trayKeys(tray);  // one Tab stop, the arrow keys within (static/traykeys.js)
  rove(tray, focused ? tray.querySelector(`[data-piece="${focused}"]`) : null);
  if (focused && document.activeElement === document.body) tray.querySelector(`[data-piece="${focused}"]`)?.focus();
}

async function tryMove(cell) {
  const lesson = T.lessons[T.index];
  if (!T.selected) {
    const tower = T.game.towers[cell] || [];
    const c = topo.cells.find((x) => x.name === cell);
    $("info").textContent = describeTower(cell, tower, c.camp);
    return;
  }
  if (T.busy) return;
  T.busy = true;
  const attempt = `${T.selected}@${cell}`;
  try {
    const data = await json(`/api/tutorial/${lesson.id}`, { moves: T.moves, try: attempt });
    T.selected = null;
    T.previewCell = null;
    T.game = data.game;
    if (!data.legal) {
      feedback(data.feedback, "bad");
    } else {
      T.moves = data.moves;
      if (data.done) {
        T.done.add(lesson.id);
        feedback(t("Well done! {feedback}", { feedback: data.feedback }), "good");
        const last = T.index === T.lessons.length - 1;
        $("btn-next").hidden = last;
        $("btn-hint").hidden = true;
        $("btn-play").hidden = !last;
        if (last) feedback(t("Well done! {feedback} You know the whole game now.", { feedback: data.feedback }), "good");
        ($(last ? "btn-play" : "btn-next")).focus();
      } else {
        feedback(t("{feedback} Press “Try again” to replay the lesson.", { feedback: data.feedback }), "bad");
      }
    }
  } catch (err) {
    feedback(t("The tutor could not answer: {why}", { why: err.message }), "bad");
  } finally {
    T.busy = false;
    render();
  }
}

async function main() {
  topo = await json("/api/topology");
  board = new Board($("board"), topo, {
    onCell: tryMove,
    onAlignment: (name) => {
      if (!name || !T.game) return;
      const c = T.game.confrontations[name];
      $("info").textContent = t("Alignment {name}: {reason}.", { name, reason: c.reason });
    },
    onCellInfo: (cell) => {
      if (!T.selected) return;
      T.previewCell = cell;
      render();
    },
  });
  board.build();
  T.lessons = (await json("/api/tutorial")).lessons;
  $("btn-reset").onclick = () => open(T.index);  // the focus stays on "Try again"
  $("btn-next").onclick = () => open(Math.min(T.index + 1, T.lessons.length - 1), "user");
  $("btn-hint").onclick = () => feedback(t("Hint: {hint}", { hint: T.lessons[T.index].hint }));
  const fromHash = () => T.lessons.findIndex((l) => `#${l.id}` === location.hash);
  // Back and Forward (and a typed #lesson) switch lessons
  window.addEventListener("popstate", () => { const i = fromHash(); if (i >= 0 && i !== T.index) open(i, "history"); });
  window.addEventListener("hashchange", () => { const i = fromHash(); if (i >= 0 && i !== T.index) open(i, "history"); });
  const wanted = fromHash();
  await open(wanted >= 0 ? wanted : 0);
}

main().catch((err) => {
  if (unreachable(err)) showOffline($("learn"), t("The lessons need the server: it checks every move."));
  else feedback(t("Could not load the tutorial: {why}", { why: err.message }), "bad");
});
