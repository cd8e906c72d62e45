// Game review on the game page: asks for the review of a finished game, shows its progress, draws
// South's winning chances by ply (inline SVG), marks the moves that lost the most (in the chart and
// in the move list), explains the result (each side's accuracy and slide, the turning points) and
// shows the AI's line for a move on the board on demand; it follows the replay's current ply.  The
// server computes everything (web/learn/review.py); this module only shows it.  All text goes in through
// textContent.  Moves are labelled as the record numbers them ("16... 5Y@c3", notation.js).
import { formatNumber, t } from "./i18n.js";
import { moveCount, moveLabel } from "./notation.js";

const SVG = "http://www.w3.org/2000/svg";
const SIDE_NAME = { south: t("South"), north: t("North") };
const MARK_NAME = { inaccuracy: t("Inaccuracy"), mistake: t("Mistake"), blunder: t("Blunder") };
// the marks in a sentence ("a mistake (decided the game)"): not always the capitalised name in French
const MARK_WORD = { inaccuracy: t("inaccuracy"), mistake: t("mistake"), blunder: t("blunder") };
// how far one request of a review has got: a view never moves back down this order
const STATUS_RANK = { queued: 0, running: 1, done: 2, failed: 2 };
// the chart's drawing box (viewBox units; the SVG scales to the panel's width)
const W = 300, H = 110, PAD = 4;

const pct = (x) => `${Math.round(x * 100)}%`;
const points = (x) => (Math.round(x * 100) === 1 ? t("1 point") : t("{n} points", { n: Math.round(x * 100) }));

function el(tag, attrs = {}, text = null) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  return node;
}

export class ReviewPanel {
  /** ``root``: the panel's elements by id; ``onStep(ply)``: show position ``ply``; ``say(text, kind)``:
   * the page's toast; ``onChange()``: the marks changed (the move list is redrawn); ``onLine(frame)``:
   * show a frame of the AI's line on the board instead of the game's position (null: the game's). */
  constructor(gameId, { onStep, say, onChange, onLine }) {
    this.id = gameId;
    this.onStep = onStep;
    this.say = say;
    this.onChange = onChange;
    this.onLine = onLine || (() => {});
    this.line = null;  // the AI's line being shown: {ply, line, labels, frames, i, played}
    this.view = null;  // the server's review view, or null before it was fetched
    this.loading = false;
    this.ply = null;
    this.drawnKey = "";
    this.byPly = new Map();  // move number -> judgement
    const $ = (id) => document.getElementById(id);
    this.button = $("btn-review");
    this.panel = $("review");
    this.status = $("review-status");
    this.chart = $("review-chart");
    this.now = $("review-now");
    this.keys = $("review-keys");
    this.keysTitle = $("review-keys-title");
    this.summary = $("review-summary");
    this.lineBox = $("review-line");
    this.legend = $("review-legend");
    this.record = $("review-record");
    this.record.href = `/api/games/${encodeURIComponent(gameId)}/review/record`;
    this.live = $("review-live");  // announced to screen readers: only the changes of status, not every position
    this.button.onclick = () => this.request();
    this.chart.addEventListener("click", (e) => this.clickChart(e));
  }

  /** A key that changes whenever the marks do (the move list caches its drawing on it). */
  get key() {
    const v = this.view;
    return v ? `${v.status}:${v.done}` : "";
  }

  /** The game is over (or its state came again, e.g. after a reconnect): fetch its review unless it is
   * known to be done (the server pushes every change, but not those made while disconnected). */
  async gameOver() {
    if (this.loading || (this.view && this.view.status === "done")) return;
    this.loading = true;
    try {
      const r = await fetch(`/api/games/${encodeURIComponent(this.id)}/review`);
      if (r.ok) this.update(await r.json());
    } catch { /* the button stays hidden; a reconnect tries again */ }
    this.loading = false;
  }

  async request() {
    this.button.disabled = true;
    try {
      const r = await fetch(`/api/games/${encodeURIComponent(this.id)}/review`, { method: "POST" });
      const data = await r.json();
      if (data.review) this.update(data.review);  // 202 queued, or 409: someone asked already
      else this.say(data.message || t("The review could not be requested."));
    } catch {
      this.say(t("Could not reach the server: try again."));
    }
    this.button.disabled = false;
  }

  /** A review view from the server (HTTP answer or ``review`` message). */
  update(view) {
    if (!view || view.game !== this.id) return;
    // messages may cross (the POST's "queued" answer can arrive after the pushed "failed" or
    // "running"): never go back to an older request, an earlier status or fewer evaluated positions
    const old = this.view;
    if (old && old.status !== "none" && view.status !== "none") {
      const rank = (v) => STATUS_RANK[v.status] ?? 0;
      if ((old.requested || 0) > (view.requested || 0)) return;
      if ((old.requested || 0) === (view.requested || 0)) {
        if (rank(old) > rank(view)) return;
        if (old.status === view.status && (old.done || 0) > (view.done || 0)) return;
      }
    }
    this.view = view;
    this.byPly = new Map((view.moves || []).map((m) => [m.ply, m]));
    this.onChange();
  }

  /** Decorate move button ``b`` (move number ``ply``) with its mark, if any. */
  decorate(b, ply) {
    const m = this.byPly.get(ply);
    if (!m || !m.mark) return;
    const sign = this.view.thresholds[m.mark].sign;
    b.classList.add("marked", `mark-${m.mark}`);
    b.dataset.mark = m.mark;
    b.appendChild(el("span", { class: "mark-sign", "aria-hidden": "true" }, sign));
    const args = { mark: MARK_NAME[m.mark], side: SIDE_NAME[m.side], points: points(m.loss) };
    const fell = m.decided ? t("{mark}: {side}'s winning chance fell by {points} and the game was decided", args) :
      t("{mark}: {side}'s winning chance fell by {points}", args);
    const words = fell + (m.best ? `; ${t("the AI preferred {move}", { move: m.best })}` : "");
    b.title = words;
    b.setAttribute("aria-label", `${m.label} ${m.move}, ${words}`);
  }

  /** Show the panel for the game ``g`` with position ``ply`` (moves played) current. */
  render(g, ply) {
    const v = this.view;
    const over = g && g.status === "over";
    const none = !v || v.status === "none" || v.status === "failed";
    this.button.hidden = !over || !v || !none;
    this.button.textContent = v && v.status === "failed" ? t("Review again") : t("Review");
    this.panel.hidden = !over || !v || v.status === "none";
    this.hintBoard(this.panel.hidden ? null : v, g, ply);
    if (this.panel.hidden) return;
    this.record.hidden = v.status !== "done";
    const text = this.statusText(v);
    this.status.textContent = text;
    if (this.live.dataset.status !== v.status) {
      this.live.dataset.status = v.status;
      this.live.textContent = v.status === "running" ? t("Reviewing the game.") : text;
    }
    const key = `${this.key}|${ply}|${g.moves.length}|${this.line ? `${this.line.ply}:${this.line.i}` : "-"}`;
    if (key === this.drawnKey) return;
    this.drawnKey = key;
    this.ply = ply;
    // nothing to draw yet (queued, or failed at once): no empty chart
    this.chart.toggleAttribute("hidden", !v.positions.length);
    this.now.hidden = !v.positions.length;
    this.drawChart(v, g.moves.length, ply);
    this.drawNow(v, g, ply);
    this.drawSummary(v);
    this.drawKeys(v);
    this.drawLine();
    const dec = v.decided || { chance: 0.05, least_loss: 0.05 };
    const legendArgs = { inaccuracy: points(v.thresholds.inaccuracy.loss), mistake: points(v.thresholds.mistake.loss),
      blunder: points(v.thresholds.blunder.loss), chance: pct(dec.chance), least: points(dec.least_loss) };
    this.legend.textContent = t("Each point is South's winning chance after that move, by the strongest AI " +
      "(master's search; draws count half). Marks, by how much the move lowered its player's winning chance: " +
      "?! inaccuracy ({inaccuracy} or more), ?  mistake " +
      "({mistake} or more), ?? blunder ({blunder} or more). " +
      "A game is decided when a side's chance is {chance} or less (or proven); a move that turns an " +
      "undecided game into one decided against its player is a blunder whatever its size (from " +
      "{least}). A move the AI would have played itself is never marked. Accuracy (0–100%) " +
      "is lichess's: each move scores 103.17·e^(−0.0435·points lost) − 2.17, and the moves' scores are " +
      "averaged, weighted by how sharp the game was around each, together with their harmonic mean. " +
      "Turning points: each side's costliest moves, marked or not, with their share of all the winning " +
      "chance that side gave away.", legendArgs);
  }

  /** Outline the cell of the AI's preferred move in the position shown (the board redraws its own
   * classes only, so this one is set again after every render). */
  hintBoard(v, g, ply) {
    for (const c of document.querySelectorAll("#board .cell.rv-best")) c.classList.remove("rv-best");
    const p = v && ply < g.moves.length ? v.positions[ply] : null;
    // showing a line: the line's next move; else the AI's preferred move in the position shown
    const L = this.line;
    const best = L ? (L.i < L.line.length ? L.line[L.i] : null) : p && p.best;
    if (!v || !best || !best.includes("@")) return;
    const cell = document.querySelector(`#board .cell[data-cell="${best.split("@")[1]}"]`);
    if (cell) cell.classList.add("rv-best");
  }

  statusText(v) {
    if (v.status === "queued") {
      if (!v.ahead) return t("Review queued: waiting for a free AI worker…");
      return v.ahead === 1 ? t("Review queued: 1 review ahead of it…") :
        t("Review queued: {n} reviews ahead of it…", { n: v.ahead });
    }
    if (v.status === "running") return t("Reviewing… {done} of {total} positions evaluated.", { done: v.done, total: v.total });
    if (v.status === "failed") {
      const unknown = t("unknown error");
      return t("The review failed ({why}). You can ask again.", { why: v.error || unknown });
    }
    const n = (side, mark) => v.moves.filter((m) => m.side === side && m.mark === mark).length;
    const counted = (k, one, many) => (k === 1 ? one : many.replace("{n}", String(k)));
    const sideText = (side) => `${SIDE_NAME[side]}: ` +
      `${counted(n(side, "inaccuracy"), t("1 inaccuracy"), t("{n} inaccuracies"))}, ` +
      `${counted(n(side, "mistake"), t("1 mistake"), t("{n} mistakes"))}, ` +
      `${counted(n(side, "blunder"), t("1 blunder"), t("{n} blunders"))}`;
    const budget = formatNumber(v.budget.sims);
    // the accuracy counts the moves up to the deciding one only: say over how many
    const acc = (side) => {
      if (!v.accuracy || v.accuracy[side] === null || v.accuracy[side] === undefined) return "";
      const n = Math.round(v.accuracy[side]);
      const k = v.counted ? v.counted[side] : null;
      if (k === null || k === undefined) return `, ${t("accuracy {n}%", { n })}`;
      return `, ${k === 1 ? t("accuracy {n}% over 1 move", { n }) : t("accuracy {n}% over {k} moves", { n, k })}`;
    };
    return `${t("Review done ({n} simulations per position).", { n: budget })} ${sideText("south")}${acc("south")}. ` +
      `${sideText("north")}${acc("north")}.${this.decisiveText(v) ? ` ${this.decisiveText(v)}` : ""}`;
  }

  /** The move that decided the game (the last that changed the game's value: never the winner's), in
   * words: exact where the endgame solver knows it, else "probably", with its mover's winning chance
   * before and after it by the search (analysis.deciding_move); "" when the review does not say. */
  decisiveText(v) {
    const d = v.decisive;
    if (!d) return "";
    if (!d.ply) {
      if (!d.exact) {
        return d.result === "draw" ? t("The game was probably a draw from the start (the search).") :
          t("{side} probably had a won game from the start (the search).", { side: SIDE_NAME[d.result] });
      }
      return d.result === "draw" ? t("The game was a draw from the start.") :
        t("{side} had a won game from the start.", { side: SIDE_NAME[d.result] });
    }
    const move = `${d.label} ${d.move}`;
    const then = d.result === "draw" ? t("from then on the game was a draw") :
      t("from then on {side} had a won game", { side: SIDE_NAME[d.result] });
    if (d.exact) return t("Decided by move {move} (exact: the endgame solver); {then}.", { move, then });
    return t("Probably decided by move {move} (the search: {side} {before} → {after}); {then}.",
      { move, side: SIDE_NAME[d.side], before: pct(d.before), after: pct(d.after), then });
  }

  drawChart(v, moves, ply) {
    const svg = this.chart;
    svg.replaceChildren();
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const last = Math.max(1, v.total - 1);
    const x = (p) => PAD + (p / last) * (W - 2 * PAD);
    const y = (south) => PAD + (1 - south) * (H - 2 * PAD);
    svg.appendChild(el("svg:rect", { class: "rv-bg", x: 0, y: 0, width: W, height: H }));
    const pos = v.positions;
    if (pos.length) {
      const line = pos.map((p) => `${x(p.ply).toFixed(1)},${y(p.south).toFixed(1)}`);
      const area = `M${x(pos[0].ply).toFixed(1)},${y(0)} L${line.join(" L")} L${x(pos[pos.length - 1].ply).toFixed(1)},${y(0)} Z`;
      svg.appendChild(el("svg:path", { class: "rv-area", d: area }));
    }
    svg.appendChild(el("svg:line", { class: "rv-mid", x1: 0, x2: W, y1: y(0.5), y2: y(0.5) }));
    svg.appendChild(el("svg:text", { class: "rv-axis", x: PAD + 2, y: PAD + 9 }, t("South 100%")));
    svg.appendChild(el("svg:text", { class: "rv-axis", x: PAD + 2, y: y(0.5) - 2 }, "50%"));
    svg.appendChild(el("svg:text", { class: "rv-axis", x: PAD + 2, y: H - PAD - 3 }, t("North 100%")));
    if (pos.length) {
      const line = pos.map((p) => `${x(p.ply).toFixed(1)},${y(p.south).toFixed(1)}`);
      svg.appendChild(el("svg:polyline", { class: "rv-line", points: line.join(" ") }));
    }
    for (const m of v.moves) {
      if (!m.mark) continue;
      const p = pos[m.ply];
      const dot = el("svg:circle", { class: `rv-mark mark-${m.mark}`, cx: x(m.ply), cy: y(p.south), r: 4.2,
        "data-ply": m.ply });
      dot.appendChild(el("svg:title", {}, `${m.label} ${m.move} (${SIDE_NAME[m.side]}): ${MARK_NAME[m.mark]}`));
      svg.appendChild(dot);
    }
    const marked = new Set(v.moves.filter((m) => m.mark).map((m) => m.ply));
    for (const side of ["south", "north"]) {
      for (const tp of (v.turning && v.turning[side]) || []) {
        if (marked.has(tp.ply) || !pos[tp.ply]) continue;
        const ring = el("svg:circle", { class: "rv-turning", cx: x(tp.ply), cy: y(pos[tp.ply].south), r: 3.6,
          "data-ply": tp.ply });
        ring.appendChild(el("svg:title", {}, `${moveLabel(tp.ply, v.first || "south")} ${tp.move}: ${t("turning point")}`));
        svg.appendChild(ring);
      }
    }
    if (ply !== null && ply <= last) {
      svg.appendChild(el("svg:line", { class: "rv-now", x1: x(ply), x2: x(ply), y1: 0, y2: H, "data-ply": ply }));
      if (pos[ply]) svg.appendChild(el("svg:circle", { class: "rv-now-dot", cx: x(ply), cy: y(pos[ply].south), r: 3.2 }));
    }
    const count = marked.size;
    const chart = t("Chart of South's winning chances over {n} moves", { n: moveCount(moves, v.first || "south") });
    const range = pos.length ? `, ${t("from {a} to {b}", { a: pct(pos[0].south), b: pct(pos[pos.length - 1].south) })}` : "";
    const markedText = count === 1 ? t("1 marked move") : t("{n} marked moves", { n: count });
    svg.setAttribute("aria-label", `${chart}${range}; ${markedText}.`);
  }

  drawNow(v, g, ply) {
    const p = v.positions[ply];
    const parts = [];
    if (!p) {
      this.now.textContent = ply > 0 && v.status !== "done" ? t("This position is not evaluated yet.") : "";
      return;
    }
    const m = this.byPly.get(ply);
    const before = v.positions[ply - 1];
    const mover = before ? ` (${SIDE_NAME[before.turn]})` : "";
    const head = ply === 0 ? t("Start") :
      t("After {move}", { move: `${moveLabel(ply, v.first || "south")} ${g.moves[ply - 1]}${mover}` });
    const chance = { head, chance: pct(p.south) };
    parts.push(p.exact ? t("{head}: South's winning chance {chance} (decided).", chance) :
      t("{head}: South's winning chance {chance}.", chance));
    if (m && m.mark) {
      const fell = { mark: MARK_NAME[m.mark], sign: v.thresholds[m.mark].sign, side: SIDE_NAME[m.side],
        before: pct(m.before), after: pct(m.after), best: pct(m.best_after) };
      if (m.best_after != null) {  // the loss is measured against the AI's move, not the position before
        parts.push(m.decided ? t("{mark} {sign}: {side}'s chance is {after} after this move, {best} after the AI's, and the game was decided.", fell) :
          t("{mark} {sign}: {side}'s chance is {after} after this move, {best} after the AI's.", fell));
      } else {
        parts.push(m.decided ? t("{mark} {sign}: {side}'s chance fell from {before} to {after}, and the game was decided.", fell) :
          t("{mark} {sign}: {side}'s chance fell from {before} to {after}.", fell));
      }
      parts.push(t("The AI preferred {moves}.", { moves: (m.line && m.line.length ? m.line : [m.best]).join(" ") }));
    }
    const L = this.line;
    if (L) {  // the board shows the AI's line, not this position
      const next = L.line[L.i];
      const nextMove = { move: next ? `${L.labels[L.i]} ${next}` : "" };
      if (!next) parts.push(t("On the board, the end of the AI's line."));
      else if (next.includes("@")) parts.push(t("On the board, the AI's line: next {move} (its cell is outlined in dashes).", nextMove));
      else parts.push(t("On the board, the AI's line: next {move}.", nextMove));
    } else if (p.best && ply < g.moves.length) {
      parts.push(p.best.includes("@") ? t("Here the AI would play {move} (its cell is outlined in dashes).", { move: p.best }) :
        t("Here the AI would play {move}.", { move: p.best }));
    }
    this.now.textContent = parts.join(" ");
  }

  /** Each side's accuracy, what it gave away and its marks, as a small table. */
  drawSummary(v) {
    const table = this.summary;
    table.replaceChildren();
    table.hidden = v.status !== "done" || !v.accuracy;
    if (table.hidden) return;
    const head = el("tr");
    for (const h of ["", t("Accuracy"), t("Lost"), "?!", "?", "??"]) head.appendChild(el("th", { scope: "col" }, h));
    head.children[2].title = t("winning chance given away by the side's own moves, in points");
    head.children[3].setAttribute("aria-label", t("inaccuracies"));
    head.children[4].setAttribute("aria-label", t("mistakes"));
    head.children[5].setAttribute("aria-label", t("blunders"));
    table.appendChild(el("thead")).appendChild(head);
    const body = table.appendChild(el("tbody"));
    for (const side of ["south", "north"]) {
      const tr = el("tr", { class: side, "data-side": side });
      tr.appendChild(el("th", { scope: "row" }, SIDE_NAME[side]));
      const a = v.accuracy[side];
      tr.appendChild(el("td", { class: "acc" }, a === null || a === undefined ? "–" : `${Math.round(a)}%`));
      tr.appendChild(el("td", {}, `${Math.round((v.slide ? v.slide[side] : 0) * 100)}`));
      for (const mark of ["inaccuracy", "mistake", "blunder"]) {
        tr.appendChild(el("td", {}, String(v.moves.filter((m) => m.side === side && m.mark === mark).length)));
      }
      body.appendChild(tr);
    }
  }

  /** The key moments: every marked move and every turning point, in the order played. */
  drawKeys(v) {
    this.keys.replaceChildren();
    const turning = new Map();
    for (const side of ["south", "north"]) for (const tp of (v.turning && v.turning[side]) || []) turning.set(tp.ply, tp);
    const keys = v.moves.filter((m) => m.mark || turning.has(m.ply) || m.decisive);
    this.keysTitle.hidden = !keys.length;
    for (const m of keys) {
      const tp = turning.get(m.ply);
      const li = el("li", { class: `rv-item${m.mark ? ` mark-${m.mark}` : ""}${m.decisive ? " rv-decisive" : ""}` });
      const mark = m.mark ? MARK_WORD[m.mark] : "";
      let what = !m.mark ? t("turning point") : m.decided ? t("{mark} (decided the game)", { mark }) : mark;
      if (m.decisive) {  // the move that decided the game, and how it is known
        const which = v.decisive && v.decisive.exact ? t("the deciding move (exact: the endgame solver)") :
          t("probably the deciding move (the search)");
        what = !m.mark && !tp ? which : `${what}; ${which}`;
      }
      const share = tp ? `, ${t("{share} of {side}'s slide", { share: pct(tp.share), side: SIDE_NAME[m.side] })}` : "";
      const sign = m.mark ? v.thresholds[m.mark].sign : "";
      const preferred = t("the AI preferred {move}", { move: m.best });
      const b = el("button", { type: "button", class: `rv-key${m.mark ? ` mark-${m.mark}` : " rv-turn"}`,
        "data-ply": m.ply },
      `${m.label} ${m.move}${sign} — ${what}, −${points(m.loss)}${share}; ${preferred}`);
      b.onclick = () => { this.closeLine(); this.onStep(m.ply); };
      li.appendChild(b);
      if (m.line && m.line.length) {
        const showName = t("Show the AI's line instead of {move} on the board", { move: `${m.label} ${m.move}` });
        const show = el("button", { type: "button", class: "rv-show-line", "data-ply": m.ply,
          "aria-label": showName }, t("Show line"));
        show.onclick = () => this.showLine(m);
        li.appendChild(show);
      }
      this.keys.appendChild(li);
    }
  }

  /** Show the AI's line in the position before move ``m`` on the board (fetched from the server). */
  async showLine(m) {
    try {
      const r = await fetch(`/api/games/${encodeURIComponent(this.id)}/review/line/${m.ply - 1}`);
      const data = await r.json();
      if (!r.ok) { this.say(data.message || t("This line cannot be shown.")); return; }
      this.line = { ...data, i: 1, played: m };
      this.drawLine();
      this.onLine(this.line.frames[1]);
      const first = this.lineBox.querySelector("button.rv-line-move.current");
      if (first) first.focus();
    } catch {
      this.say(t("Could not reach the server: try again."));
    }
  }

  /** Step through the line being shown (``i``: 0 = the position before the move). */
  stepLine(i) {
    const L = this.line;
    if (!L) return;
    L.i = Math.max(0, Math.min(L.frames.length - 1, i));
    this.drawLine();
    this.onLine(L.frames[L.i]);
  }

  closeLine() {
    if (!this.line) return;
    this.line = null;
    this.drawLine();
    this.onLine(null);
  }

  drawLine() {
    const box = this.lineBox;
    const L = this.line;
    box.hidden = !L;
    box.replaceChildren();
    if (!L) return;
    const m = L.played;
    const lineHead = t("The AI's line instead of {move} (shown on the board):", { move: `${m.label} ${m.move}` });
    box.appendChild(el("p", { class: "rv-line-head" }, lineHead));
    const moves = el("p", { class: "rv-line-moves" });
    L.line.forEach((mv, k) => {
      const b = el("button", { type: "button", class: `rv-line-move${k + 1 === L.i ? " current" : ""}`,
        "aria-current": k + 1 === L.i ? "step" : "false" }, `${L.labels[k]} ${mv}`);
      b.onclick = () => this.stepLine(k + 1);
      moves.appendChild(b);
    });
    box.appendChild(moves);
    const bar = el("p", { class: "rv-line-bar" });
    const prev = el("button", { type: "button", "aria-label": t("previous move of the line") }, "◀");
    prev.disabled = L.i === 0;
    prev.onclick = () => this.stepLine(L.i - 1);
    const next = el("button", { type: "button", "aria-label": t("next move of the line") }, "▶");
    next.disabled = L.i === L.frames.length - 1;
    next.onclick = () => this.stepLine(L.i + 1);
    const close = el("button", { type: "button", class: "rv-line-close" }, t("Back to the game"));
    close.onclick = () => this.closeLine();
    const where = L.i === 0 ? t("Board: before {move}", { move: m.label }) :
      t("Board: after {move}", { move: `${L.labels[L.i - 1]} ${L.line[L.i - 1]}` });
    bar.append(prev, next, close, el("span", { class: "rv-line-where", role: "status" }, where));
    box.appendChild(bar);
  }

  clickChart(e) {
    const v = this.view;
    if (!v || !v.total) return;
    this.closeLine();
    const box = this.chart.getBoundingClientRect();
    const fx = ((e.clientX - box.left) / box.width) * W;
    const last = Math.max(1, v.total - 1);
    const ply = Math.round(((fx - PAD) / (W - 2 * PAD)) * last);
    this.onStep(Math.max(0, Math.min(v.total - 1, ply)));
  }
}
