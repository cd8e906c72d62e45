// Move numbers as the game record writes them (docs/notation.md, jericho_game.record.move_label):
// one numbered move is a South ply and the North ply after it, "16." before South's move and
// "16..." before North's.  Every page labels moves so: the move list, the replay, the review, /games.

/** The number and mover of the ``ply``-th move (1 = the first) of a game whose first move is ``first``'s. */
export function moveNumber(ply, first = "south") {
  const k = first === "south" ? ply : ply + 1;  // as if a South move came before a North start
  return { number: Math.floor((k + 1) / 2), side: k % 2 ? "south" : "north" };
}

/** "16." for South's move of move 16, "16..." for North's. */
export function moveLabel(ply, first = "south") {
  const { number, side } = moveNumber(ply, first);
  return side === "south" ? `${number}.` : `${number}...`;
}

/** How many numbered moves ``plies`` plies make (47 plies: 24 moves). */
export function moveCount(plies, first = "south") {
  return plies > 0 ? moveNumber(plies, first).number : 0;
}
