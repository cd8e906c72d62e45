// The arrow keys within a tray of pieces (issue 24): a tray is one Tab stop (a "roving" tabindex:
// the chosen piece, else the last one focused, else the first that can be picked); the arrow keys,
// Home and End move among the pieces that can be picked.  Left/Right go to the previous/next
// piece, Up/Down to the nearest piece of the row above/below (the trays are grids of sizes and
// colours, whatever their width), as a keyboard user expects of a group of buttons.

/** The tray's pieces that can be focused now (present, not refused). */
function candidates(tray) {
  return [...tray.querySelectorAll(".slot")].filter((b) => !b.disabled && !b.hidden &&
    b.getAttribute("aria-disabled") !== "true");
}

/** Make one piece of the tray its Tab stop: `current`, else the chosen, else the last, else the first. */
export function rove(tray, current = null) {
  const slots = candidates(tray);
  const keep = (current && slots.includes(current) && current) ||
    slots.find((b) => b.getAttribute("aria-pressed") === "true") ||
    slots.find((b) => b.dataset.piece && b.dataset.piece === tray.dataset.roving) || slots[0] || null;
  for (const b of tray.querySelectorAll(".slot")) b.tabIndex = b === keep ? 0 : -1;
  if (keep) tray.dataset.roving = keep.dataset.piece || "";
}

function vertical(slots, from, down) {
  const r = from.getBoundingClientRect();
  let best = null, score = Infinity;
  for (const b of slots) {
    const q = b.getBoundingClientRect();
    const dy = down ? q.top - r.top : r.top - q.top;
    if (dy < r.height / 2) continue;  // the same row, or the wrong way
    const s = dy * 1000 + Math.abs(q.left - r.left);  // the nearest row first, then the nearest column
    if (s < score) [best, score] = [b, s];
  }
  return best;
}

/** Give `tray` its arrow keys (once; the tray's pieces may be drawn again and again). */
export function trayKeys(tray) {
  if (!tray || tray.dataset.keys) return;
  tray.dataset.keys = "1";
  tray.addEventListener("keydown", (e) => {
    const slots = candidates(tray);
    const at = slots.indexOf(document.activeElement);
    if (at < 0 || e.altKey || e.ctrlKey || e.metaKey) return;
    const n = slots.length;
    const next = {
      ArrowRight: () => slots[(at + 1) % n],
      ArrowLeft: () => slots[(at - 1 + n) % n],
      ArrowDown: () => vertical(slots, slots[at], true),
      ArrowUp: () => vertical(slots, slots[at], false),
      Home: () => slots[0],
      End: () => slots[n - 1],
    }[e.key];
    if (!next) return;
    e.preventDefault();
    e.stopPropagation();  // the page's own arrow keys (replay) are not for the tray
    const to = next();
    if (to) {
      rove(tray, to);
      to.focus();
    }
  });
  tray.addEventListener("focusin", (e) => {
    if (e.target.classList && e.target.classList.contains("slot")) rove(tray, e.target);
  });
}
