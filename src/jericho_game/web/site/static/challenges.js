// The challenges page (/challenges): challenge a player by name; the challenges received (accept,
// decline with a reason), sent (cancel) and answered today (with the decline's reason, or why it
// expired); the followed players online (web/people/people.py).  Kept live by the people feed
// (challengebell.js's "jericho:challenges" event, issue 52): no polling.
import { postJSON, whoami } from "./account.js";
import { t } from "./i18n.js";
import { el } from "./dom.js";
import { challengeForm, challengeText, declineReasons } from "./people.js";

const $ = (id) => document.getElementById(id);

function playerLink(name) {
  const a = el("a", name);
  a.href = `/players/${encodeURIComponent(name)}`;
  return a;
}

function button(text, onClick) {
  const b = el("button", text);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

function fill(list, items, row, empty) {
  list.replaceChildren(...(items.length ? items.map(row) : [el("li", empty, "empty")]));
}

const STATUS = () => ({ accepted: t("accepted"), declined: t("declined"), cancelled: t("cancelled"), expired: t("expired") });

async function act(c, what, body) {
  const r = await postJSON(`/api/challenges/${encodeURIComponent(c.id)}/${what}`, body);
  if (!r.ok) { $("ch-error").textContent = r.data.message || ""; return; }
  if (what === "accept" && r.data.game) { location.href = `/g/${encodeURIComponent(r.data.game)}`; return; }
  load();
}

function reasonPicker(c) {
  const label = el("label", t("Reason"), "sr");
  const pick = document.createElement("select");
  pick.id = `ch-reason-${c.id}`;
  pick.className = "ch-reason";
  label.htmlFor = pick.id;
  for (const [key, text] of Object.entries(declineReasons())) pick.append(new Option(text, key));
  return [label, pick];
}

/** Why an answered challenge ended, in words: a decline's reason, or why it expired. */
function why(c) {
  if (c.status === "declined") return `“${declineReasons()[c.reason] || declineReasons().generic}”`;
  if (c.status === "expired") return c.reason === "left" ? t("the challenger left") : t("nobody answered in time");
  return "";
}

async function load() {
  const r = await fetch("/api/challenges", { cache: "no-store" });
  if (!r.ok) return;
  render(await r.json());
}

function render(d) {
  // a list drawn again (a hint about another challenge) keeps the reasons being picked
  const picked = new Map([...document.querySelectorAll(".ch-reason")].map((s) => [s.id, s.value]));
  fill($("ch-incoming"), d.incoming, (c) => {
    const li = el("li");
    li.id = `challenge-${c.id}`;
    const [label, pick] = reasonPicker(c);
    if (picked.has(pick.id)) pick.value = picked.get(pick.id);
    li.append(playerLink(c.from), el("span", challengeText(c, false), "muted"),
      button(t("Accept"), () => act(c, "accept")), label, pick,
      button(t("Decline"), () => act(c, "decline", { reason: pick.value })));
    return li;
  }, t("No challenge waiting for you."));
  fill($("ch-outgoing"), d.outgoing, (c) => {
    const li = el("li");
    li.append(playerLink(c.to), el("span", challengeText(c, true), "muted"), button(t("Cancel"), () => act(c, "cancel")));
    return li;
  }, t("No challenge sent."));
  fill($("ch-recent"), d.recent, (c) => {
    const li = el("li");
    li.id = `challenge-${c.id}`;
    li.append(el("span", t("{from} against {to}", { from: c.from, to: c.to })),
      el("span", STATUS()[c.status] || c.status, "muted"));
    if (why(c)) li.append(el("span", why(c), "muted ch-why"));
    if (c.game) {
      const a = el("a", t("Open the game"));
      a.href = `/g/${encodeURIComponent(c.game)}`;
      li.append(a);
    }
    return li;
  }, t("Nothing answered today."));
  fill($("ch-online"), d.online, (p) => {
    const li = el("li");
    li.append(playerLink(p.username));
    return li;
  }, t("None of the players you follow is online."));
}

async function init() {
  if (!(await whoami()).account) { $("ch-login").hidden = false; return; }
  $("ch-body").hidden = false;
  const err = el("p", "", "error");
  err.id = "ch-error";
  err.setAttribute("role", "alert");
  $("ch-form").append(challengeForm(null, load), err);
  const wanted = new URLSearchParams(location.search).get("to");
  if (wanted) { const input = $("ch-form").querySelector("input"); if (input) input.value = wanted; }
  window.addEventListener("jericho:challenges", (e) => render(e.detail));  // each hint of the feed
  await load();
}

init();
