// The timeline of followed players on /challenges (issue 52, as lichess's timeline): their games
// finished, tournaments won and best puzzle streaks, newest first (GET /api/people/timeline,
// web/people/timeline.py).  Read when the page opens and again when the account's relations change (a block).
import { t, formatDate } from "./i18n.js";
import { el } from "./dom.js";

function link(text, href) {
  const a = el("a", text);
  a.href = href;
  return a;
}

/** The sentence of one event, as text with {placeholders} and the links to put in them. */
function sentence(e) {
  if (e.type === "tournament") {
    return [t("{player} won the tournament {tournament}"), { player: e.player, tournament: link(e.name, e.link) }];
  }
  if (e.type === "streak") {
    return [t("{player} set a new best puzzle streak: {best}"), { player: e.player, best: link(String(e.best), e.link) }];
  }
  const me = e.followed[0];
  const side = e.players.south === me ? "south" : "north";
  const other = e.players[side === "south" ? "north" : "south"];
  const opponent = other ?? (e.ai ? t("the AI ({level})", { level: e.ai }) : t("anonymous"));
  const text = e.result === "draw" ? t("{player} drew with {opponent}") :
    e.result === side ? t("{player} won against {opponent}") : t("{player} lost to {opponent}");
  return [text, { player: me, opponent }, e.link];
}

function row(e) {
  const [text, args, game] = sentence(e);
  const li = el("li", "", "timeline-event");
  li.dataset.type = e.type;
  // the sentence's words are the catalog's; the names are put in as text, never as markup
  for (const part of text.split(/(\{\w+\})/)) {
    const key = part.match(/^\{(\w+)\}$/)?.[1];
    const value = key ? args[key] : part;
    if (value === undefined || value === null) continue;
    li.append(typeof value === "string" && key === "player" ? link(value, `/players/${encodeURIComponent(value)}`) : value);
  }
  if (game) li.append(" ", link(t("See the game"), game));
  li.append(" ", el("span", formatDate(e.at * 1000), "muted"));
  return li;
}

/** Fill the list `list` with the session's timeline (nothing shown when the read fails). */
export async function loadTimeline(list) {
  const r = await fetch("/api/people/timeline", { credentials: "same-origin" });
  if (!r.ok) return;
  const data = await r.json();
  list.replaceChildren(...(data.events.length ? data.events.map(row) :
    [el("li", t("Nothing yet: the games, tournament wins and puzzle streaks of the players you follow show here."), "empty")]));
}

const list = document.getElementById("ch-timeline");
if (list) {
  loadTimeline(list);
  // a hint of the people feed (challengebell.js): a block may have hidden someone's events
  window.addEventListener("jericho:people", () => loadTimeline(list));
}
