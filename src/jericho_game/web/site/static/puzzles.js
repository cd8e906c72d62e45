// Puzzles: a position from a real game that is won (every winning first move is right) or where
// exactly one move holds the draw, proved to the end of the game by the endgame solver
// (jericho_game.ai.puzzles).  The server checks each move and plays the reply
// (POST /api/puzzles/ID/try), gives hints (POST /api/puzzles/ID/hint) and, after the attempt, the
// solution and its fastest line (POST /api/puzzles/ID/result); this page only draws.  Only a
// logged-in player's first attempt moves a rating (the account's, on the server); an anonymous
// solver's progress is kept here, in localStorage.  All text goes in through textContent.
import { Board, COLOUR_NAME, describeTower, drawPiece } from "./board.js";
import { initContrast } from "./contrast.js";
import { changeHeaders } from "./account.js";
import { t } from "./i18n.js";
import { showOffline, unreachable } from "./offline.js";
import { rove, trayKeys } from "./traykeys.js";

initContrast();
const $ = (id) => document.getElementById(id);
const SIDE_NAME = { south: t("South"), north: t("North") };
const LOCAL_KEY = "jericho:puzzles";  // an anonymous solver's progress: {solved, failed, tried: {id: 1 or 0}}
// what each theme asks (the server's theme_text, jericho_game.puzzles.THEME_NAMES, in the page's language)
const THEME_TEXT = {
  "win-in-1": t("Win in 1: make seven monoliths that no reply can break"),
  "win-in-2": t("Win in 2: force the win within two of your moves"),
  "long-win": t("Win the endgame: a forced win, whatever the defence, to the end of the game"),
  "win-by-exhaustion": t("Win by exhaustion: when neither side can place, the one with more monoliths wins"),
  "break-the-seven": t("Break the seven: your opponent holds seven monoliths; only one move saves the draw"),
  "hold-on": t("Hold on: only one move keeps the draw; every other move loses"),
};
const themeText = () => THEME_TEXT[S.P.theme] ?? S.P.theme_text;

/** Why a legal move is not the solution (the server's message, web/learn/puzzles.py, in the page's language). */
function wrongWords(move, reply) {
  if (S.P.kind === "defence" || S.P.theme === "break-the-seven" || S.P.theme === "hold-on") {
    return reply ? t("{move} loses the game: {reply} wins by force.", { move, reply }) :
      t("{move} loses the game: the opponent keeps a winning line.", { move });
  }
  // a pass is not a move that "holds on" (issue 34: "…pass holds on."): the opponent passes and holds on
  if (reply === "pass") return t("{move} does not force the win: the opponent passes and still holds on.", { move });
  return reply ? t("{move} does not force the win: the answer {reply} holds on.", { move, reply }) :
    t("{move} does not force the win: the opponent can hold on.", { move });
}
// P: the puzzle from the server; line: the moves played so far (the solution's first moves);
// mine: the solver's own moves, as sent with the result; hints: how many hints were shown;
// over: solved, failed or solution shown; posted: the result was sent (only the first attempt counts)
const S = { P: null, game: null, line: [], mine: [], hints: 0, over: false, failed: false, posted: false,
  selected: null, busy: false, hintCell: null, streak: null };
// issue 34: the theme filter (kept in this browser) and the streak: {count, last, ids} while one
// runs; the best streak is the account's (on the server, checked against its solved puzzles) or,
// anonymous, this browser's
const THEME_KEY = "jericho:puzzle-theme";
const BEST_KEY = "jericho:streak-best";
const kept = {
  get(key) { try { return localStorage.getItem(key); } catch { return null; } },
  set(key, v) { try { localStorage.setItem(key, v); } catch { /* private mode */ } },
};
let board = null;
let topo = null;
const FRESH_INFO = $("info").textContent;  // the page's first line, in the page's language

function local() {
  let data = null;
  try { data = JSON.parse(localStorage.getItem(LOCAL_KEY) || "null"); } catch { /* private mode, or not JSON */ }
  if (!data || typeof data !== "object" || typeof data.tried !== "object" || data.tried === null) {
    data = { solved: 0, failed: 0, tried: {} };
  }
  return data;
}

/** An anonymous attempt's end, kept in this browser (its first attempt at a puzzle only, as on the server). */
function keepLocally(id, solved) {
  const data = local();
  if (id in data.tried) return;
  data.tried[id] = solved ? 1 : 0;
  data[solved ? "solved" : "failed"] += 1;
  try { localStorage.setItem(LOCAL_KEY, JSON.stringify(data)); } catch { /* private mode */ }
}

async function api(url, body) {
  const headers = body === undefined ? {} : await changeHeaders();
  const r = await fetch(url, body === undefined ? { headers, cache: "no-store" } :
    { method: "POST", headers, body: JSON.stringify(body) });
  const data = await r.json();
  if (!r.ok) throw new Error(data.message || r.statusText);
  return data;
}

function feedback(text, kind = "") {
  $("feedback").textContent = text;
  $("feedback").className = `feedback ${kind}`;
}

function sideOf() { return S.P.side; }
function other(side) { return side === "south" ? "north" : "south"; }

function showPlayer(player) {
  if (!player) {  // anonymous: the progress kept in this browser
    const { solved, failed } = local();
    $("puzzle-score").textContent = t("In this browser: solved {solved}, failed {failed} · log in to get a puzzle rating",
      { solved, failed });
    return;
  }
  const args = { rating: player.rating, solved: player.solved, failed: player.failed };
  $("puzzle-score").textContent = player.provisional ?
    t("Your puzzle rating: {rating} (provisional) · solved {solved}, failed {failed}", args) :
    t("Your puzzle rating: {rating} · solved {solved}, failed {failed}", args);
}

async function load(id) {
  const q = new URLSearchParams();
  if (S.P) q.set("skip", S.P.id);
  if (S.streak) q.set("above", String(S.streak.last));  // a streak: the next one is harder
  else if ($("puzzle-theme").value) q.set("theme", $("puzzle-theme").value);
  const query = q.toString() ? `?${q}` : "";
  const data = await api(id ? `/api/puzzles/${encodeURIComponent(id)}` : `/api/puzzles/next${query}`);
  Object.assign(S, { P: data, game: data.game, line: [], mine: [], hints: 0, over: false, failed: false,
    posted: false, selected: null, busy: false, hintCell: null, account: Boolean(data.player), rated: null,
    serverBest: data.player ? data.player.streak_best || 0 : 0 });
  history.replaceState(null, "", `/puzzles/${encodeURIComponent(data.id)}`);
  board.setFlip(data.side === "north");  // the solver's camp at the bottom, as in a game
  $("puzzle-title").textContent = t("Puzzle {id}", { id: data.id });
  const who = SIDE_NAME[data.side];
  $("puzzle-goal").textContent = data.kind === "defence" ?
    t("{side} to move: find the only move that keeps the draw.", { side: who }) :
    t("{side} to move: find a move that wins the game.", { side: who });
  // the puzzle's rating is hidden until it is solved or failed: it would tell how hard it is (issue 34)
  $("puzzle-meta").textContent = t("Puzzle rating: shown once you solve or fail it");
  $("tray-mine-title").textContent = t("Your pieces (you play {side}, at the bottom)", { side: who });
  $("btn-hint").textContent = t("Hint");
  $("btn-hint").disabled = false;
  $("btn-solution").disabled = false;
  $("btn-retry").hidden = true;
  $("btn-analyse").hidden = true;
  $("btn-analyse").href = `/analysis?position=${encodeURIComponent(data.position)}`;
  showPlayer(data.player);
  feedback("");
  $("info").textContent = FRESH_INFO;  // the last puzzle's line goes (issue 34)
  render();
}

function renderLine() {
  const ol = $("puzzle-line");
  ol.replaceChildren();
  S.line.forEach((m, i) => {
    const li = document.createElement("li");
    const by = i % 2 === 0 ? t("you ({side})", { side: SIDE_NAME[sideOf()] }) : SIDE_NAME[other(sideOf())];
    li.textContent = `${m} — ${by}`;
    ol.appendChild(li);
  });
}

function render() {
  const g = S.game;
  const me = sideOf();
  const playing = !S.over && g.turn === me && !g.outcome && !S.busy;
  const legal = new Set(S.selected && playing ? g.legal[S.selected] || [] : []);
  const hint = S.hintCell && !S.selected ? new Set([S.hintCell]) : null;
  board.render({ towers: g.towers, leaders: g.leaders, last: g.last },
    { legalCells: hint || legal, selected: S.selected });
  const [s0, s1] = g.score;
  const tray = $("tray-mine");
  tray.replaceChildren();
  // only the pieces still in the reserve: a puzzle comes late in a game, when few are left
  for (const p of g.reserves[me]) {
    const [size, c] = [p[0], p[1]];
    const b = document.createElement("button");
    b.type = "button";
    b.className = "slot";
    b.dataset.piece = p;
    b.classList.toggle("playable", playing);
    b.classList.toggle("selected", S.selected === p);
    b.setAttribute("aria-pressed", String(S.selected === p));
    b.setAttribute("aria-label", `${p}, ${t("size {size}, {colour}", { size, colour: COLOUR_NAME[c] })}`);
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "-45 -2 90 34");
    svg.setAttribute("aria-hidden", "true");
    drawPiece(svg, p, 0, 0, 30);
    b.appendChild(svg);
    b.onclick = (e) => pick(p, e.detail === 0);  // detail 0: Enter or Space, not a pointer
    tray.appendChild(b);
  }
  if (!g.reserves[me].length) tray.textContent = t("none left");
  trayKeys(tray);  // one Tab stop, the arrow keys within (static/traykeys.js)
  rove(tray);
  const theirs = g.reserves[other(me)];
  $("tray-theirs").textContent = theirs.length ? theirs.join(" ") : t("none left");
  $("tray-theirs-title").firstChild.textContent = `${t("{side}'s pieces:", { side: SIDE_NAME[other(me)] })} `;
  const monoliths = t("Monoliths: South {south}, North {north}", { south: s0, north: s1 });
  $("puzzle-monoliths").textContent = !g.outcome ? monoliths : `${monoliths} · ${SIDE_NAME[g.outcome] ?
    t("{side} has won", { side: SIDE_NAME[g.outcome] }) : t("nobody has won")}`;
  renderLine();
}

/** Pick (or put back) a piece.  ``keyboard``: chosen with Enter or Space, so the focus follows the
 * move: to the piece's first legal cell, or back to the piece when it was put back. */
function pick(p, keyboard = false) {
  const g = S.game;
  if (S.over || S.busy || g.turn !== sideOf()) return;
  S.selected = S.selected === p ? null : p;
  const cells = S.selected ? g.legal[p] || [] : [];
  render();
  if (S.selected) {
    $("info").textContent = cells.length === 1 ? t("{piece}: 1 cell highlighted. Choose it on the board.", { piece: p }) :
      t("{piece}: {n} cells highlighted. Choose one on the board.", { piece: p, n: cells.length });
    if (!cells.length) feedback(t("{piece} fits nowhere here: every tower holds its size or its colour.", { piece: p }), "bad");
    board.bringIntoView();
    if (keyboard && cells.length) board.focusCell(cells[0]);
  } else if (keyboard) {
    const b = document.querySelector(`#tray-mine .slot[data-piece="${p}"]`);
    if (b) b.focus();
  }
}

/** Show what the server said of a rated attempt (the answer of a wrong or last move, a hint, the result). */
function showRated(r) {
  if (!r) return;
  if (r.player) showPlayer(r.player);
  if (r.rated) {
    const d = r.after - r.before;
    $("puzzle-score").textContent += ` (${d >= 0 ? "+" : "−"}${Math.abs(d)})`;
  }
}

async function sendResult(kind) {
  if (S.posted) return;
  S.posted = true;
  if (!S.account) {  // anonymous: kept in this browser, the server rates nothing
    keepLocally(S.P.id, kind === "solved" && !S.failed && S.hints < 2);
    showPlayer(null);
    return;
  }
  if (S.rated) { showRated(S.rated); return; }  // the server rated it with the move or the hint
  try {
    showRated(await api(`/api/puzzles/${encodeURIComponent(S.P.id)}/result`, { moves: S.mine, hints: S.hints }));
  } catch (err) {
    feedback(t("The server could not answer: {why}", { why: err.message }), "bad");
  }
}

function finish(kind) {
  S.over = true;
  S.selected = null;
  S.hintCell = null;
  $("btn-hint").disabled = true;
  $("btn-solution").disabled = kind === "shown";
  $("btn-retry").hidden = kind === "solved" || !!S.streak;
  $("btn-analyse").hidden = false;
  const data = S.P;
  $("puzzle-meta").textContent = data.plays === 1 ? t("Puzzle rating {rating} · played once", { rating: data.rating }) :
    t("Puzzle rating {rating} · played {n} times", { rating: data.rating, n: data.plays });
  const solvedInStreak = kind === "solved" && !S.failed && S.hints === 0;
  // the result is sent before a streak that ends here: the server checks the streak against them
  S.sending = sendResult(kind);
  if (S.streak) streakStep(solvedInStreak);
  render();
  $("btn-next").focus();
}

async function play(move) {
  if (S.over || S.busy) return;
  S.busy = true;
  try {
    const data = await api(`/api/puzzles/${encodeURIComponent(S.P.id)}/try`, { moves: S.line, try: move });
    S.selected = null;
    if (!data.legal) {
      feedback(data.message, "bad");
      return;
    }
    S.mine.push(data.played);
    S.game = data.game;
    if (data.result && !S.rated) S.rated = data.result;  // an account's attempt, rated by this move
    if (!data.correct) {
      S.failed = true;
      S.line.push(data.played);
      if (data.reply) S.line.push(data.reply);
      feedback(`${wrongWords(data.played, data.reply)} ${t("Try again, or show the solution.")}`, "bad");
      finish("failed");
      return;
    }
    S.hintCell = null;
    S.line.push(data.played);
    if (data.reply) S.line.push(data.reply);
    if (data.done) {
      const theme = themeText();
      const line = (data.line || []).join(" ");
      const words = S.failed ? t("That is the solution. ({theme}.)", { theme }) : data.accepted > 1 ?
        t("Solved! {move} wins ({n} moves win). {theme}.", { move: data.played, n: data.accepted, theme }) :
        t("Solved! {move} was the only move. {theme}.", { move: data.played, theme });
      feedback(line ? `${words} ${t("The fastest line: {line}.", { line })}` : words, "good");
      finish("solved");
    } else {
      feedback(t("Right: {move}. {side} answers {reply}. Find the next move.",
        { move: data.played, side: SIDE_NAME[other(sideOf())], reply: data.reply }), "good");
      S.refocus = true;  // the tray is drawn again below: the keyboard goes on from its first piece
    }
  } catch (err) {
    feedback(t("The server could not answer: {why}", { why: err.message }), "bad");
  } finally {
    S.busy = false;
    render();
    if (S.refocus) {
      S.refocus = false;
      const first = document.querySelector("#tray-mine .slot");
      if (first) first.focus();
    }
  }
}

async function hint() {
  if (S.over || S.busy) return;
  if (S.hints === 0) {  // the theme: the page knows it
    S.hints = 1;
    feedback(t("Hint: {theme}.", { theme: themeText() }));
    $("btn-hint").textContent = t("Another hint");
    return;
  }
  // the cell, then the piece: the server tells them (and an account's attempt is then a failure)
  let data;
  try {
    data = await api(`/api/puzzles/${encodeURIComponent(S.P.id)}/hint`, { moves: S.line, level: S.hints + 1 });
  } catch (err) {
    feedback(t("The server could not answer: {why}", { why: err.message }), "bad");
    return;
  }
  if (data.result && !S.rated) S.rated = data.result;
  const { cell } = data;
  const piece = data.piece || "";
  S.hints += 1;
  if (S.hints === 2) {
    S.hintCell = cell || null;
    feedback(cell ? t("Hint: the move is on {cell} (highlighted). This attempt no longer counts as solved.", { cell }) :
      t("Hint: you must pass."));
    $("btn-hint").textContent = t("Last hint");
    render();
  } else {
    feedback(cell ? t("Hint: play {piece} on {cell}.", { piece, cell }) : t("Hint: play {piece}.", { piece }));
    $("btn-hint").disabled = true;
  }
}

async function showSolution() {
  S.hints = Math.max(S.hints, 9);
  S.over = true;
  // the solution comes with the attempt's end (a failure when it was not solved yet)
  const end = await api(`/api/puzzles/${encodeURIComponent(S.P.id)}/result`, { moves: S.mine, hints: S.hints });
  if (!S.posted) {
    S.posted = true;
    if (S.account) showRated(S.rated || end);
    else { keepLocally(S.P.id, false); showPlayer(null); }
  }
  const solution = end.solution;
  const game = await api(`/api/puzzles/${encodeURIComponent(S.P.id)}`);
  S.game = game.game;
  S.line = [];
  // replay the whole line on the server, move by move, so the board ends on the final position
  for (let i = 0; i < solution.length; i += 2) {
    const data = await api(`/api/puzzles/${encodeURIComponent(S.P.id)}/try`, { moves: S.line, try: solution[i] });
    S.game = data.game;
    S.line.push(data.played);
    if (data.reply) S.line.push(data.reply);
  }
  feedback(t("Solution: {moves}. {theme}.", { moves: solution.join(", "), theme: themeText() }), "");
  finish("shown");
}

/** Start or stop a streak (the button). */
function toggleStreak() {
  if (S.streak) { endStreak(); return; }
  S.streak = { count: 0, last: 0, ids: [] };
  showStreak();
  load().then(focusTray).catch((e) => feedback(t("Could not load a puzzle: {why}", { why: e.message }), "bad"));
}

/** A streak's puzzle is over: one more, or the end at the first mistake. */
function streakStep(solved) {
  if (!solved) { endStreak(); return; }
  S.streak.count += 1;
  S.streak.last = S.P.rating;
  S.streak.ids.push(S.P.id);
  showStreak();
}

/** The best streak so far: the account's, or this browser's. */
function bestStreak() {
  return S.account ? S.serverBest || 0 : Number(kept.get(BEST_KEY)) || 0;
}

async function endStreak() {
  const n = S.streak ? S.streak.count : 0;
  const ids = S.streak ? S.streak.ids : [];
  S.streak = null;
  showStreak();
  let best = Math.max(n, bestStreak());
  const over = () => { $("streak-line").textContent = t("Streak over: {n} solved in a row. Best streak: {best}.", { n, best }); };
  over();
  if (!S.account) { kept.set(BEST_KEY, String(best)); return; }
  try {
    await S.sending;  // the last puzzle's result first
    const r = await api("/api/puzzles/streak", { puzzles: ids });
    S.serverBest = r.best;
    best = r.best;
    over();
  } catch (err) {
    feedback(t("The server could not answer: {why}", { why: err.message }), "bad");
  }
}

function showStreak() {
  const on = !!S.streak;
  $("btn-streak").setAttribute("aria-pressed", String(on));
  $("btn-streak").textContent = on ? t("Stop the streak") : t("Puzzle streak");
  $("puzzle-theme").disabled = on;  // a streak mixes every theme
  $("btn-hint").hidden = on;  // no hints in a streak: the first mistake ends it
  if (on) {
    $("streak-line").textContent = t("Streak: {n} solved in a row. Best streak: {best}.",
      { n: S.streak.count, best: Math.max(S.streak.count, bestStreak()) });
  }
}

function focusTray() {
  const first = document.querySelector("#tray-mine .slot");
  if (first) first.focus();
  else $("tray-mine").focus();
}

async function main() {
  $("puzzle-theme").value = kept.get(THEME_KEY) || "";
  if ($("puzzle-theme").selectedIndex < 0) $("puzzle-theme").value = "";
  $("puzzle-theme").addEventListener("change", () => {
    kept.set(THEME_KEY, $("puzzle-theme").value);
    load().catch((e) => feedback(t("Could not load a puzzle: {why}", { why: e.message }), "bad"));
  });
  $("btn-streak").onclick = toggleStreak;
  topo = await (await fetch("/api/topology")).json();
  board = new Board($("board"), topo, {
    onCell: (cell) => {
      if (!S.game) return;
      if (!S.selected) {
        const c = topo.cells.find((x) => x.name === cell);
        $("info").textContent = describeTower(cell, S.game.towers[cell] || [], c.camp);
        return;
      }
      play(`${S.selected}@${cell}`);
    },
    onAlignment: (name) => {
      if (!name || !S.game) return;
      const c = S.game.confrontations[name];
      if (c) $("info").textContent = t("Alignment {name}: {reason}.", { name, reason: c.reason });
    },
    onCellInfo: () => {},
  });
  board.build();
  $("btn-hint").onclick = hint;
  $("btn-solution").onclick = () => showSolution().catch((e) => feedback(e.message, "bad"));
  $("btn-retry").onclick = async () => {
    const id = S.P.id;
    const posted = S.posted;
    await load(id);
    S.posted = posted;  // only the first attempt is rated (and kept, for an anonymous solver)
    S.failed = true;
  };
  // the next puzzle: the last one's lines are cleared and the keyboard goes on from the new puzzle's
  // pieces (issue 34: the focus stayed on the button, 12-13 Tabs from the tray, under a stale line)
  $("btn-next").onclick = () => {
    if (S.streak && !S.over) endStreak();  // skipping a streak's puzzle ends the streak
    load().then(focusTray).catch((e) => feedback(t("Could not load a puzzle: {why}", { why: e.message }), "bad"));
  };
  $("typed").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("typed-move").value.trim();
    // while a move or the retry is on its way the box keeps what was typed: Enter again plays it
    if (!text || S.over || S.busy) return;
    $("typed-move").value = "";
    play(text);
  });
  const m = location.pathname.match(/^\/puzzles\/([A-Za-z0-9]+)$/);
  await load(m ? m[1] : undefined);
}

main().catch((err) => {
  if (unreachable(err)) showOffline($("puzzle"), t("The puzzles need the server: it checks every move."));
  else feedback(t("Could not load the puzzles: {why}", { why: err.message }), "bad");
});
