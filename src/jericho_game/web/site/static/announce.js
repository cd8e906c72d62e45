// What a screen reader hears when a move is played (issue 24): one sentence per move, in a polite
// live region, whoever played it (the player, the opponent, the AI): "North played 5Y on c3;
// North takes alignment c".  The sentence is built from two consecutive states of the game, so
// it says only what the server's state says; a state that is not one move further (the first
// state, a reconnection, an undo) is not read out as a move.
import { t } from "./i18n.js";

/** The sentence for the moves between `before` and `after` (states of one game), or "": one move,
 * or a move and the forced passes the server played after it (at most 3 plies: more is a
 * reconnection, not something to read out). */
export function moveWords(before, after) {
  if (!before || !after || before.id !== after.id) return "";
  const n = after.ply - before.ply;
  const moves = after.moves || [];
  if (n < 1 || n > 3 || moves.length !== after.ply) return "";
  const side = { south: t("South"), north: t("North") };
  const parts = [];
  let mover = before.turn;
  for (const move of moves.slice(before.ply)) {
    const who = side[mover];
    parts.push(move.includes("@") ?
      t("{side} played {piece} on {cell}", { side: who, piece: move.split("@")[0], cell: move.split("@")[1] }) :
      t("{side} passed", { side: who }));
    mover = mover === "south" ? "north" : "south";
  }
  const names = new Set([...Object.keys(before.leaders || {}), ...Object.keys(after.leaders || {})]);
  for (const name of names) {
    const was = (before.leaders || {})[name] || null, now = (after.leaders || {})[name] || null;
    if (was === now) continue;
    parts.push(now ? t("{side} takes alignment {name}", { side: side[now], name }) :
      t("nobody holds alignment {name} any more", { name }));
  }
  return parts.join(t("; "));
}

/** Put `text` in the live region `node`: a repeated sentence is still read (the node is emptied first). */
export function announce(node, text) {
  if (!node || !text) return;
  node.textContent = "";
  // a new text node in a later task: screen readers notice a change, even to the same words
  setTimeout(() => { node.textContent = text; }, 50);
}
