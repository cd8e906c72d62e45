// The end screen of a rated game: both players' rating change ("Alice 1500 → 1512 (+12)").  The
// server applies the update a moment after the game ends (web/accounts/ratings.py), so a "pending" answer
// is asked again a few times.  All text goes in through textContent.
import { renderNav, whoami } from "./account.js";
import { t } from "./i18n.js";

const WAIT_MS = 500;
const TRIES = 60;  // half a minute: the update is normally applied within a second

/** "+12", "−12" (a real minus sign), "±0". */
export function signed(n) {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0";
}

export class RatingChange {
  constructor(gameId, node) {
    this.id = gameId;
    this.node = node;
    this.state = "idle";  // "idle", "asking", "done"
  }

  /** The game is over and rated: fetch the change (again while the update is pending). */
  async gameOver() {
    if (this.state !== "idle") return;
    this.state = "asking";
    for (let i = 0; i < TRIES; i++) {
      let data = null;
      try {
        const r = await fetch(`/api/games/${encodeURIComponent(this.id)}/ratings`);
        if (r.ok) data = await r.json();
      } catch { /* the server is away a moment: ask again */ }
      if (data && data.status === "done") {
        this.show(data.players);
        this.state = "done";
        // the header's "name (rating)" shows the new rating at once, not after a reload (issue 34)
        whoami(true);
        renderNav();
        return;
      }
      if (data && (data.status === "unrated" || data.status === "none")) break;
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
    }
    this.state = "idle";  // a later state message may ask again
  }

  show(players) {
    this.node.replaceChildren();
    const head = document.createElement("b");
    head.textContent = `${t("Ratings:")} `;
    this.node.appendChild(head);
    players.forEach((p, k) => {
      const span = document.createElement("span");
      span.className = `rating-row ${p.side}`;
      span.dataset.side = p.side;
      span.textContent = `${p.username} ${p.before} → ${p.after} (${signed(p.change)})`;
      if (k) this.node.append(" · ");
      this.node.appendChild(span);
    });
    this.node.hidden = false;
  }
}
