// Challenges in every page (layout.js), in real time (issue 52): a logged-in player's page holds the
// people feed, the lobby's WebSocket with ?feed=people (web/people/feed.py), on which the server says
// only "your challenges or relations changed"; the page then reads /api/challenges (the database is
// the truth) and tells what is new since this tab opened: a challenge received (a notice), one's
// challenge accepted (the visible page goes to the game), declined (with its reason, in the page's
// language) or expired, a challenge received then withdrawn.  It also says so to the page's own
// parts ("jericho:people" and "jericho:challenges" events: /challenges, a profile).  While the page
// is open its player counts as there: a real-time challenge they sent stands (docs/web.md, "People").
import { whoami } from "./account.js";
import { t } from "./i18n.js";
import { declineReasons } from "./people.js";

const TOLD = "jericho:challenges-told";  // per tab (sessionStorage): what this tab has said
const SINCE = "jericho:challenges-since";  // the server's time when this tab first looked

function tabGet(key, fallback) {
  try { const v = sessionStorage.getItem(key); return v === null ? fallback : JSON.parse(v); } catch { return fallback; }
}

function tabSet(key, value) {
  try { sessionStorage.setItem(key, JSON.stringify(value)); } catch { /* no storage: this page alone */ }
}

function show(text, href, linkText) {
  let node = document.getElementById("challenge-notice");
  if (!node) {
    node = document.createElement("div");
    node.id = "challenge-notice";
    node.className = "notice challenge-notice";
    node.setAttribute("role", "status");
    document.body.append(node);
  }
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = "×";
  close.setAttribute("aria-label", t("Close"));
  close.addEventListener("click", () => { node.hidden = true; });
  const parts = [document.createTextNode(text)];
  if (href) {
    const link = document.createElement("a");
    link.href = href;
    link.textContent = linkText;
    parts.push(document.createTextNode(" "), link);
  }
  node.replaceChildren(...parts, close);
  node.hidden = false;
}

export async function startChallengeBell() {
  const me = (await whoami()).account?.username;
  if (!me) return;
  const onPage = location.pathname === "/challenges";
  const told = new Set(tabGet(TOLD, []));
  let since = tabGet(SINCE, null);
  let busy = false;
  let again = false;

  function tell(c) {
    if (c.to === me) {  // received
      if (c.status === "pending") {
        if (told.has(`in:${c.id}`)) return;
        told.add(`in:${c.id}`);
        if (!onPage) show(t("{name} challenges you to a game.", { name: c.from }), "/challenges", t("See the challenge"));
        return;
      }
      // withdrawn after this tab told of it: say so where the notice was
      if (!told.has(`in:${c.id}`) || told.has(`gone:${c.id}`)) return;
      told.add(`gone:${c.id}`);
      if (c.status === "cancelled") show(t("{name} cancelled the challenge.", { name: c.from }));
      else if (c.status === "expired" && c.reason === "left") show(t("{name} left: the challenge is cancelled.", { name: c.from }));
      else if (c.status === "expired") show(t("The challenge from {name} expired: nobody answered in time.", { name: c.from }));
      return;
    }
    // sent: each answer once, if it came while this tab was open
    if (c.status === "pending" || told.has(`out:${c.id}`) || !(c.decided_at >= since)) return;
    told.add(`out:${c.id}`);
    if (c.status === "accepted" && c.game) {
      const href = `/g/${encodeURIComponent(c.game)}`;
      // the visible page goes there, unless its player is in a game being played there (app.js)
      const busy = document.documentElement.dataset.playing === "1";
      if (document.visibilityState === "visible" && !busy && location.pathname !== href) { location.href = href; return; }
      show(t("{name} accepted your challenge.", { name: c.to }), href, t("Play"));
    } else if (c.status === "declined") {
      const why = declineReasons()[c.reason] || declineReasons().generic;
      show(`${t("{name} declined your challenge.", { name: c.to })} “${why}”`, "/challenges", t("Challenges"));
    } else if (c.status === "expired") {
      show(c.reason === "left" ? t("Your challenge to {name} expired: you had left.", { name: c.to }) :
        t("Your challenge to {name} expired: nobody answered in time.", { name: c.to }), "/challenges", t("Challenges"));
    }
  }

  async function look() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        let d;
        try {
          const r = await fetch("/api/challenges", { cache: "no-store" });
          if (!r.ok) return;
          d = await r.json();
        } catch { return; }
        if (since === null) { since = d.now; tabSet(SINCE, since); }
        for (const c of [...d.incoming, ...d.outgoing, ...d.recent]) tell(c);
        tabSet(TOLD, [...told].slice(-300));
        window.dispatchEvent(new CustomEvent("jericho:challenges", { detail: d }));
      } while (again);
    } finally {
      busy = false;
    }
  }

  // the feed: reconnects with back-off; a hint (and each opening: what was missed meanwhile) reads the state
  let retry = 0;
  const connect = () => {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${proto}://${location.host}/lobby/ws?feed=people`);
    let refused = false;
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.type === "people") {
        retry = 0;
        look();
        window.dispatchEvent(new CustomEvent("jericho:people"));
      } else if (msg.type === "error" && msg.code === "not_logged_in") {
        refused = true;
      }
    };
    ws.onclose = () => { if (!refused) setTimeout(connect, Math.min(30000, 1000 * 2 ** retry++)); };
  };
  connect();
}
