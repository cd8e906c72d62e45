// The leaderboard (/leaderboard): accounts with an established rating (not provisional), best Glicko-2 rating first.
import "./account.js";
import { t } from "./i18n.js";
import { el } from "./dom.js";

async function init() {
  const main = document.getElementById("leaderboard");
  main.append(el("h1", t("Leaderboard")));
  main.append(el("p", t("Glicko-2 ratings from rated online games between accounts. ± is the rating deviation: " +
    "how sure the rating is (it narrows with every game). Provisional ratings, whose deviation is still " +
    "above 110 (too few games to trust them), are not ranked: they show with a “?” on the player's page."), "note"));
  let players = [];
  try {
    players = (await (await fetch("/api/leaderboard")).json()).players;
  } catch {
    main.append(el("p", t("Could not reach the server."), "error"));
    return;
  }
  if (!players.length) {
    main.append(el("p", t("No established ratings yet. Log in, start an online game and tick “Rated”."), "empty"));
    return;
  }
  const table = el("table");
  table.id = "leaderboard-table";
  const head = el("tr");
  for (const [h, cls] of [["#", "num"], [t("Player")], [t("Rating"), "num"], ["±", "num"], [t("Games"), "num"]]) {
    head.append(el("th", h, cls));
  }
  table.append(el("thead"));
  table.tHead.append(head);
  const body = el("tbody");
  for (const p of players) {
    const tr = el("tr");
    tr.append(el("td", p.rank, "num"));
    const name = el("td");
    const a = el("a", p.username);
    a.href = `/players/${encodeURIComponent(p.username)}`;
    name.append(a);
    const rating = el("td", `${p.rating}${p.provisional ? "?" : ""}`, "num");
    if (p.provisional) rating.title = t("provisional: too few rated games to trust it yet");
    tr.append(name, rating, el("td", p.rd, "num"), el("td", p.games, "num"));
    body.append(tr);
  }
  table.append(body);
  // the table scrolls sideways inside its box on a narrow phone: the page keeps the screen's width
  const box = el("div", undefined, "table-scroll");
  box.append(table);
  main.append(box);
}

init();
