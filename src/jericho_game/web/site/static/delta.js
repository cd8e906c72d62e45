// Move deltas on the game WebSocket (issue 57; docs/web.md, "WebSocket protocol", protocol 2).
// The mirror of jericho_game/web/round/wire.py's apply: apply(old, delta) is the server's next state.

/** The legal placements from their {cells, not} form (each piece: every cell but its `not` indices). */
export function decodeLegal(packed) {
  const legal = {};
  for (const [piece, missing] of packed.not) {
    const skip = new Set(missing);
    legal[piece] = packed.cells.filter((_, i) => !skip.has(i));
  }
  return legal;
}

/** `state` with `delta` applied, as a new object: `state` itself is left as it was (the page
 * compares the state before a move with the one after). */
export function apply(state, delta) {
  const next = { ...state };
  for (const [key, value] of Object.entries(delta.set || {})) next[key] = value;
  for (const [key, changes] of Object.entries(delta.patch || {})) next[key] = { ...next[key], ...changes };
  if ("move" in delta) next.moves = [...next.moves, delta.move];
  if ("legal" in delta) next.legal = decodeLegal(delta.legal);
  return next;
}

/**
 * The client's copy of the game as the socket brings it: feed() takes each `state` or `delta`
 * message and returns the state message to draw, or null (a delta that does not follow the copy:
 * it has asked for the whole state with `sync`, once, and waits for it).
 */
export class WireCopy {
  constructor(send) {
    this.send = send;
    this.seq = null;
    this.game = null;
    this.asked = false;
  }

  feed(msg) {
    if (msg.type === "state") {
      this.seq = msg.seq ?? null;
      this.game = msg.game;
      this.asked = false;
      return msg;
    }
    if (this.game !== null && this.seq !== null && msg.from === this.seq) {
      this.game = apply(this.game, msg);
      this.seq = msg.seq;
      return { type: "state", seq: msg.seq, game: this.game };
    }
    if (!this.asked) {  // a gap: never guess, ask for the whole state
      this.asked = true;
      this.send({ type: "sync" });
    }
    return null;
  }
}
