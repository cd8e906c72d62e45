// Board and piece themes (issue 34, point 4): three boards and three piece sets, every set keeping
// its five colours apart under simulated protanopia, deuteranopia and tritanopia (tests/web/site/
// test_looks_ui.py).  The choice is kept in this browser (localStorage, applied before the first
// paint by early.js) and, for a logged-in player, with the account (web/accounts/prefs.py), which
// brings it to any browser they log in from.  The CSS does the drawing (style.css: [data-board],
// [data-pieces]); the piece's letters stay on every piece whatever the set.
import { postJSON, whoami } from "./account.js";

export const BOARDS = ["wood", "slate", "paper"];
export const PIECES = ["classic", "bright", "deep"];
const KEYS = { board: "jericho:board", pieces: "jericho:pieces" };

const store = {
  get(key) { try { return localStorage.getItem(key); } catch { return null; } },
  set(key, v) { try { localStorage.setItem(key, v); } catch { /* private mode */ } },
};

/** The themes in use: {board, pieces}. */
export function looks() {
  const board = store.get(KEYS.board), pieces = store.get(KEYS.pieces);
  return { board: BOARDS.includes(board) ? board : BOARDS[0], pieces: PIECES.includes(pieces) ? pieces : PIECES[0] };
}

function apply(choice) {
  const root = document.documentElement;
  for (const key of ["board", "pieces"]) {
    if (choice[key]) {
      root.dataset[key] = choice[key];
      store.set(KEYS[key], choice[key]);
    }
  }
}

/** Choose a theme ({board} and/or {pieces}): here at once, and on the account when logged in;
 * resolves to whether the account has it too (false: this browser only). */
export async function chooseLooks(choice) {
  apply(choice);
  if (!(await whoami()).account) return false;
  const res = await postJSON("/api/account/prefs", choice);
  return res.ok;
}

/** A logged-in player's themes follow the account: read them once per page. */
export async function syncLooks() {
  if (!(await whoami()).account) return;
  try {
    const r = await fetch("/api/account/prefs", { cache: "no-store" });
    if (r.ok) apply(await r.json());
  } catch { /* offline: this browser's own choice stays */ }
}
