// A tournament's chat (web/tournaments/chat.py, docs/web.md "Tournaments"): one room, read by
// anyone, written by accounts.  The tournament page calls refresh() with each of its reads (every
// 3 s), which asks only for the lines after the last one it has.  Nothing a user writes is HTML:
// every text goes in textContent.
import { postJSON } from "./account.js";
import { t } from "./i18n.js";

const MAX = 500;  // lines kept on the page (the server sends the latest 200 at first)

export class TournamentChat {
  /** root: the section's box; id: the tournament; loggedIn: whether this browser writes. */
  constructor(root, id, loggedIn) {
    this.id = id;
    this.loggedIn = loggedIn;
    this.seq = 0;
    this.messages = new Map();  // id -> line
    this.reported = new Set();
    this.busy = false;
    this.log = root.querySelector("#tc-log");
    this.list = root.querySelector("#tc-list");
    this.note = root.querySelector("#tc-note");
    this.form = root.querySelector("#tc-form");
    this.input = root.querySelector("#tc-input");
    this.input.placeholder = t("Write a message");
    root.querySelector("#tc-signin").hidden = loggedIn;
    this.form.hidden = !loggedIn;
    this.form.addEventListener("submit", (e) => { e.preventDefault(); this.say(); });
    this.render();
  }

  url(what = "") { return `/api/tournaments/${encodeURIComponent(this.id)}/chat${what}`; }

  /** Ask for the lines after the last one this page has. */
  async refresh() {
    if (this.busy) return;
    this.busy = true;
    try {
      const r = await fetch(this.url(`?after=${this.seq}`), { cache: "no-store" });
      if (!r.ok) return;
      const d = await r.json();
      for (const m of d.messages) this.messages.set(m.id, m);
      this.seq = Math.max(this.seq, d.seq);
      while (this.messages.size > MAX) this.messages.delete(this.messages.keys().next().value);
      if (d.messages.length) this.render();
    } catch { /* offline: the next read catches up */ } finally { this.busy = false; }
  }

  async say() {
    const text = this.input.value.trim();
    if (!text) return;
    this.note.textContent = "";
    const r = await postJSON(this.url(), { text });
    if (!r.ok) { this.note.textContent = r.data.message || t("Something went wrong."); return; }
    this.input.value = "";
    await this.refresh();
  }

  async report(m) {
    const r = await postJSON(this.url("/report"), { id: m.id });
    if (!r.ok) { this.note.textContent = r.data.message || t("Something went wrong."); return; }
    this.reported.add(m.id);
    this.note.textContent = t("Thank you: the message was reported to the administrators.");
    this.render();
  }

  render() {
    const atEnd = this.log.scrollTop + this.log.clientHeight >= this.log.scrollHeight - 8;
    const nodes = [...this.messages.values()].sort((a, b) => a.seq - b.seq).map((m) => {
      const li = document.createElement("li");
      li.className = "chat-msg";
      const who = document.createElement("span");
      who.className = "chat-author";
      who.textContent = m.author;  // text, never HTML
      const body = document.createElement("span");
      body.className = "chat-text";
      body.textContent = m.text;  // text, never HTML
      li.append(who, document.createTextNode(" "), body);
      if (this.loggedIn) {
        const report = document.createElement("button");
        report.type = "button";
        report.className = "chat-report";
        report.textContent = this.reported.has(m.id) ? t("Reported") : t("Report");
        report.disabled = this.reported.has(m.id);
        report.setAttribute("aria-label", t("Report the message of {name}", { name: m.author }));
        report.addEventListener("click", () => this.report(m));
        li.append(" ", report);
      }
      return li;
    });
    if (!nodes.length) {
      const li = document.createElement("li");
      li.className = "chat-empty";
      li.textContent = t("No messages yet.");
      nodes.push(li);
    }
    this.list.replaceChildren(...nodes);
    if (atEnd) this.log.scrollTop = this.log.scrollHeight;
  }
}
