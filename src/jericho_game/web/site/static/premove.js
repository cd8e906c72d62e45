// Premoves (issue 34, point 4), as on lichess: in a real-time game a player may choose their next
// move while the opponent is still to move.  One move is queued, shown on the board (its piece in the
// tray and its cell outlined), and played the moment the turn comes if it is legal then; otherwise it
// is dropped with a word.  A click on the board, Escape, or the queued piece chosen again cancels it.
// Nothing is sent to the server before the turn: the server never sees a premove, only a move.

/** Whether a move may be queued now: a game being played, without days per move (correspondence has
 * no premoves), by the holder of one seat (not hot-seat) whose turn it is not, outside a replay. */
export function premoveAllowed(g, sides, replaying) {
  return !!g && g.status === "playing" && sides.length === 1 && g.turn !== sides[0] && !replaying &&
    !g.per_move_days && (g.reserves[sides[0]] || []).length > 0;
}

/** What to do with the queued ``move`` ("5R@d2") in the state ``g`` where it is the player's turn:
 * "play" when it is legal now, "drop" when not. */
export function premoveFate(g, move) {
  const [piece, cell] = move.split("@");
  return (g.legal[piece] || []).includes(cell) ? "play" : "drop";
}
