// Small DOM helpers shared by the pages' scripts: an HTML element with its text and class, and an
// SVG element with its attributes (charts are inline SVG, no library).  Text is always set as text,
// never as HTML: names and messages come from other players.

export const SVG = "http://www.w3.org/2000/svg";

/** An element ``tag`` holding ``text`` (as text) with the class ``cls``. */
export const el = (tag, text, cls) => {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
};

/** An SVG element ``tag`` with the attributes ``attrs``. */
export const svg = (tag, attrs = {}) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};

/** A line chart's frame, as the profile and the statistics pages draw it: an SVG ``id`` 640 wide
 * and ``height`` high titled ``title`` for screen readers (``role="img"``), with three labelled
 * horizontal lines from ``y0`` to ``y1``; returns it with its scales (``x(i)`` for the i-th of ``n``
 * points, a lone point in the middle; ``y(v)``) and a ``line(values)`` that draws the points. */
export function chartFrame({ id, title, n, y0, y1, height = 200, bottom = 24 }) {
  const W = 640, H = height, L = 48, R = 12, T = 12, B = bottom;
  const x = (i) => L + (n === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (n - 1));
  const y = (v) => T + ((y1 - v) * (H - T - B)) / (y1 - y0 || 1);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "rating-chart", id, role: "img" });
  const label = svg("title");
  label.textContent = title;
  root.append(label);
  for (const v of [y0, (y0 + y1) / 2, y1]) {
    root.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "axis" }));
    const tick = svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" });
    tick.textContent = String(Math.round(v));
    root.append(tick);
  }
  const line = (values) => {
    root.append(svg("polyline", { points: values.map((v, i) => `${x(i)},${y(v)}`).join(" "), class: "line" }));
    values.forEach((v, i) => root.append(svg("circle", { cx: x(i), cy: y(v), r: 3.5 })));
  };
  return { root, x, y, line, W, H, R };
}
