// A player's statistics (/players/NAME/stats, web/people/playerstats.py): results by side, time control
// and opponent, the most played first moves, the rating history and the accuracy of reviewed games as
// inline SVG charts (no library).  Names are text only.
import { formatDate, t } from "./i18n.js";
import { levelName } from "./levels.js";
import { chartFrame, el } from "./dom.js";

const $ = (id) => document.getElementById(id);
const SIDE = { south: t("South"), north: t("North") };
const SPEED = {
  bullet: t("Bullet"), blitz: t("Blitz"), rapid: t("Rapid"), classical: t("Classical"),
  correspondence: t("Correspondence"), none: t("No clock"),
};

/** A line chart of ``values`` (numbers, oldest first) as an SVG with a text title for screen readers. */
export function lineChart(values, id, title, [lo, hi] = [null, null]) {
  const min = lo ?? Math.min(...values), max = hi ?? Math.max(...values);
  const pad = lo === null ? Math.max(10, (max - min) * 0.1) : 0;
  const chart = chartFrame({ id, title, n: values.length, y0: min - pad, y1: max + pad });
  chart.line(values);
  return chart.root;
}

/** A table of won / lost / drawn games per row, with the score in percent. */
function resultsTable(id, caption, rows) {
  const table = el("table");
  table.id = id;
  const head = el("tr");
  for (const [h, cls] of [[caption, ""], [t("Games"), "num"], [t("Wins"), "num"], [t("Losses"), "num"], [t("Draws"), "num"], [t("Score"), "num"]]) {
    const th = el("th", h, cls);
    th.scope = "col";
    head.append(th);
  }
  table.createTHead().append(head);
  const body = table.createTBody();
  for (const [name, r] of rows) {
    const tr = el("tr");
    const score = r.games ? Math.round((100 * (r.won + r.draw / 2)) / r.games) : 0;
    const first = typeof name === "string" ? el("td", name) : el("td");
    if (typeof name !== "string") first.append(name);
    tr.append(first, el("td", r.games, "num"), el("td", r.won, "num"), el("td", r.lost, "num"), el("td", r.draw, "num"),
      el("td", `${score} %`, "num"));
    body.append(tr);
  }
  const box = el("div", undefined, "table-scroll");
  box.tabIndex = 0;  // a scrolling region is reachable by keyboard (axe: scrollable-region-focusable)
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", caption);
  box.append(table);
  return box;
}

function section(title, ...content) {
  const s = el("section", undefined, "ps-section");
  s.append(el("h2", title), ...content);
  return s;
}

async function main() {
  const name = decodeURIComponent(location.pathname.split("/")[2] || "");
  const enc = encodeURIComponent(name);
  document.title = `Jericho · ${name}`;
  $("ps-title").textContent = t("Statistics of {name}", { name });
  $("ps-profile").href = `/players/${enc}`;
  $("ps-games").href = `/players/${enc}/games`;
  const r = await fetch(`/api/players/${enc}/stats`);
  const s = await r.json();
  if (!r.ok) {
    $("ps-error").textContent = s.message || r.statusText;
    return;
  }
  let counted = s.counted === 1 ? t("1 finished game counted") : t("{n} finished games counted", { n: s.counted });
  if (!s.all_games) counted += ` · ${t("Public and rated games only.")}`;
  $("ps-counted").textContent = counted;
  const grid = el("div", undefined, "ps-grid");
  const link = (query, text) => {  // a row leads to those games in the search
    const a = el("a", text);
    a.href = `/players/${enc}/games?${new URLSearchParams(query)}`;
    return a;
  };
  const none = () => el("p", t("No finished games yet."), "empty");
  grid.append(section(t("Results by side"), resultsTable("ps-side", t("Side"),
    Object.entries(s.by_side).map(([k, v]) => [link({ side: k }, SIDE[k]), v]))));
  const speeds = Object.entries(s.by_speed).map(([k, v]) => [link({ speed: k }, SPEED[k] || k), v]);
  grid.append(section(t("Results by time control"), speeds.length ? resultsTable("ps-speed", t("Time control"), speeds) : none()));
  const opponents = s.by_opponent.map((o) => {
    if (o.kind === "ai") return [link({ level: o.name }, `${t("AI")} · ${levelName(o.name)}`), o];
    if (o.kind === "human") return [link({ opponent: o.name }, o.name), o];
    return [t("Anonymous"), o];
  });
  grid.append(section(t("Results by opponent"), opponents.length ? resultsTable("ps-opponent", t("Opponent"), opponents)
    : none()));
  const openings = s.openings.map((o) => {
    const code = el("code", o.moves.join(" "));
    return [code, o];
  });
  grid.append(section(t("Most played first moves"), openings.length ? resultsTable("ps-openings", t("First moves"), openings)
    : none()));
  $("ps-body").append(grid);
  const ratings = s.rating.map((p) => p.rating);
  $("ps-body").append(section(t("Rating history"), ratings.length
    ? lineChart(ratings, "ps-rating", t("Rating after each of {n} rated games: {list}",
      { n: ratings.length, list: ratings.map((v) => Math.round(v)).join(", ") }))
    : el("p", t("No rated games yet."), "empty")));
  const acc = s.accuracy;
  const accText = acc.map((a) => `${formatDate(a.at * 1000, true)}: ${a.accuracy}`).join(", ");
  $("ps-body").append(section(t("Accuracy in reviewed games"), acc.length
    ? lineChart(acc.map((a) => a.accuracy), "ps-accuracy", t("Accuracy in {n} reviewed games: {list}",
      { n: acc.length, list: accText }), [0, 100])
    : el("p", t("No reviewed games yet: ask for a review at the end of a game."), "empty")));
}

main();
