// The Jericho board as SVG, drawn from the topology data served at /api/topology.
// No game logic lives here: the server sends towers, leaders and legal cells.

import { t } from "./i18n.js";

const NS = "http://www.w3.org/2000/svg";
export const UNIT = 100; // SVG units per board unit
// Chosen so that every pair stays at least 21 CIEDE2000 apart for normal vision and under
// simulated protanopia, deuteranopia and tritanopia (tests/web/test_access.py checks the page).
export const PIECE_FILL = { R: "#ea320f", Y: "#ffc801", G: "#3a9776", B: "#003ccc", W: "#f8f6ef" };
export const PIECE_INK = { R: "#fff", Y: "#2b2414", G: "#fff", B: "#fff", W: "#2b2414" };
export const SIDE_FILL = { south: "#6a1b7a", north: "#3fb0a2" };
export const COLOUR_NAME = { R: t("red"), Y: t("yellow"), G: t("green"), B: t("blue"), W: t("white") };
const CAMP = { south: t("south"), north: t("north") };
const SIDE = { south: t("South"), north: t("North") };

// Beyond the cells' outer edge (3.5 board units from the centre) lies the rim: the octagon's
// border, its 26 triangles and the coordinates.  Drawn true to scale the board is 10 cell pitches
// wide, so a 390 px phone gets 39 px cells, under the 44 px a finger needs.  On a narrow screen
// the rim is drawn at half its width (8.64 pitches in all): 45 px cells at 390 px with the whole
// board, every triangle included, still on screen; at 380 px and under, at 0.4 (8.36 pitches: 44.9
// px cells at 375 px, 43 at 360, where the rim's three triangles per corner allow no less).  The
// cells, the lines through them and the centre keep their true proportions; only the border
// gets thinner.
const RIM_FROM = 3.5;
export const COMPACT_RIMS = [["(max-width: 380px)", 0.4], ["(max-width: 520px)", 0.5]];

/** One coordinate, in board units, with the rim beyond the cells drawn at ``rim`` of its width. */
function squeeze(t, rim) {
  const a = Math.abs(t);
  return a <= RIM_FROM ? t : Math.sign(t) * (RIM_FROM + (a - RIM_FROM) * rim);
}

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

export function pieceName(p) {
  return t("size {size} {colour}", { size: p[0], colour: COLOUR_NAME[p[1]] });
}

export function describeTower(cell, tower, camp) {
  if (!tower || tower.length === 0) return t("{cell} ({camp} camp): empty", { cell, camp: CAMP[camp] ?? camp });
  const top = tower[tower.length - 1];
  return t("{cell} ({camp} camp): {tower} bottom to top, top piece {top}",
    { cell, camp: CAMP[camp] ?? camp, tower: tower.join(" / "), top });
}

/**
 * The effect of one placement, from the engine's leader changes ([alignment, old, new] each):
 * {mine, theirs} monoliths gained (negative: lost) by the mover and the opponent, and words.
 */
export function describePreview(changes, mover, names) {
  const other = mover === "south" ? "north" : "south";
  let mine = 0, theirs = 0;
  const words = [];
  for (const [a, old, now] of changes) {
    mine += (now === mover) - (old === mover);
    theirs += (now === other) - (old === other);
    if (now === mover) words.push(old ? t("wins {a} from {side}", { a, side: names[old] }) : t("wins {a}", { a }));
    else if (old === mover) {
      words.push(now ? t("loses {a} to {side}", { a, side: names[now] }) : t("loses {a} (nobody would lead it)", { a }));
    } else if (now === null) words.push(t("takes {a} from {side} (nobody would lead it)", { a, side: names[old] }));
    else words.push(t("gives {a} to {side}", { a, side: names[now] }));
  }
  return { mine, theirs, changes: changes.length, words: words.length ? words.join("; ") : t("no monolith changes hands") };
}

/** A large drawing of one tower, bottom to top, for the zoom. */
export function drawZoom(svg, tower) {
  svg.replaceChildren();
  const n = Math.max(1, tower.length);
  const h = 44, gap = 4;
  svg.setAttribute("viewBox", `-100 -6 200 ${n * (h + gap) + 8}`);
  let y = (n - 1) * (h + gap);
  tower.forEach((p, i) => {
    drawPiece(svg, p, 0, y, h, { top: i === tower.length - 1, zoom: true });
    y -= h + gap;
  });
}

/** Draw one piece as a bar (a cylinder seen from the side) centred on (cx, y). */
export function drawPiece(parent, piece, cx, y, h, { top = false, zoom = false, dense = false } = {}) {
  const size = Number(piece[0]);
  const col = piece[1];
  const w = zoom ? 70 + size * 25 : 34 + size * 10;
  const g = el("g", { class: "piece" + (top ? " top" : ""), "data-piece": piece }, parent);
  el("rect", {
    x: cx - w / 2, y, width: w, height: h, rx: Math.min(7, h / 3),
    fill: PIECE_FILL[col], stroke: top ? "#1b1510" : col === "W" ? "#6f6758" : "rgba(0,0,0,.45)",
    "stroke-width": top ? 3 : 1.5, class: `piece-body col-${col}`,  // col-R...: the piece sets' fills (style.css)
  }, g);
  // a soft highlight band so the bar reads as a cylinder
  el("rect", { x: cx - w / 2 + 3, y: y + 2, width: w - 6, height: Math.max(2, h * 0.22), rx: 3,
    fill: "#fff", opacity: col === "W" || col === "Y" ? 0.35 : 0.22 }, g);
  // the notation (5R) on every piece: the colour never rests on the fill alone.  ``dense``: the
  // letters' capitals may take 80% of a thin bar's height (tall towers on small cells)
  const t = el("text", {
    x: cx, y: y + h / 2 + 1, "text-anchor": "middle", "dominant-baseline": "central", class: `piece-label col-${col}`,
    "font-size": Math.min(h * (dense ? 1.1 : 0.9), 32), "font-weight": 800, fill: PIECE_INK[col],
  }, g);
  t.textContent = piece;
  return g;
}

export class Board {
  /**
   * @param {SVGSVGElement} svg
   * @param {object} topo the topology (cells, alignments, triangles, outline)
   * @param {object} handlers onCell(cell), onAlignment(name|null), onCellInfo(cell|null)
   */
  constructor(svg, topo, handlers, { interactive = true } = {}) {
    this.interactive = interactive;
    this.svg = svg;
    this.topo = topo;
    this.h = handlers;
    this.flip = false;
    this.cells = Object.fromEntries(topo.cells.map((c) => [c.name, c]));
    this.state = null;
    this.opts = {};
    this.rim = 1;
    // a phone turned, or a window narrowed past a phone's width, redraws the rim
    this.rimQueries = COMPACT_RIMS.map(([query, rim]) => [window.matchMedia(query), rim]);
    for (const [mq] of this.rimQueries) mq.addEventListener("change", () => { if (this.cellNodes) this.build(); });
  }

  P(x, y) {
    const f = this.flip ? -1 : 1;
    return [squeeze(x, this.rim) * UNIT * f, -squeeze(y, this.rim) * UNIT * f];
  }

  build() {
    const svg = this.svg;
    svg.replaceChildren();
    this.rim = (this.rimQueries.find(([mq]) => mq.matches) || [null, 1])[1];
    // the octagon's edge, plus its stroke and the corner triangles; above it the north monoliths
    // stand, below it the shadow
    const r = squeeze(4.9, this.rim) * UNIT, pad = this.rim === 1 ? 10 : 12;
    svg.setAttribute("viewBox", `${-(r + pad)} ${-(r + 42)} ${2 * (r + pad)} ${2 * r + 76}`);
    svg.classList.toggle("compact", this.rim !== 1);
    svg.setAttribute("role", "group");
    svg.setAttribute("aria-label", t("Jericho board"));
    const defs = el("defs", {}, svg);
    defs.innerHTML = `
      <radialGradient id="wood" cx="50%" cy="45%" r="70%">
        <stop offset="0%" stop-color="#f1e3c4"/><stop offset="70%" stop-color="#e4cfa4"/>
        <stop offset="100%" stop-color="#cfb27c"/></radialGradient>
      <filter id="lift" x="-20%" y="-20%" width="140%" height="140%">
        <feDropShadow dx="0" dy="3" stdDeviation="3" flood-opacity=".35"/></filter>`;
    const outline = this.topo.outline.map(([x, y]) => this.P(x, y).join(",")).join(" ");
    el("polygon", { points: outline, fill: "#5d4326", transform: "translate(0 10)", opacity: 0.35 }, svg);
    el("polygon", { points: outline, fill: "url(#wood)", stroke: "#6b4b26", "stroke-width": 10,
      "stroke-linejoin": "round", class: "octagon" }, svg);
    // camps
    for (const camp of ["south", "north"]) {
      const cs = this.topo.cells.filter((c) => c.camp === camp);
      const xs = cs.map((c) => c.x), ys = cs.map((c) => c.y);
      const [x1, y1] = this.P(Math.min(...xs) - 0.5, Math.max(...ys) + 0.5);
      const [x2, y2] = this.P(Math.max(...xs) + 0.5, Math.min(...ys) - 0.5);
      el("rect", { x: Math.min(x1, x2), y: Math.min(y1, y2), width: Math.abs(x2 - x1), height: Math.abs(y2 - y1),
        rx: 26, class: `camp camp-${camp}` }, svg);
      const [lx, ly] = this.P(0, camp === "south" ? -1.25 : 1.25);
      // the camps, coordinates and centre are drawn for the eye: every cell's name already says
      // its camp and coordinates to a screen reader, which otherwise read "a a b b ... 1 1 2 2"
      const label = el("text", { x: lx + 12, y: ly, class: "camp-label", "text-anchor": "middle",
        "dominant-baseline": "central", "aria-hidden": "true" }, svg);
      label.textContent = camp === "south" ? t("SOUTH") : t("NORTH");
    }
    // coordinates, as on a chess board: column letters and row numbers in the margin (above the
    // lines that run through or past them, below the cells)
    const coords = el("g", { class: "coords", "aria-hidden": "true" }, svg);
    const cols = [...new Set(this.topo.cells.map((c) => c.name[0]))];
    for (const col of cols) {
      const c = this.topo.cells.find((x) => x.name[0] === col);
      for (const yy of [-3.78, 3.78]) {
        const [x, y] = this.P(c.x, yy);
        el("text", { x, y, class: "coord", "text-anchor": "middle", "dominant-baseline": "central" }, coords)
          .textContent = col;
      }
    }
    const rows = [...new Set(this.topo.cells.map((c) => c.name.slice(1)))];
    for (const row of rows) {
      const c = this.topo.cells.find((x) => x.name.slice(1) === row);
      for (const xx of [-3.74, 3.74]) {
        const [x, y] = this.P(xx, c.y);
        el("text", { x, y, class: "coord", "text-anchor": "middle", "dominant-baseline": "central" }, coords)
          .textContent = row;
      }
    }
    const [, cy] = this.P(0, 0);
    const river = el("text", { x: 0, y: cy + 10, class: "centre-label", "text-anchor": "middle", "aria-hidden": "true" }, svg);
    river.textContent = t("· centre ·");
    // alignments
    this.lineLayer = el("g", { class: "alignments" }, svg);
    this.triLayer = el("g", { class: "triangles" }, svg);
    this.cellLayer = el("g", { class: "cells" }, svg);
    svg.insertBefore(coords, this.cellLayer);
    this.lines = {};
    this.tris = {};
    const triOf = {};
    for (const t of this.topo.triangles) triOf[`${t.alignment}:${t.side}`] = t;
    for (const a of this.topo.alignments) {
      const ts = triOf[`${a.name}:south`], tn = triOf[`${a.name}:north`];
      // triangle, first cell, last cell, triangle: straight through the cells even when the rim
      // is drawn narrower (the bend, if any, hides under the end cells)
      const first = this.cells[a.cells[0]], last = this.cells[a.cells[a.cells.length - 1]];
      const points = [ts, first, last, tn].map((p) => this.P(p.x, p.y).join(",")).join(" ");
      const g = el("g", { class: `alignment ${a.kind}`, "data-alignment": a.name, "aria-label": `alignment ${a.name}` },
        this.lineLayer);
      // one Tab stop for all 13 alignments (the arrow keys go from one to the next)
      if (this.interactive) { g.setAttribute("tabindex", a === this.topo.alignments[0] ? 0 : -1); g.setAttribute("role", "button"); }
      // a decorative board takes no Tab stop (Chromium makes SVG groups with focus listeners focusable);
      // its lines stay named pictures (a name on a group without a role is not allowed: axe-core)
      else { g.setAttribute("tabindex", -1); g.setAttribute("role", "img"); }
      g.addEventListener("keydown", (e) => {
        const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
        if (!step) return;
        e.preventDefault();
        const names = this.topo.alignments.map((x) => x.name);
        const next = this.lines[names[(names.indexOf(a.name) + step + names.length) % names.length]];
        g.setAttribute("tabindex", -1);
        next.setAttribute("tabindex", 0);
        next.focus();
      });
      el("polyline", { points, class: "line", fill: "none" }, g);
      el("polyline", { points, class: "hit", fill: "none" }, g);
      g.addEventListener("mouseenter", () => this.h.onAlignment(a.name));
      g.addEventListener("focus", () => this.h.onAlignment(a.name));
      g.addEventListener("mouseleave", () => this.h.onAlignment(null));
      g.addEventListener("blur", () => this.h.onAlignment(null));
      g.addEventListener("click", () => this.h.onAlignment(a.name, true));
      this.lines[a.name] = g;
      for (const t of [ts, tn]) this.tris[`${a.name}:${t.side}`] = this.drawTriangle(a, t);
    }
    // cells
    this.cellNodes = {};
    for (const c of this.topo.cells) {
      const [x, y] = this.P(c.x, c.y);
      const g = el("g", { class: `cell camp-${c.camp}`, "data-cell": c.name, transform: `translate(${x} ${y})` },
        this.cellLayer);
      // one Tab stop for the 26 cells (roving: the arrow keys move between them)
      if (this.interactive) { g.setAttribute("tabindex", c === this.topo.cells[0] ? 0 : -1); g.setAttribute("role", "button"); }
      else g.setAttribute("tabindex", -1);
      // the whole pitch around the cell answers a tap, so targets are as large as the board allows
      el("rect", { x: -50, y: -50, width: 100, height: 100, class: "cell-hit", fill: "transparent" }, g);
      el("rect", { x: -43, y: -43, width: 86, height: 86, rx: 14, class: "cell-bg" }, g);
      el("rect", { x: -46, y: -46, width: 92, height: 92, rx: 16, class: "cell-ring" }, g);
      const name = el("text", { x: -37, y: -30, class: "cell-name" }, g);
      name.textContent = c.name;
      el("g", { class: "stack" }, g);
      // the preview badge sits on the cell's top-right corner, clear of the middle where every
      // piece's letters are (it covered a tall tower's top label: issue 24)
      const badge = el("g", { class: "badge", transform: "translate(41 -42)" }, g);
      el("rect", { x: -18, y: -13, width: 36, height: 26, rx: 13 }, badge);
      el("text", { x: 0, y: 1, "text-anchor": "middle", "dominant-baseline": "central" }, badge);
      g.addEventListener("click", (e) => this.h.onCell(c.name, e));
      g.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); this.h.onCell(c.name); }
        const dir = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
        if (dir) { e.preventDefault(); this.focusNeighbour(c.name, dir); }
      });
      g.addEventListener("mouseenter", () => this.h.onCellInfo(c.name));
      g.addEventListener("focus", () => {
        for (const other of Object.values(this.cellNodes)) if (other !== g) other.setAttribute("tabindex", -1);
        g.setAttribute("tabindex", 0);
        this.h.onCellInfo(c.name);
      });
      g.addEventListener("mouseleave", () => this.h.onCellInfo(null));
      this.cellNodes[c.name] = g;
    }
    if (this.state) this.render(this.state, this.opts);
  }

  /** Move keyboard focus to the nearest cell in a screen direction ([dx, dy], y down). */
  focusNeighbour(name, [dx, dy]) {
    const c = this.cells[name];
    const [x0, y0] = this.P(c.x, c.y);
    let best = null, bestScore = Infinity;
    for (const other of this.topo.cells) {
      if (other.name === name) continue;
      const [x, y] = this.P(other.x, other.y);
      const along = (x - x0) * dx + (y - y0) * dy;
      if (along <= 0) continue;
      const across = Math.abs((x - x0) * dy - (y - y0) * dx);
      const score = along + 2.5 * across;
      if (score < bestScore) { bestScore = score; best = other.name; }
    }
    if (best) this.cellNodes[best].focus();
  }

  /**
   * Scroll the page just enough to show the whole board, when it fits the window: a phone
   * scrolled down to its tray, a piece just picked, must see the cell it aims at.
   */
  bringIntoView() {
    const r = this.svg.getBoundingClientRect();
    if (r.height > window.innerHeight) return;
    if (r.top < 0) window.scrollBy(0, r.top);
    else if (r.bottom > window.innerHeight) window.scrollBy(0, r.bottom - window.innerHeight);
  }

  /** Focus a cell (keyboard play). */
  focusCell(name) {
    if (this.cellNodes[name]) this.cellNodes[name].focus();
  }

  drawTriangle(a, t) {
    // points inwards along its alignment, as drawn true to scale (square to the octagon's edge)
    const near = this.cells[t.side === "south" ? a.cells[0] : a.cells[a.cells.length - 1]];
    const [tx, ty] = this.P(t.x, t.y);
    const f = this.flip ? -1 : 1;
    const dx = (near.x - t.x) * f, dy = (t.y - near.y) * f;
    const len = Math.hypot(dx, dy);
    const ux = dx / len, uy = dy / len;
    // three triangles share each cut corner: smaller ones when the rim is drawn narrower
    const s = this.rim === 1 ? 24 : this.rim >= 0.5 ? 14 : 12;
    const pts = [
      [tx + ux * s, ty + uy * s],
      [tx - ux * s * 0.6 - uy * s, ty - uy * s * 0.6 + ux * s],
      [tx - ux * s * 0.6 + uy * s, ty - uy * s * 0.6 - ux * s],
    ];
    const g = el("g", { class: `triangle tri-${t.side}`, "data-triangle": `${a.name}:${t.side}` }, this.triLayer);
    el("polygon", { points: pts.map((p) => p.join(",")).join(" "), class: "tri" }, g);
    const mono = el("g", { class: "monolith", transform: `translate(${tx} ${ty}) scale(${this.rim === 1 ? 1 : this.rim >= 0.5 ? 0.8 : 0.7})`,
      filter: "url(#lift)" }, g);
    el("path", { d: "M -11 20 L -9 -22 L 0 -34 L 9 -22 L 11 20 Z", fill: SIDE_FILL[t.side],
      stroke: "#1b1510", "stroke-width": 2.5, class: "monolith-body" }, mono);
    g.addEventListener("mouseenter", () => this.h.onAlignment(a.name));
    g.addEventListener("mouseleave", () => this.h.onAlignment(null));
    g.addEventListener("click", () => this.h.onAlignment(a.name, true));
    return g;
  }

  setFlip(flip) {
    if (flip !== this.flip) {
      this.flip = flip;
      this.build();
    }
  }

  /**
   * @param {object} view {towers, leaders, last}
   * @param {object} opts {legalCells:Set, selected, hoverAlignment, champions:Set}
   */
  render(view, opts = {}) {
    this.state = view;
    this.opts = opts;
    const legal = opts.legalCells || new Set();
    const lastCell = view.last && view.last.includes("@") ? view.last.split("@")[1] : null;
    for (const [name, g] of Object.entries(this.cellNodes)) {
      const tower = view.towers[name] || [];
      g.classList.toggle("legal", legal.has(name));
      g.classList.toggle("last", name === lastCell);
      g.classList.toggle("champion", !!(opts.champions && opts.champions.has(name)));
      g.classList.toggle("dim", !!opts.selected && !legal.has(name));
      const camp = this.cells[name].camp;
      let label = describeTower(name, tower, camp);
      // the last move's cell says so (it is also drawn outlined): a screen reader finds it
      if (name === lastCell) label += t("; last move, {move}", { move: view.last });
      if (legal.has(name)) label += t("; {piece} may go here", { piece: opts.selected });
      // the move's effect before it is made: how much it moves the mover's lead in monoliths
      const effect = opts.preview && legal.has(name) ? opts.preview[name] : null;
      const badge = g.querySelector(".badge");
      const delta = effect ? effect.mine - effect.theirs : 0;
      badge.classList.toggle("shown", !!effect && effect.changes > 0);
      badge.classList.toggle("gain", delta > 0);
      badge.classList.toggle("loss", delta < 0);
      badge.querySelector("text").textContent = !effect ? "" : delta > 0 ? `+${delta}` : delta < 0 ? `−${-delta}` : "±0";
      if (effect && effect.words) label += `; ${effect.words}`;
      g.setAttribute("aria-label", label);
      const stack = g.querySelector(".stack");
      const key = tower.join(",");
      if (stack.dataset.key === key) continue;
      stack.dataset.key = key;
      stack.replaceChildren();
      const n = tower.length;
      g.classList.toggle("occupied", n > 0);
      if (!n) continue;
      // the bars fill the cell's height (its name is hidden once occupied): the taller the
      // bars, the larger the letters on them, and the letters may fill their bar (digits and
      // capitals have no descenders).  On a phone a tower of 3 or 4 takes nearly the whole pitch
      // (94 of 100 units, a little past the cell's square) so that each piece's letters stay
      // 11 CSS px on 45 px cells; larger screens keep it within the square (88 units)
      const half = this.rim === 1 ? 44 : 47;
      let h, gap, bottom;
      if (n === 1) [h, gap, bottom] = [44, 0, 24];
      else if (n === 2) [h, gap, bottom] = [39, 1.5, 41];
      else [gap, bottom] = [n === 3 ? 1.5 : 1, half];
      if (n >= 3) h = (2 * half - (n - 1) * gap) / n;
      let y = bottom - n * h - (n - 1) * gap;
      // top piece drawn first at the top, bottom piece last at the bottom
      for (let i = n - 1; i >= 0; i--) {
        drawPiece(stack, tower[i], 0, y, h, { top: i === n - 1, dense: n >= 3 });
        y += h + gap;
      }
    }
    for (const [key, g] of Object.entries(this.tris)) {
      const [align, side] = key.split(":");
      g.classList.toggle("held", view.leaders[align] === side);
    }
    for (const [name, g] of Object.entries(this.lines)) {
      const leader = view.leaders[name];
      g.classList.toggle("led-south", leader === "south");
      g.classList.toggle("led-north", leader === "north");
      // its name says who holds its monolith: a screen reader hears it without opening the line
      const held = leader ? t("alignment {name}, held by {side}", { name, side: SIDE[leader] }) :
        t("alignment {name}, nobody holds it", { name });
      if (g.getAttribute("aria-label") !== held) g.setAttribute("aria-label", held);
      g.classList.toggle("hover", opts.hoverAlignment === name);
      const change = opts.previewLines ? opts.previewLines[name] : undefined;
      g.classList.toggle("preview", change !== undefined);
      g.classList.toggle("preview-south", change === "south");
      g.classList.toggle("preview-north", change === "north");
      g.classList.toggle("preview-none", change === null);
    }
  }
}
