// A player's page (/players/NAME): rating, rating history as an inline SVG chart, recent games.
import { postJSON, whoami } from "./account.js";
import { formatDate, t } from "./i18n.js";
import { chartFrame, el, svg } from "./dom.js";

// why a game ended: the server's codes, shown as they are in English
const REASON = {
  seven: t("seven"), exhaustion: t("exhaustion"), resign: t("resign"), time: t("time"),
  agreed: t("agreed"), claim: t("claim"), aborted: t("aborted"), expired: t("expired"),
};

/** The rating after each rated game (and its deviation band), starting from 1500 before the first. */
export function ratingChart(history) {
  const points = [{ rating: history.length ? history[0].before : 1500, rd: 350 }, ...history];
  const lo = Math.min(...points.map((p) => p.rating - p.rd / 4)), hi = Math.max(...points.map((p) => p.rating + p.rd / 4));
  const pad = Math.max(20, (hi - lo) * 0.1);
  const title = t("Rating after each of {n} rated games: {list}",
    { n: history.length, list: points.map((p) => Math.round(p.rating)).join(", ") });
  const { root, x, y, line, W, H, R } = chartFrame(
    { id: "rating-chart", title, n: points.length, y0: lo - pad, y1: hi + pad, height: 220, bottom: 28 });
  // a band of a quarter of the deviation either side: how sure the rating is
  const upper = points.map((p, i) => `${x(i)},${y(p.rating + p.rd / 4)}`);
  const lower = points.map((p, i) => `${x(i)},${y(p.rating - p.rd / 4)}`).reverse();
  root.append(svg("polygon", { points: [...upper, ...lower].join(" "), class: "band" }));
  line(points.map((p) => p.rating));
  const label = svg("text", { x: W - R, y: H - 8, "text-anchor": "end" });
  label.textContent = t("rated games →");
  root.append(label);
  return root;
}

/** A wide table in a box that scrolls sideways on a phone: the page itself keeps the screen's width
 * (the profile was 577 px wide on a 390 px phone, issue 34). */
export function scroller(table) {
  const box = el("div", undefined, "table-scroll");
  box.tabIndex = 0;  // a scrolling region is reachable by keyboard (axe: scrollable-region-focusable)
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", t("Recent games"));
  box.append(table);
  return box;
}

async function init() {
  const main = document.getElementById("profile");
  const name = decodeURIComponent(location.pathname.split("/").pop() || "");
  const r = await fetch(`/api/players/${encodeURIComponent(name)}`);
  const p = await r.json();
  if (!r.ok) {
    main.append(el("h1", t("No such player")), el("p", p.message || "", "error"));
    return;
  }
  document.title = `Jericho · ${p.username}`;
  main.append(el("h1", p.username));
  // the player's games searched and their statistics (web/people/gamesearch.py, playerstats.py)
  const more = el("p", undefined, "pg-links");
  for (const [path, text, id] of [["games", t("Search games"), "profile-search"], ["stats", t("Statistics"), "profile-stats"]]) {
    const a = el("a", text);
    a.href = `/players/${encodeURIComponent(p.username)}/${path}`;
    a.id = id;
    more.append(a, " ");
  }
  main.append(more);
  const head = el("div", undefined, "profile-head");
  const rating = el("span", `${p.rating}${p.provisional ? "?" : ""}`, "big");
  rating.id = "profile-rating";
  if (p.provisional) rating.title = t("provisional: too few rated games to trust it yet (deviation above 110)");
  head.append(rating, el("span", `± ${p.rd}`), el("span", p.rated_games === 1 ? t("1 rated game") : t("{n} rated games", { n: p.rated_games })));
  if (p.admin) head.append(el("span", t("admin")));
  main.append(head);
  main.append(el("h2", t("Rating history")));
  main.append(p.history.length ? ratingChart(p.history) : el("p", t("No rated games yet."), "empty"));
  main.append(el("h2", t("Recent games")));
  // others see only public (lobby) and rated games: an invite-only game's id would let them watch it
  if (!p.all_games) main.append(el("p", t("Public and rated games only."), "hint"));
  if (!p.games.length) main.append(el("p", t("No games yet."), "empty"));
  else {
    const table = el("table");
    table.id = "recent-games";
    const head2 = el("tr");
    for (const h of [t("Date"), t("Game"), t("Opponent"), t("Side"), t("Result"), t("Moves"), ""]) head2.append(el("th", h));
    table.append(el("thead"));
    table.tHead.append(head2);
    const body = el("tbody");
    for (const g of p.games) {
      const tr = el("tr");
      const link = el("a", g.id);
      link.href = `/g/${encodeURIComponent(g.id)}`;
      const cell = el("td");
      cell.append(link);
      const outcome = { won: t("won"), lost: t("lost"), draw: t("draw") }[g.result] ?? g.result;
      const result = g.result ? `${outcome}${g.reason ? ` (${REASON[g.reason] ?? g.reason})` : ""}` : t("playing");
      const opponent = g.opponent ?? (g.mode === "ai" ? t("AI") : g.mode === "hotseat" ? t("hot-seat") : t("anonymous"));
      const rated = el("td", g.rated ? t("rated") : g.unrated ? t("not rated") : "");
      if (g.unrated) rated.title = g.unrated; // why a rated game changed no rating
      tr.append(el("td", formatDate(g.date * 1000, true)), cell, el("td", opponent),
        el("td", { south: t("South"), north: t("North"), both: t("both") }[g.side] ?? g.side), el("td", result),
        el("td", String(g.moves ?? "")), rated);
      body.append(tr);
    }
    table.append(body);
    main.append(scroller(table));
  }
  const me = await whoami();
  if (me.account && me.account.username === p.username) {
    const everywhere = el("button", t("Log out everywhere"));
    everywhere.id = "logout-all";
    everywhere.type = "button";
    everywhere.addEventListener("click", async () => {
      await postJSON("/api/account/logout-all");
      location.href = "/";
    });
    const out = el("button", t("Log out"));
    out.id = "logout";
    out.type = "button";
    out.addEventListener("click", async () => {
      await postJSON("/api/account/logout");
      location.href = "/";
    });
    const row = el("p", undefined, "account-home");
    row.append(out, everywhere);
    main.append(el("h2", t("Sessions")), row);
  }
}

init();
