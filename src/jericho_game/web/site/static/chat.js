// The game's chat (web/social/chat.py, docs/web.md "Chat"): a players' tab and a spectators' tab.
// While the game is played a player sees the players' tab only and a spectator the spectators'
// tab only; once it is over both are shown to everyone (the replay shows the messages up to the
// position on the board).  Nothing a user writes is HTML: every text goes in textContent.
import { whoami } from "./account.js";
import { t } from "./i18n.js";

const ROOMS = ["players", "spectators"];

export class ChatPanel {
  /** root: an empty element; send(msg): the game's WebSocket. */
  constructor(root, { send }) {
    this.root = root;
    this.send = send;
    this.role = "spectator";
    this.game = null;
    this.messages = new Map();  // id -> message
    this.reported = new Set();
    this.muted = false;
    this.enabled = false;
    this.tab = null;
    this.replayPly = null;
    this.account = null;  // whether this browser is logged in (null: not known yet)
    this.loggedIn = false;  // reports come from players and accounts (an anonymous watcher has no button)
    this.build();
    whoami().then((me) => { this.account = !!me.account; this.loggedIn = !!me.account; this.render(); });
  }

  build() {
    const el = (tag, props = {}, ...kids) => {
      const node = document.createElement(tag);
      Object.assign(node, props);
      for (const k of kids) node.append(k);
      return node;
    };
    this.title = el("h3", { id: "chat-title", textContent: t("Chat") });
    this.tabs = el("div", { className: "chat-tabs" });
    this.tabs.setAttribute("role", "tablist");
    this.tabs.setAttribute("aria-labelledby", "chat-title");
    this.tabButtons = {};
    const names = { players: t("Players"), spectators: t("Spectators") };
    for (const room of ROOMS) {
      const b = el("button", { type: "button", id: `chat-tab-${room}`, textContent: names[room] });
      b.setAttribute("role", "tab");
      b.setAttribute("aria-controls", "chat-log");
      b.addEventListener("click", () => this.select(room));
      b.addEventListener("keydown", (e) => {  // the tabs pattern: arrows move between tabs
        if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
        const shown = this.shownRooms();
        const next = shown[(shown.indexOf(room) + (e.key === "ArrowRight" ? 1 : shown.length - 1)) % shown.length];
        if (next && next !== room) { this.select(next); this.tabButtons[next].focus(); }
        e.preventDefault();
      });
      this.tabButtons[room] = b;
      this.tabs.append(b);
    }
    // the log is a box holding the list: an <ol role="log"> lost its list role, and its <li>
    // messages were items of no list (axe-core's serious "listitem", issue 52)
    this.log = el("div", { id: "chat-log", className: "chat-log", tabIndex: 0 });
    this.list = el("ol", { className: "chat-list" });
    this.log.append(this.list);
    this.log.setAttribute("role", "log");
    this.log.setAttribute("aria-live", "polite");
    this.log.setAttribute("aria-labelledby", "chat-title");
    this.note = el("p", { id: "chat-note", className: "chat-note" });
    this.input = el("input", { id: "chat-input", maxLength: 500, autocomplete: "off", enterKeyHint: "send" });
    this.input.setAttribute("aria-label", t("Chat message"));
    this.input.placeholder = t("Write a message");
    this.sendButton = el("button", { type: "submit", textContent: t("Send") });
    this.form = el("form", { id: "chat-form", className: "chat-form" }, this.input, this.sendButton);
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      const text = this.input.value.trim();
      if (!text || !this.tab) return;
      this.send({ type: "chat", room: this.tab, text });
    });
    this.mute = el("input", { type: "checkbox", id: "chat-mute" });
    this.mute.addEventListener("change", () => this.send({ type: "chat_mute", mute: this.mute.checked }));
    this.muteLabel = el("label", { className: "chat-mute" }, this.mute, " ", t("Mute my opponent's chat"));
    // a watcher without an account reads the spectators' chat but cannot write in it: the box says
    // so and is disabled (it looked writable, and a message was refused only once sent: issue 34)
    this.signin = el("p", { id: "chat-signin", className: "chat-signin" });
    const login = el("a", { id: "chat-login", textContent: t("Log in") });
    login.href = `/login?next=${encodeURIComponent(location.pathname)}`;
    this.signin.append(t("Sign in or play to chat."), " ", login);
    this.root.replaceChildren(this.title, this.tabs, this.log, this.note, this.signin, this.form, this.muteLabel);
  }

  /** The connection's role (welcome): ask for the chat as this reader may read it. */
  setRole(role) {
    this.role = role;
    this.send({ type: "chat_history" });
    this.render();
  }

  /** A new state of the game. */
  setGame(game) {
    const wasOver = this.game && this.game.status === "over";
    this.game = game;
    this.enabled = game.mode === "online";
    if (game.status === "over" && !wasOver && this.enabled) this.send({ type: "chat_history" });  // both rooms now
    this.render();
  }

  /** The replay's position (null: not replaying): show the messages written up to it. */
  setReplay(ply) {
    if (ply === this.replayPly) return;
    this.replayPly = ply;
    this.render();
  }

  /** A chat message of the server (chat, chat_history, chat_mute, chat_sent, chat_reported). */
  receive(msg) {
    if (msg.type === "chat") {
      this.messages.set(msg.id, msg);
    } else if (msg.type === "chat_history") {
      this.messages = new Map(msg.messages.map((m) => [m.id, m]));
      this.muted = !!msg.muted;
      if (msg.enabled === false) this.enabled = false;
    } else if (msg.type === "chat_mute") {
      this.muted = !!msg.mute;
    } else if (msg.type === "chat_sent") {
      this.input.value = "";
    } else if (msg.type === "chat_reported") {
      this.reported.add(msg.id);
      this.note.textContent = t("Thank you: the message was reported to the administrators.");
    }
    this.render();
  }

  seated() { return this.role === "south" || this.role === "north"; }

  over() { return !!this.game && this.game.status === "over"; }

  shownRooms() {
    if (this.over()) return ROOMS;
    return this.seated() ? ["players"] : ["spectators"];
  }

  select(room) {
    this.tab = room;
    this.render();
  }

  render() {
    this.root.hidden = !this.enabled || !this.game || this.role === "both";
    if (this.root.hidden) return;
    const shown = this.shownRooms();
    if (!shown.includes(this.tab)) this.tab = shown[0];
    for (const room of ROOMS) {
      const b = this.tabButtons[room];
      b.hidden = !shown.includes(room);
      b.setAttribute("aria-selected", String(room === this.tab));
      b.tabIndex = room === this.tab ? 0 : -1;
    }
    this.tabs.hidden = shown.length < 2;
    const writable = this.tab === "players" ? this.seated() : (!this.seated() || this.over());
    this.form.hidden = !writable || this.replayPly !== null;
    const anonymous = !this.seated() && this.account === false;
    this.signin.hidden = this.form.hidden || !anonymous;
    this.input.disabled = anonymous;
    this.sendButton.disabled = anonymous;
    this.input.placeholder = anonymous ? t("Sign in or play to chat") : t("Write a message");
    if (anonymous) this.input.setAttribute("aria-describedby", "chat-signin");
    else this.input.removeAttribute("aria-describedby");
    this.muteLabel.hidden = !this.seated();
    this.mute.checked = this.muted;
    const mine = this.seated() ? this.role : null;
    const items = [...this.messages.values()]
      .filter((m) => m.room === this.tab && (this.replayPly === null || m.ply <= this.replayPly))
      .sort((a, b) => a.seq - b.seq);
    const nodes = items.map((m) => {
      const li = document.createElement("li");
      li.className = "chat-msg";
      const who = document.createElement("span");
      who.className = "chat-author";
      who.textContent = m.author;  // text, never HTML
      const body = document.createElement("span");
      body.className = "chat-text";
      body.textContent = m.text;  // text, never HTML
      li.append(who, document.createTextNode(" "), body);
      if (this.replayPly !== null || this.over()) li.title = t("written at move {n}", { n: m.ply });
      const own = mine !== null && m.side === mine;
      if (!own && (this.seated() || this.loggedIn)) {
        const report = document.createElement("button");
        report.type = "button";
        report.className = "chat-report";
        report.textContent = this.reported.has(m.id) ? t("Reported") : t("Report");
        report.disabled = this.reported.has(m.id);
        report.setAttribute("aria-label", t("Report the message of {name}", { name: m.author }));
        report.addEventListener("click", () => this.send({ type: "chat_report", id: m.id }));
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
    const atBottom = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 40;
    this.list.replaceChildren(...nodes);
    if (atBottom) this.log.scrollTop = this.log.scrollHeight;
  }
}
