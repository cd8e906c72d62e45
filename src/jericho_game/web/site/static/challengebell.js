// Challenges in every page (layout.js): a logged-in player's pages ask for their challenges every
// 20 s (which also marks the player online for those who follow them, web/people/people.py), and a
// notice tells of a new challenge received, or of one's challenge accepted (with the game) or declined.
import { whoami } from "./account.js";
import { t } from "./i18n.js";

const KEY = "jericho:challenges-told";

function told() {
  try { return new Set(JSON.parse(localStorage.getItem(KEY) || "[]")); } catch { return new Set(); }
}

function remember(ids) {
  try { localStorage.setItem(KEY, JSON.stringify([...ids].slice(-200))); } catch { /* no storage */ }
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
  const link = document.createElement("a");
  link.href = href;
  link.textContent = linkText;
  node.replaceChildren(document.createTextNode(text), link, close);
  node.hidden = false;
}

export async function startChallengeBell() {
  if (!(await whoami()).account) return;
  const onPage = location.pathname === "/challenges";
  async function look() {
    let d;
    try {
      const r = await fetch("/api/challenges", { cache: "no-store" });
      if (!r.ok) return;
      d = await r.json();
    } catch { return; }
    const seen = told();
    const me = (await whoami()).account?.username;
    for (const c of d.incoming) {
      if (seen.has(`in:${c.id}`)) continue;
      seen.add(`in:${c.id}`);
      if (!onPage) show(t("{name} challenges you to a game.", { name: c.from }), "/challenges", t("See the challenge"));
    }
    for (const c of d.recent) {
      if (c.from !== me || seen.has(`out:${c.id}`) || !(c.decided_at > Date.now() / 1000 - 600)) continue;
      seen.add(`out:${c.id}`);
      if (c.status === "accepted" && c.game) {
        show(t("{name} accepted your challenge.", { name: c.to }), `/g/${encodeURIComponent(c.game)}`, t("Play"));
      } else if (c.status === "declined") {
        show(t("{name} declined your challenge.", { name: c.to }), "/challenges", t("Challenges"));
      }
    }
    remember(seen);
  }
  look();
  setInterval(() => { if (!document.hidden) look(); }, 20000);
}
