// People (web/people/people.py): the challenge form (on /challenges and on a profile), and the
// profile's follow / challenge / block buttons and followers.  Text goes in by textContent only.
import { postJSON, whoami } from "./account.js";
import { t } from "./i18n.js";
import { el } from "./dom.js";

// the time controls offered: minutes + increment, or days per move (correspondence), or none
const CONTROLS = [
  ["3+2", { clock: 3, increment: 2 }], ["5+0", { clock: 5 }], ["5+3", { clock: 5, increment: 3 }],
  ["10+0", { clock: 10 }], ["15+10", { clock: 15, increment: 10 }], ["30+0", { clock: 30 }],
  ["d1", { per_move_days: 1 }], ["d3", { per_move_days: 3 }], ["d7", { per_move_days: 7 }], ["none", {}],
];

function controlLabel(key) {
  if (key === "none") return t("No clock");
  if (key.startsWith("d")) { const n = Number(key.slice(1)); return n === 1 ? t("1 day per move") : t("{n} days per move", { n }); }
  const [m, s] = key.split("+");
  return t("{m} min + {s} s", { m, s });
}

/** What a challenge asks for, in words: "5 min + 3 s · rated · you play North". */
export function challengeText(c, mine) {
  const control = c.per_move_days ? (c.per_move_days === 1 ? t("1 day per move") : t("{n} days per move", { n: c.per_move_days }))
    : c.clock ? t("{m} min + {s} s", { m: c.clock, s: c.increment || 0 }) : t("No clock");
  const side = c.side === "random" ? t("sides drawn at random") :
    (mine ? (c.side === "south" ? t("you play South") : t("you play North")) :
      (c.side === "south" ? t("you play North") : t("you play South")));
  return `${control} · ${c.rated ? t("rated") : t("casual")} · ${side}`;
}

/** The reasons a challenge may be declined (web/people/people.py DECLINE_REASONS), as lichess says them. */
export function declineReasons() {
  return {
    generic: t("I'm not accepting challenges at the moment."),
    later: t("This is not the right time for me, please ask again later."),
    timecontrol: t("I'm not accepting challenges with this time control."),
    rated: t("Please send me a rated challenge instead."),
    casual: t("Please send me a casual challenge instead."),
  };
}

let formCount = 0;
let listening = false;  // the profile listens to the people feed once

/** A challenge form; `fixed`: the challenged player's name (a profile), else a name field. */
export function challengeForm(fixed, onSent) {
  const n = ++formCount;
  const form = el("form", undefined, "community-form challenge-form");
  form.noValidate = true;
  const field = (label, input) => {
    const l = el("label", label);
    input.id = `${input.dataset.f}-${n}`;
    l.htmlFor = input.id;
    form.append(l, input);
    return input;
  };
  let name = null;
  if (!fixed) {
    name = document.createElement("input");
    name.dataset.f = "ch-name";
    name.maxLength = 64;
    name.autocomplete = "off";
    name.spellcheck = false;
    field(t("Player's name"), name);
  }
  const control = document.createElement("select");
  control.dataset.f = "ch-control";
  for (const [key] of CONTROLS) control.append(new Option(controlLabel(key), key));
  field(t("Time control"), control);
  const side = document.createElement("select");
  side.dataset.f = "ch-side";
  side.append(new Option(t("Random side"), "random"), new Option(t("I play South (first)"), "south"),
    new Option(t("I play North"), "north"));
  field(t("Side"), side);
  const ratedLabel = el("label", undefined, "switch");
  const rated = document.createElement("input");
  rated.type = "checkbox";
  rated.id = `ch-rated-${n}`;
  ratedLabel.append(rated, document.createTextNode(` ${t("Rated")}`));
  form.append(ratedLabel);
  const send = el("button", t("Send the challenge"), "primary");
  send.type = "submit";
  const out = el("p", "", "error");
  out.setAttribute("role", "alert");
  const done = el("p", "", "muted");
  done.setAttribute("role", "status");
  form.append(send, out, done);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    out.textContent = "";
    done.textContent = "";
    const body = { username: fixed || name.value.trim(), side: side.value, rated: rated.checked,
      ...Object.fromEntries(CONTROLS)[control.value] };
    const r = await postJSON("/api/challenges", body);
    if (!r.ok) { out.textContent = r.data.message || t("Something went wrong."); return; }
    done.textContent = t("Challenge sent to {name}: you will see the answer here and in a notice.", { name: r.data.to });
    if (onSent) onSent(r.data);
  });
  return form;
}

/** The profile's people part: followers, following, and the buttons (another player's page). */
export async function profileExtras(main, username) {
  const r = await fetch(`/api/people/${encodeURIComponent(username)}`, { cache: "no-store" });
  if (!r.ok) return;
  const p = await r.json();
  const box = el("section", undefined, "people-box");
  box.id = "people";
  box.setAttribute("aria-labelledby", "people-title");
  const h = el("h2", t("People"));
  h.id = "people-title";
  box.append(h);
  const status = el("p", p.online ? t("Online now") : t("Not online"), "muted");
  status.id = "people-online";
  box.append(status);
  const names = (list) => list.length ? list.join(", ") : t("nobody yet");
  const followers = el("p", `${t("Followers ({n}):", { n: p.followers_count })} ${names(p.followers)}`, "people-names");
  followers.id = "people-followers";
  const following = el("p", `${t("Follows ({n}):", { n: p.following_count })} ${names(p.following)}`, "people-names");
  box.append(followers, following);
  const me = await whoami();
  if (me.account && p.me) {
    const actions = el("div", undefined, "community-actions");
    // what would fail is not offered (issue 51): across a block neither follows nor challenges the
    // other, and a player's setting may take no challenge from this visitor; unfollowing always works
    const follow = el("button", p.me.following ? t("Unfollow") : t("Follow"));
    follow.type = "button";
    follow.id = "btn-follow";
    follow.setAttribute("aria-pressed", String(p.me.following));
    const offerFollow = p.me.following || p.me.can_follow !== false;
    const block = el("button", p.me.blocking ? t("Unblock") : t("Block"));
    block.type = "button";
    block.id = "btn-block";
    block.setAttribute("aria-pressed", String(p.me.blocking));
    const msg = el("p", "", "error");
    msg.setAttribute("role", "alert");
    const redo = async (path, body) => {
      const res = await postJSON(path, body);
      if (!res.ok) { msg.textContent = res.data.message || ""; return; }
      box.remove();
      await profileExtras(main, username);
      document.getElementById(path.endsWith("follow") ? "btn-follow" : "btn-block")?.focus();
    };
    follow.addEventListener("click", () => redo("/api/people/follow", { username: p.username, follow: !p.me.following }));
    block.addEventListener("click", () => {
      if (!p.me.blocking && !confirm(t("Block {name}? They can no longer challenge you, invite you or write to you.", { name: p.username }))) return;
      redo("/api/people/block", { username: p.username, block: !p.me.blocking });
    });
    if (offerFollow) actions.append(follow);
    actions.append(block);
    if (p.me.followed_by) actions.append(el("span", t("follows you"), "muted"));
    box.append(actions, msg);
    if (!p.me.blocking && p.me.can_challenge !== false) {
      const details = el("details");
      details.id = "challenge-details";
      details.append(el("summary", t("Challenge {name}", { name: p.username })), challengeForm(p.username));
      box.append(details);
    }
  } else if (me.account && me.account.username === p.username) {
    const link = el("a", t("Your challenges, and the players you follow who are online"));
    link.href = "/challenges";
    const line = el("p");  // (append returns nothing: the link was never shown, and the page threw)
    line.append(link);
    box.append(line);
  }
  const head = main.querySelector(".profile-head");
  if (head) head.after(box); else main.append(box);
  if (!listening) {
    // issue 52: the people feed (challengebell.js) says the relations changed: a block made meanwhile
    // takes away what would now fail (the form being filled in is kept otherwise)
    listening = true;
    window.addEventListener("jericho:people", async () => {
      const now = await fetch(`/api/people/${encodeURIComponent(username)}`, { cache: "no-store" });
      if (!now.ok) return;
      const q = (await now.json()).me;
      const shown = document.getElementById("people");
      if (!q || !shown) return;
      const offered = [!!document.getElementById("btn-follow"), !!document.getElementById("challenge-details"),
        document.getElementById("btn-block")?.getAttribute("aria-pressed") === "true"];
      const wanted = [q.following || q.can_follow !== false, !q.blocking && q.can_challenge !== false, q.blocking];
      if (offered.some((v, i) => v !== wanted[i])) { shown.remove(); await profileExtras(main, username); }
    });
  }
}
