// Notices (issue 23): when it becomes your turn, a move arrives, an offer is made or a game ends,
// the game page shows a notice, plays a short sound (made here with WebAudio: no asset to load)
// and, when the tab is hidden and the player has opted in, shows a browser notification.
// Both switches are remembered in this browser; the permission for notifications is asked for
// only when the player turns them on.  E-mail notifications are the server's (web/social/notify.py),
// set on /settings.
import { whoami } from "./account.js";
import { t } from "./i18n.js";

const SOUND = "jericho:sound";  // "off": no sound (on by default, as on lichess and BGA)
const BROWSER = "jericho:notify";  // "on": the player opted in to browser notifications

const store = {
  get(key) { try { return localStorage.getItem(key); } catch { return null; } },
  set(key, v) { try { localStorage.setItem(key, v); } catch { /* private mode */ } },
};

const supported = () => typeof window.Notification === "function";

/** The two switches of this browser. */
export const prefs = {
  sound: () => store.get(SOUND) !== "off",
  setSound(on) { store.set(SOUND, on ? "on" : "off"); },
  /** Whether browser notifications are on (opted in, and the browser allows them). */
  browser: () => store.get(BROWSER) === "on" && supported() && Notification.permission === "granted",
  /** Turn browser notifications on (asks for the permission now, never before) or off; resolves
   * to whether they are on. */
  async setBrowser(on) {
    if (!on || !supported()) {
      store.set(BROWSER, "off");
      return false;
    }
    let permission = Notification.permission;
    if (permission === "default") {
      try { permission = await Notification.requestPermission(); } catch { permission = "denied"; }
    }
    store.set(BROWSER, permission === "granted" ? "on" : "off");
    return permission === "granted";
  },
};

/** What happened between two public states of one game, for a player holding `sides` (empty:
 * a spectator): a list of {kind, text}, kind one of turn, move, offer, end. */
export function events(prev, next, sides) {
  if (!prev || !next || prev.id !== next.id) return [];  // a page's first state: nothing happened
  const mine = (side) => sides.includes(side);
  const solo = sides.length === 1;  // hot-seat (both sides here) has no opponent to hear from
  const out = [];
  if (next.status === "over" && prev.status !== "over") {
    out.push({ kind: "end", text: t("The game has ended.") });
    return out;
  }
  // a spectator hears every move, a player the opponent's (and the AI's)
  if (next.ply > prev.ply && (!sides.length || (solo && !mine(prev.turn)))) {
    const last = next.last && next.last !== "pass" ? next.last : null;
    out.push({ kind: "move", text: last ? t("A move has arrived: {move}.", { move: last }) : t("A move has arrived.") });
  }
  // the opponent moved (or passed, or joined): the player's turn
  if (solo && next.status === "playing" && mine(next.turn) && (next.ply > prev.ply || prev.status !== "playing")) {
    out.push({ kind: "turn", text: t("Your turn.") });
  }
  const offer = next.offer;
  if (solo && offer && !mine(offer.by) &&
      !(prev.offer && prev.offer.what === offer.what && prev.offer.by === offer.by)) {
    out.push({ kind: "offer", text: offer.what === "draw" ? t("Your opponent offers a draw.") :
      t("Your opponent asks to take back their last move.") });
  }
  return out;
}

// -- sound -----------------------------------------------------------------------------------
let audio = null;

function context() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  if (!audio) {
    try { audio = new Ctx(); } catch { return null; }
  }
  return audio;
}

// the browser lets a page make sound only after a gesture: the first one wakes the context
for (const type of ["pointerdown", "keydown"]) {
  window.addEventListener(type, () => {
    if (prefs.sound()) { const c = context(); if (c && c.state === "suspended") c.resume().catch(() => {}); }
  }, { once: true, capture: true });
}

// each kind its own little tune: (frequency Hz, start s, length s)
const TUNES = {
  move: [[660, 0, 0.07]],
  turn: [[660, 0, 0.09], [880, 0.1, 0.12]],
  offer: [[880, 0, 0.08], [660, 0.1, 0.08], [880, 0.2, 0.1]],
  end: [[523, 0, 0.12], [392, 0.14, 0.2]],
};

/** A short sound of `kind` (if sound is on). */
export function beep(kind) {
  if (!prefs.sound()) return;
  const c = context();
  if (!c) return;
  const t0 = c.currentTime + 0.01;
  for (const [freq, at, len] of TUNES[kind] || TUNES.move) {
    const osc = c.createOscillator();
    const gain = c.createGain();
    osc.type = "sine";
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t0 + at);
    gain.gain.exponentialRampToValueAtTime(0.2, t0 + at + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + at + len);
    osc.connect(gain).connect(c.destination);
    osc.start(t0 + at);
    osc.stop(t0 + at + len + 0.02);
  }
}

// -- the notice and the browser's notification ------------------------------------------------
const ORDER = ["end", "offer", "turn", "move"];  // one notice at a time: the most important

/** The notices of one game page. */
export class Notices {
  constructor(gameId) {
    this.gameId = gameId;
    this.node = document.getElementById("notice");
    if (!this.node) {
      this.node = document.createElement("div");
      this.node.id = "notice";
      this.node.className = "notice";
      this.node.setAttribute("role", "status");
      document.body.appendChild(this.node);
    }
    this.node.hidden = true;
  }

  /** Show what changed from `prev` to `next` for `sides` (see events()). */
  update(prev, next, sides) {
    const list = events(prev, next, sides);
    if (!list.length) return list;
    // the sound and the notification are the most important event's; the text reads in order
    const top = [...list].sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind))[0];
    const text = list.map((e) => e.text).join(" ");
    this.node.textContent = text;
    this.node.dataset.kind = top.kind;
    this.node.hidden = false;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.node.hidden = true; }, 6000);
    beep(top.kind);
    if (document.hidden && prefs.browser() && top.kind !== "move") {
      try {
        const n = new Notification("Jericho", { body: text, tag: `jericho-${this.gameId}` });
        n.onclick = () => { window.focus(); n.close(); };
      } catch { /* some browsers only notify from a service worker */ }
    }
    return list;
  }
}

/** The two switches (sound, browser notifications) as checkboxes in `container`. */
export function mountSwitches(container) {
  const make = (id, label, checked, onChange) => {
    const l = document.createElement("label");
    l.className = "switch";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.id = id;
    box.checked = checked;
    box.addEventListener("change", () => onChange(box));
    l.append(box, ` ${label}`);
    return l;
  };
  const note = document.createElement("small");
  note.className = "muted";
  note.id = "notify-note";
  const sound = make("switch-sound", t("Sound"), prefs.sound(), (box) => {
    prefs.setSound(box.checked);
    if (box.checked) beep("turn");  // hear what it sounds like (a click is a gesture: it may play)
  });
  const browser = make("switch-browser", t("Notify me when this tab is in the background"), prefs.browser(),
    async (box) => {
      const wanted = box.checked;
      const on = await prefs.setBrowser(wanted);
      box.checked = on;
      note.textContent = wanted && !on ?
        t("The browser blocks notifications for this site: allow them in its settings.") : "";
    });
  if (!supported()) {
    browser.querySelector("input").disabled = true;
    note.textContent = t("This browser cannot show notifications.");
  }
  const parts = [sound, browser];
  if (location.pathname !== "/settings") {
    const more = document.createElement("a");
    more.href = "/settings";
    more.id = "notify-settings-link";
    more.textContent = t("E-mail notifications");
    parts.push(more);
  }
  container.replaceChildren(...parts, note);
}

/** The "invite a player by name" form of a waiting online game (`container`): the server mails the
 * invitation if that player takes invitation mails (web/social/notify.py).  Shown only to a logged-in
 * player on a server that sends mail; `postJSON` is account.js's. */
export async function mountInvite(container, gameId, token, postJSON) {
  if (!(await whoami()).account) return;  // invitations by name are an account's
  let settings;
  try {
    const r = await fetch("/api/notify/settings", { cache: "no-store" });
    if (!r.ok) return;  // not logged in
    settings = await r.json();
  } catch { return; }
  if (!settings.email_enabled) return;
  const form = document.createElement("form");
  form.className = "invite-form";
  const label = document.createElement("label");
  label.htmlFor = "invite-name";
  label.textContent = t("Or invite a player by their username (they get an e-mail if they asked for invitations):");
  const input = document.createElement("input");
  input.id = "invite-name";
  input.maxLength = 24;
  input.spellcheck = false;
  input.autocomplete = "off";
  const button = document.createElement("button");
  button.type = "submit";
  button.textContent = t("Invite");
  const status = document.createElement("span");
  status.id = "invite-status";
  status.setAttribute("role", "status");
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const username = input.value.trim();
    if (!username) return;
    const res = await postJSON("/api/notify/invite", { game: gameId, token, username });
    status.textContent = res.ok ? t("Invitation sent to {name}, if they take invitations by mail.", { name: username }) :
      (res.data.message || t("error"));
  });
  form.append(label, input, button, status);
  container.replaceChildren(form);
  container.hidden = false;
}
