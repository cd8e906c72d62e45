// The notification settings page (/settings): this browser's switches (notify.js) and the
// account's e-mail address and mail switches (web/social/notify.py).
import { postJSON, whoami } from "./account.js";
import { t } from "./i18n.js";
import { mountSwitches } from "./notify.js";
import { drawPiece } from "./board.js";
import { chooseLooks, looks, syncLooks } from "./looks.js";

const $ = (id) => document.getElementById(id);

const RESULTS = {
  "email=confirmed": t("Your e-mail address is confirmed."),
  "email=expired": t("This confirmation link has expired or was already used."),
  "unsubscribed=turn": t("You will get no more mails about your turn."),
  "unsubscribed=invite": t("You will get no more invitation mails."),
  "unsubscribed=all": t("You will get no more mails: the address is forgotten."),
  "unsubscribed=invalid": t("This unsubscribe link is not valid."),
};

function showState(s) {
  $("email-input").value = s.email || "";
  $("mail-turn").checked = s.kinds.turn;
  $("mail-invite").checked = s.kinds.invite;
  $("email-state").textContent = !s.email ? t("No address yet.") : s.confirmed ? t("Confirmed.") :
    t("Waiting for confirmation: follow the link of the mail we sent.");
}

/** The board and piece themes: two groups of radio buttons and a preview (looks.js). */
async function mountLooks() {
  const svg = $("looks-preview");
  const NS = "http://www.w3.org/2000/svg";
  const add = (tag, attrs, parent = svg) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    parent.append(e);
    return e;
  };
  add("rect", { x: 2, y: 2, width: 556, height: 116, rx: 18, class: "octagon", fill: "#e4cfa4", stroke: "#6b4b26", "stroke-width": 4 });
  ["R", "Y", "G", "B", "W"].forEach((c, i) => {
    const cell = add("g", { class: "cell", transform: `translate(${60 + i * 110} 60)` });
    add("rect", { x: -50, y: -50, width: 100, height: 100, rx: 8, class: "cell-bg" }, cell);
    drawPiece(cell, `${5 - i}${c}`, 0, -14, 28);
  });
  const show = () => {
    const now = looks();
    for (const key of ["board", "pieces"]) {
      for (const input of document.querySelectorAll(`#looks-form input[name="${key}"]`)) input.checked = input.value === now[key];
    }
  };
  await syncLooks();
  show();
  $("looks-form").addEventListener("change", async (e) => {
    const input = e.target;
    const saved = await chooseLooks({ [input.name]: input.value });
    $("looks-saved").textContent = saved ? t("Saved with your account.") : t("Saved in this browser.");
  });
  // Only now: a choice made while the account's was still loading went unheard, then show() undid it.
  for (const set of document.querySelectorAll("#looks-form fieldset")) set.disabled = false;
}

/** Who may challenge this account (web/people/people.py, "who may challenge me"): three radio buttons. */
async function mountChallengers() {
  if (!(await whoami()).account) { $("challengers-login").hidden = false; return; }
  let r;
  try { r = await fetch("/api/challenges/settings", { cache: "no-store" }); } catch { return; }
  if (!r.ok) return;
  const now = (await r.json()).challenges;
  const form = $("challengers-form");
  for (const input of form.querySelectorAll("input[name=challengers]")) input.checked = input.value === now;
  form.hidden = false;
  form.addEventListener("change", async (e) => {
    const res = await postJSON("/api/challenges/settings", { challenges: e.target.value });
    $("challengers-saved").textContent = res.ok ? t("Saved.") : (res.data.message || t("error"));
  });
  form.querySelector("fieldset").disabled = false;
}

async function init() {
  mountSwitches($("notify-switches"));
  mountLooks();
  mountChallengers();
  const q = new URLSearchParams(location.search);
  for (const [key, text] of Object.entries(RESULTS)) {
    const [k, v] = key.split("=");
    if (q.get(k) === v) $("settings-result").textContent = text;
  }
  if (!(await whoami()).account) { $("email-login").hidden = false; return; }
  let r;
  try { r = await fetch("/api/notify/settings", { cache: "no-store" }); } catch { return; }
  if (r.status === 401) { $("email-login").hidden = false; return; }
  const s = await r.json();
  if (!s.email_enabled) { $("email-off").hidden = false; return; }
  $("email-form").hidden = false;
  showState(s);
  $("email-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("email-error").textContent = "";
    const email = $("email-input").value.trim();
    const body = { turn: $("mail-turn").checked, invite: $("mail-invite").checked };
    if (email !== (s.email || "")) body.email = email || null;
    const res = await postJSON("/api/notify/settings", body);
    if (!res.ok) { $("email-error").textContent = res.data.message || t("error"); return; }
    Object.assign(s, res.data);
    showState(s);
    $("settings-result").textContent = body.email ? t("Saved. A confirmation mail is on its way.") : t("Saved.");
  });
}

init();
