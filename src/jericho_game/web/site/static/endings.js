// Fair endings of online games on the game page: draw offers, takeback requests, abort, and the
// claim against an opponent who left an untimed game.  The server decides; this shows what the
// state says and sends the player's intentions ({type: "offer"|"accept"|"decline"|"claim"|"abort"}).
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const SIDE = { south: t("South"), north: t("North") };

let view = null;  // {g, me, send, at}: the last state drawn, for the ticking away time

function fmt(sec) {
  const s = Math.max(0, Math.floor(sec));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function button(id, text, onclick, cls = "") {
  const b = document.createElement("button");
  b.type = "button";
  b.id = id;
  b.textContent = text;
  if (cls) b.className = cls;
  b.onclick = onclick;
  return b;
}

/** Draw the controls for state g; me: the player's side (null: watching or not online). */
export function renderEndings(g, me, send, name) {
  const box = $("endings");
  const online = g.mode === "online" && me;
  // away_for was measured when the state was sent: count on from when this state arrived
  const at = view && view.g === g ? view.at : performance.now();
  view = online ? { g, me, send, name, at } : null;
  const opp = me === "south" ? "north" : "south";
  const offer = g.offer;
  const key = JSON.stringify([online, g.status, g.can_abort, offer, g.version]);
  if (box.dataset.key === key) { tick(); return; }
  box.dataset.key = key;
  box.replaceChildren();
  box.hidden = !online || g.status === "over";
  if (box.hidden) return;
  const bar = document.createElement("p");
  bar.id = "offer-text";
  bar.className = "offer-text";
  bar.setAttribute("role", "status");
  const row = document.createElement("div");
  row.className = "ending-buttons";
  if (g.status === "playing") {
    if (offer && offer.by === opp) {
      bar.textContent = offer.what === "draw" ? t("{name} offers a draw.", { name: name(opp) }) :
        t("{name} asks to take back their last move.", { name: name(opp) });
      row.append(
        button("btn-accept", t("Accept"), () => send({ type: "accept", what: offer.what }), "primary"),
        button("btn-decline", t("Decline"), () => send({ type: "decline", what: offer.what })),
      );
    } else if (offer && offer.by === me) {
      bar.textContent = offer.what === "draw" ? t("You asked for a draw: waiting for {name}'s answer.", { name: name(opp) }) :
        t("You asked for a takeback: waiting for {name}'s answer.", { name: name(opp) });
      row.append(button("btn-withdraw", t("Withdraw"), () => send({ type: "decline", what: offer.what })));
    } else {
      row.append(
        button("btn-draw", t("Offer draw"), () => send({ type: "offer", what: "draw" })),
        button("btn-takeback", t("Ask takeback"), () => send({ type: "offer", what: "takeback" })),
      );
    }
  }
  if (g.can_abort) {
    row.append(button("btn-abort", g.status === "waiting" ? t("Cancel game") : t("Abort"), () => send({ type: "abort" })));
  }
  const claim = document.createElement("div");
  claim.id = "claim";
  claim.className = "claim";
  claim.hidden = true;
  const claimText = document.createElement("span");
  claimText.id = "claim-text";
  claim.append(
    claimText,
    button("btn-claim-win", t("Claim the win"), () => send({ type: "claim", what: "win" }), "primary"),
    button("btn-claim-draw", t("Claim a draw"), () => send({ type: "claim", what: "draw" })),
  );
  box.append(bar, row, claim);
  bar.hidden = !bar.textContent;
  tick();
}

/** Update the opponent's away time and the claim buttons (called every second). */
export function tick() {
  const claim = $("claim");
  if (!view || !claim) return;
  const { g, me } = view;
  const opp = me === "south" ? "north" : "south";
  const seat = g.seats[opp];
  if (g.status !== "playing" || g.claim_after == null || !seat || seat.present || seat.away_for == null) {
    claim.hidden = true;
    return;
  }
  const away = seat.away_for + (performance.now() - view.at) / 1000;
  claim.hidden = false;
  const ready = away >= g.claim_after;
  $("claim-text").textContent = ready ?
    t("{name} left {away} ago: you may claim the game.", { name: view.name(opp), away: fmt(away) }) + " " :
    t("{name} left {away} ago; you may claim in {wait}.",
      { name: view.name(opp), away: fmt(away), wait: fmt(g.claim_after - away) }) + " ";
  $("btn-claim-win").disabled = !ready;
  $("btn-claim-draw").disabled = !ready;
}

setInterval(tick, 1000);
