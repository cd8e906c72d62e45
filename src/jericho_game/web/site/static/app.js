// Jericho web client: home page (new game) and the game page.  The server decides
// everything; this module shows the state it sends and sends the player's intentions.
import { Board, COLOUR_NAME, drawPiece, describeTower, describePreview, drawZoom } from "./board.js";
import { initContrast } from "./contrast.js";
import { changeHeaders, postJSON, whoami } from "./account.js";
import { formatNumber, t } from "./i18n.js";
import { renderEndings } from "./endings.js";
import { ChatPanel } from "./chat.js";
import { startLobby } from "./lobby.js";
import { nameForm, storedName } from "./names.js";
import { ReviewPanel } from "./review.js";
import { moveLabel } from "./notation.js";
import { WireCopy } from "./delta.js";
import { RatingChange } from "./ratingchange.js";
import { premoveAllowed, premoveFate } from "./premove.js";
import { Notices, mountInvite, mountSwitches } from "./notify.js";
import { deadlineText, perMoveText, startYourTurn, timeLeft } from "./yourturn.js";
import { announce, moveWords } from "./announce.js";
import { reasonText } from "./reasons.js";
import { levelName } from "./levels.js";
import { rove, trayKeys } from "./traykeys.js";

initContrast();

const $ = (id) => document.getElementById(id);
const SIDE_NAME = { south: t("South"), north: t("North") };
// the board's alignment kinds (boards/standard.json), in the page's language (issue 34: "falling diagonal" was left in English)
const KIND = { vertical: t("column"), "rising diagonal": t("rising diagonal"), "falling diagonal": t("falling diagonal") };
const COLOURS = ["R", "Y", "G", "B", "W"];

const S = {
  id: null, token: null, role: "spectator", game: null, topo: null, board: null, ws: null,
  selected: null, hoverAlign: null, stickyAlign: null, replay: null, retry: 0, clockAt: 0,
  flipped: null, resignArmed: null, closed: false, pending: null, preview: null, previewCell: null,
  firstMoveSaid: null,  // the game and ply whose first-move countdown was read out (issue 52)
};

// What each AI level is like: one line each (strength from docs/ai.md's arena, think time measured there).
const LEVELS = {
  easy: t("New to the game: grabs the most monoliths it can right now."),
  casual: t("A step up from easy: looks a little ahead, still misses a lot."),
  medium: t("A fair opponent that looks a few moves ahead."),
  hard: t("Good: reads further ahead. Answers in about a second."),
  strong: t("The first step above hard: the expert's search, looking at a hundred lines. About 1 s a move."),
  advanced: t("The expert's search, two and a half times longer than strong. About 1 s a move."),
  skilled: t("The expert's search, three times longer than advanced. About 1 s a move."),
  veteran: t("The expert's search, three times longer than skilled. About 1 s a move."),
  challenger: t("The expert's search, three times longer than veteran. About 1 s a move."),
  elite: t("The expert as it played before its trained network: the step between challenger and expert. About 1 s a move."),
  expert: t("Very strong: its search has a trained network that judges positions. About 1 s a move."),
  master: t("The strongest: thinks longest, about 2.5 s a move, never more than 3 s."),
};
const RESEARCH = {
  random: t("Random legal moves (a baseline for testing)."),
  greedy: t("Greedy: best immediate monolith count (what easy plays)."),
  mcts: t("Monte Carlo tree search with its default budget."),
  alphabeta: t("Alpha-beta search with its default depth."),
  "mcts-py": t("The pure-Python Monte Carlo search (the expert of the pure-Python era)."),
  "alphabeta-py": t("The pure-Python alpha-beta search."),
};

const store = {
  get(key) { try { return localStorage.getItem(key); } catch { return null; } },
  set(key, v) { try { localStorage.setItem(key, v); } catch { /* private mode */ } },
};

/** Show a message in the toast (it floats: nothing moves). It goes when the game moves on,
 * when the player acts again, or after a few seconds. */
function say(text, kind = "error") {
  const m = $("message");
  m.textContent = text || "";
  m.className = `message ${kind}`;
  clearTimeout(say.t);
  if (text) say.t = setTimeout(() => { if (m.textContent === text) m.textContent = ""; }, 6000);
}

// ---------------------------------------------------------------- home page
async function startHome() {
  $("home").hidden = false;
  $("skip").hidden = true;  // there is no tray to skip to
  const form = $("new-game");
  // The form starts a game only once the account and the levels are known (below); a "Start game"
  // before then is held, not sent by the browser itself (that reloaded the page with the choices
  // in its address), and goes through as soon as the page is ready.
  let held = false;
  const hold = (e) => { e.preventDefault(); held = true; $("start").disabled = true; };
  form.addEventListener("submit", hold);
  const saveName = nameForm($("name-form"), $("name-input"), $("name-note"));
  // an account holder plays under the account's name: no second name to choose (issue 24)
  const me = await whoami();
  if (me.account) {
    for (const part of $("name-form").querySelectorAll("label, .row")) part.hidden = true;
    $("name-note").textContent = t("You play under your account's name, “{name}”.", { name: me.account.username });
  }
  startLobby((text) => { $("lobby-error").textContent = text; });
  startYourTurn($("your-turn"));  // every game waiting for this player's move (yourturn.js)
  fetch("/api/topology").then((r) => r.json()).then((topo) => {
    // a decorative position: the worked example of the rules, and a few more towers
    const b = new Board($("home-board"), topo, { onCell() {}, onAlignment() {}, onCellInfo() {} }, { interactive: false });
    b.build();
    b.render({
      towers: { d2: ["5R"], d3: ["1G", "2Y"], b2: ["2W", "4B", "5G"], f3: ["3R", "4Y"], a3: ["5B"], e1: ["1Y", "3G"],
        g4: ["4W", "2R", "1B", "3Y"], c2: ["3W"], c3: ["2B"], e4: ["4R", "5W"] },
      leaders: { d: "north", "a1-g4": "south", c: "south", e: "north" },
      last: "2Y@d3",
    });
  }).catch(() => {});
  try {
    const data = await (await fetch("/api/levels")).json();
    for (const name of data.levels) {
      const main = name in LEVELS;  // anything else (research players, plug-ins) under the fold
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = "radio";
      input.name = "level";
      input.value = name;
      input.checked = name === data.default;
      const b = document.createElement("b");
      b.textContent = levelName(name);
      const small = document.createElement("small");
      small.textContent = LEVELS[name] || RESEARCH[name] || t("A research player.");
      label.append(input, b);
      const elo = data.elo && data.elo[name];  // ai/levels.py LADDER, measured in docs/ai.md
      if (elo) {
        const rating = document.createElement("span");
        rating.className = "level-elo";
        const about = t("about {elo}", { elo: formatNumber(elo) });
        rating.textContent = ` (${about})`;
        label.append(rating);
      }
      label.append(small);
      $(main ? "levels-main" : "levels-research").appendChild(label);
    }
    // The ladder is a compact grid: what the checked level is, said once under it.
    const about = () => {
      const checked = $("levels-main").querySelector("input:checked");
      const small = checked && checked.parentElement.querySelector("small");
      $("level-about").textContent = small ? small.textContent : "";
    };
    $("levels-main").addEventListener("change", about);
    about();
  } catch {
    $("home-error").textContent = t("Could not reach the server.");
  }
  const sync = () => {
    const mode = form.elements.mode.value;
    $("level-field").hidden = mode !== "ai";
    $("side-field").hidden = mode === "hotseat";
    $("online-field").hidden = mode !== "online";
    // correspondence (days per move) is for online games only
    const days = $("per-move-days");
    days.hidden = days.disabled = mode !== "online";
    if (mode !== "online" && form.elements.clock.value.startsWith("d")) form.elements.clock.value = "";
    whoami().then((me) => { $("rated-field").hidden = !(mode === "online" && me.account); });
  };
  form.addEventListener("change", sync);
  sync();
  form.removeEventListener("submit", hold);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    $("start").disabled = true;
    const mode = form.elements.mode.value;
    const body = { mode, side: form.elements.side.value };
    if (mode === "ai") body.level = form.elements.level.value;
    if (mode === "online" && form.elements.public.value) body.public = true;
    if (body.public && !me.account) {
      const r = saveName();
      if (!r.name) {
        $("home-error").textContent = `${t("Choose your name first: the lobby shows it.")} ${r.error || ""}`;
        $("name-input").focus();
        $("start").disabled = false;
        return;
      }
    }
    if (mode !== "hotseat" && storedName() && !me.account) body.name = storedName();
    Object.assign(body, clockChoice(form.elements.clock.value));
    if (mode === "online" && !$("rated-field").hidden && form.elements.rated.checked) body.rated = true;
    try {
      const r = await fetch("/api/games", { method: "POST", headers: await changeHeaders(),
        body: JSON.stringify(body) });
      const data = await r.json();
      if (!r.ok) throw new Error(data.message || r.statusText);
      store.set(`jericho:seat:${data.id}`, data.token);
      if (data.invite) store.set(`jericho:invite:${data.id}`, data.invite);
      location.href = `/g/${data.id}`;
    } catch (err) {
      $("home-error").textContent = t("Could not start the game: {why}", { why: err.message });
      $("start").disabled = false;
    }
  });
  if (held) {
    $("start").disabled = false;
    form.requestSubmit($("start"));
  }
}

/** The clock select's value as POST /api/games fields: "10" (minutes each), "5+3" (minutes each +
 * seconds added per move: a Fischer increment) or "d3" (a correspondence game: days per move). */
function clockChoice(value) {
  if (!value) return {};
  if (value.startsWith("d")) return { per_move_days: Number(value.slice(1)) };
  const [minutes, increment] = value.split("+").map(Number);
  return increment ? { clock: minutes, increment } : { clock: minutes };
}

// ---------------------------------------------------------------- game page
async function startGame(id) {
  S.id = id;
  try {
    const r = await fetch(`/api/games/${encodeURIComponent(id)}`);
    if (r.status === 404) { showMissing(); return; }
  } catch { /* the socket will say the server is unreachable */ }
  $("play").hidden = false;
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("seat")) store.set(`jericho:seat:${id}`, hash.get("seat"));
  if (hash.get("invite") && !store.get(`jericho:seat:${id}`)) {
    try {
      const r = await fetch(`/api/games/${id}/join`, { method: "POST", headers: await changeHeaders(),
        body: JSON.stringify({ invite: hash.get("invite"), name: storedName() || undefined }) });
      const data = await r.json();
      if (r.ok) store.set(`jericho:seat:${id}`, data.token);
      else say(`${String(data.message).replace(/[.\s]+$/, "")}.`, "note");  // one full stop, not ".."
    } catch {
      say(t("Could not join: the server is unreachable."));
    }
  }
  // #ply=N opens the replay at that position (the address of a position: see render)
  const askedPly = /^\d{1,4}$/.test(hash.get("ply") || "") ? Number(hash.get("ply")) : null;
  if (location.hash) history.replaceState(null, "", `/g/${id}`);
  S.token = store.get(`jericho:seat:${id}`);
  $("btn-record").href = `/api/games/${id}/record`;
  try {
    S.topo = await (await fetch("/api/topology")).json();
  } catch {
    say(t("Could not load the board from the server."));
    return;
  }
  S.board = new Board($("board"), S.topo, {
    onCell: clickCell,
    onAlignment: (name, sticky) => {
      if (sticky) S.stickyAlign = S.stickyAlign === name ? null : name;
      S.hoverAlign = name || S.stickyAlign;
      render();
    },
    onCellInfo: (cell) => showCellInfo(cell),
  });
  S.board.build();
  wireControls();
  // game review (review.js): stepping to a ply goes through the replay
  S.review = new ReviewPanel(id, {
    onStep: (ply) => (S.replay ? (S.replay.i = ply, render()) : enterReplay(ply)),
    say,
    onChange: () => render(),
    // the AI's line of a key moment, on the board until closed (review.js steps through it)
    onLine: (frame) => { S.lineFrame = frame; render(); },
  });
  S.ratings = new RatingChange(id, $("rating-change"));
  S.chat = new ChatPanel($("chat"), { send });  // the players' and the spectators' chat (chat.js)
  // notices, sound and browser notifications of this game (notify.js), and their switches
  S.notices = new Notices(id);
  mountSwitches($("notify-switches"));
  S.askedPly = askedPly;
  connect();
  setInterval(tickClocks, 250);
}

/** An unknown game: say so, and show no board and no game controls. */
function showMissing() {
  S.closed = true;
  if (S.ws) S.ws.close();
  $("play").hidden = true;
  $("missing").hidden = false;
  $("skip").hidden = true;
  document.title = `Jericho · ${t("no game here")}`;
}

function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  // protocol 2: after the first whole state, each change comes as a delta (static/delta.js)
  const ws = new WebSocket(`${proto}://${location.host}/ws/${S.id}?proto=2`);
  S.ws = ws;
  const copy = new WireCopy((m) => ws.send(JSON.stringify(m)));
  // The server greets every socket as a spectator and sends it the game at once; a page that says
  // hello holds that welcome and the states until the answer to its hello ("hello": true), and
  // draws the game then, with its seat.  Drawn at once, a player saw for a round trip the spectator's
  // page: small trays, the chat first, "you are watching · 1 watching" (its own socket), and on a
  // phone a score bar one line taller, the board lower (the banner test's jump under load).
  const greeting = { on: true, welcome: null, state: null };
  const greeted = () => {
    if (!greeting.on || S.ws !== ws) return;
    greeting.on = false;
    if (greeting.welcome) onServerMessage(greeting.welcome);
    if (greeting.state) onServerMessage(greeting.state);
  };
  ws.onopen = async () => {
    S.retry = 0;
    $("conn").hidden = true;
    const name = storedName() || undefined;
    if (S.token) {
      ws.send(JSON.stringify({ type: "hello", token: S.token, name }));
    } else {
      // a logged-in player's own seats open by their session, from any browser (web/accounts/accounts.py)
      const me = await whoami();
      if (me.account) ws.send(JSON.stringify({ type: "hello", name }));
      else greeted();  // no hello: a spectator, as the server said
    }
    setTimeout(greeted, 5000);  // never a blank page for want of an answer
  };
  ws.onmessage = (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch { return; }
    if (msg.type === "state" || msg.type === "delta") {
      msg = copy.feed(msg);  // a delta becomes the state it leads to
      if (msg === null) return;  // a gap: the whole state was asked for
    }
    if (greeting.on && S.ws === ws) {
      if (msg.type === "state") { greeting.state = msg; return; }  // the latest one is drawn
      if (msg.type === "welcome" && !msg.hello) { greeting.welcome = msg; return; }
      if (msg.type === "welcome") {
        greeting.welcome = msg;  // the hello's answer: the seat, then the game
        greeted();
        return;
      }
      if (msg.type === "error") greeted();  // the hello refused: the game as a spectator, then why
    }
    onServerMessage(msg);
  };
  ws.onclose = () => {
    if (S.closed) return;
    const wait = Math.min(5000, 400 * 2 ** S.retry++);
    $("conn").hidden = false;
    $("conn").textContent = t("Connection lost: reconnecting…");
    setTimeout(connect, wait);
  };
}

/** One message of the server (connect() holds the first ones until the answer to its hello). */
function onServerMessage(msg) {
  if (msg.type === "state") {
    if (S.notices) S.notices.update(S.game, msg.game, mySides());
    const moved = !S.game || S.game.ply !== msg.game.ply || S.game.status !== msg.game.status;
    const before = S.game;
    announce($("move-live"), moveWords(S.game, msg.game));  // every move, whoever played it, once
    S.game = msg.game;
    S.clockAt = performance.now();
    if (moved) {
      S.pending = null;
      // a message about the previous position is stale now
      if ($("message").textContent) say("");
      closeZoom();
    }
    if (msg.game.status === "over" && S.review) S.review.gameOver();
    if (msg.game.status === "over" && msg.game.rated && S.ratings) S.ratings.gameOver();
    if (S.chat) S.chat.setGame(msg.game);
    render();
    if ((S.premove || S.preselect) && myTurn()) playPremove();
    sayAnswer(before, msg.game);
    if (S.askedPly !== null && S.askedPly !== undefined) { enterReplay(S.askedPly); S.askedPly = null; }
    loadPreview();
  } else if (msg.type === "welcome") {
    S.role = msg.role;
    if (S.chat) S.chat.setRole(msg.role);
    if (S.flipped === null) S.board.setFlip(msg.role === "north");
    render();
  } else if (msg.type === "error") {
    S.pending = null;
    if (msg.code === "unknown_game") { showMissing(); return; }
    // refused for room (fair share): retry slowly rather than at once, the socket closes next
    if (msg.code === "full" || msg.code === "too_many_connections") S.retry = Math.max(S.retry, 4);
    if (msg.game) {  // moved_on: the game changed meanwhile; show it as it is now
      announce($("move-live"), moveWords(S.game, msg.game));
      S.game = msg.game;
      S.clockAt = performance.now();
      render();
    }
    const text = msg.message.charAt(0).toUpperCase() + msg.message.slice(1);
    say(/[.!?]$/.test(text) ? text : `${text}.`);
  } else if (msg.type === "ack") {
    S.selected = null;
    S.backToTray = document.activeElement && document.activeElement.closest &&
      !!document.activeElement.closest("#board");
  } else if (msg.type.startsWith("chat")) {  // chat, chat_history, chat_mute, chat_sent, ...
    if (S.chat) S.chat.receive(msg);
  } else if (msg.type === "review") {
    if (S.review) S.review.update(msg.review);
  } else if (msg.type === "rematch") {
    if (S.token) store.set(`jericho:seat:${msg.id}`, S.token);
    location.href = `/g/${msg.id}`;
  }
}

function send(msg) {
  if (!S.ws || S.ws.readyState !== WebSocket.OPEN) {
    say(t("Not connected to the server yet: try again in a moment."));
    return;
  }
  S.ws.send(JSON.stringify(msg));
}

function mySides() {
  if (S.role === "both") return ["south", "north"];
  if (S.role === "south" || S.role === "north") return [S.role];
  return [];
}

function myTurn() {
  const g = S.game;
  return !!g && g.status === "playing" && mySides().includes(g.turn) && !S.replay;
}

// ---------------------------------------------------------------- interaction
function clickCell(cell, event) {
  if (!S.game) return;
  if (S.premove) { cancelPremove(); return; }  // a click on the board cancels the queued move
  if (S.preselect && premoveAllowed(S.game, mySides(), !!S.replay)) {
    S.premove = `${S.preselect}@${cell}`;  // queued, shown, never sent before the turn
    S.preselect = null;
    render();
    return;
  }
  // the second click of a double click may land after the move: it must not open the zoom either
  if (event && event.detail > 1) return;
  const view = currentView();
  if (!S.selected || S.replay) {
    showCellInfo(cell, true);
    if (view && (view.towers[cell] || []).length) openZoom(cell);
    else if (myTurn()) say(t("Pick a piece from your tray first, then a highlighted cell."), "note");
    return;
  }
  // one move per position: a double click (or a second tap while the first is on its way)
  // must not send the move twice and earn a "the game moved on" error
  if (S.pending === S.game.ply) return;
  S.pending = S.game.ply;
  send({ type: "move", move: `${S.selected}@${cell}`, ply: S.game.ply });
}

function openZoom(cell) {
  const view = currentView();
  const tower = view.towers[cell] || [];
  const c = S.topo.cells.find((x) => x.name === cell);
  $("zoom-title").textContent = tower.length === 1 ?
    t("{cell}: 1 piece, {side}'s camp", { cell, side: SIDE_NAME[c.camp] }) :
    t("{cell}: {n} pieces, {side}'s camp", { cell, n: tower.length, side: SIDE_NAME[c.camp] });
  drawZoom($("zoom-svg"), tower);
  const list = $("zoom-list");
  list.replaceChildren();
  tower.forEach((p, i) => {
    const li = document.createElement("li");
    const where = i === 0 ? t("bottom: ") : i === tower.length - 1 ? t("top: ") : "";
    li.textContent = `${where}${pieceWords(p)} (${p})`;
    list.appendChild(li);
  });
  const aligns = S.topo.alignments.filter((a) => a.cells.includes(cell)).map((a) => {
    const who = view.leaders[a.name];
    return `${a.name} (${who ? t("{side} leads", { side: SIDE_NAME[who] }) : t("nobody leads")})`;
  });
  const and = t(" and ");
  $("zoom-extra").textContent = t("Pieces listed bottom to top. On {alignments}.", { alignments: aligns.join(and) });
  if (!$("zoom").open) $("zoom").showModal();
}

function closeZoom() {
  if ($("zoom").open) $("zoom").close();
}

/** Why the player cannot pick ``piece`` now, or "" when they can (a refused choice is explained). */
function whyNotPiece(piece) {
  const g = S.game;
  if (!g) return t("The game is still loading.");
  if (S.replay) return t("This is a replay: press Back to game to play.");
  if (!mySides().length) return t("You are watching this game: only its players can move.");
  if (g.status === "over") return t("The game is over.");
  if (g.status === "waiting") return t("Your opponent has not joined yet: send them the invite link.");
  if (!myTurn()) return t("It is {side}'s turn, not yours.", { side: SIDE_NAME[g.turn] });
  if (!(g.legal[piece] || []).length) {
    return t("{piece} ({words}) fits nowhere this turn: every tower it could join already holds " +
      "a piece of its size or colour, or is full, or the asymmetry rule forbids the copy. Choose another piece.",
    { piece, words: pieceWords(piece) });
  }
  return "";
}

function selectPiece(piece, byKeyboard = false) {
  const g = S.game;
  if (premoveAllowed(g, mySides(), !!S.replay) && g.reserves[mySides()[0]].includes(piece)) {
    // the opponent is to move: the piece of a premove (premove.js); the same piece again cancels it
    if (S.premove && S.premove.startsWith(`${piece}@`)) { cancelPremove(); return; }
    S.premove = null;
    S.preselect = S.preselect === piece ? null : piece;
    say("");
    render();
    if (S.preselect) S.board.bringIntoView();
    return;
  }
  const why = whyNotPiece(piece);
  if (why) {
    say(why, "note");
    return;
  }
  S.selected = S.selected === piece ? null : piece;
  S.previewCell = null;
  say("");
  render();
  if (S.selected) {
    const n = (S.game.legal[piece] || []).length;
    if (byKeyboard && n) S.board.focusCell(S.game.legal[piece][0]);
    else S.board.bringIntoView();  // scrolled down to the tray (a phone): the board back in sight
    $("info").textContent = (n === 1 ? t("{piece} ({words}): 1 cell highlighted.", { piece, words: pieceWords(piece) }) :
      t("{piece} ({words}): {n} cells highlighted.", { piece, words: pieceWords(piece), n })) + " " +
      t("A badge on a cell shows how the move changes your lead in monoliths (+1: one more for you).");
  }
}

/** Drop the queued move (a click on the board, Escape, its piece chosen again). */
function cancelPremove() {
  const had = S.premove;
  S.premove = S.preselect = null;
  if (had) say(t("Premove {move} cancelled.", { move: had }), "note");
  render();
}

/** The turn has come: play the queued move if it is legal now, else drop it with a word; a piece
 * chosen without its cell becomes the selection. */
function playPremove() {
  const move = S.premove, piece = S.preselect;
  S.premove = S.preselect = null;
  if (piece) {
    if ((S.game.legal[piece] || []).length) S.selected = piece;
  } else if (premoveFate(S.game, move) === "play") {
    S.pending = S.game.ply;
    send({ type: "move", move, ply: S.game.ply });
  } else {
    say(t("Premove {move} dropped: it is not legal in this position.", { move }), "note");
  }
  render();
}

function pieceWords(p) {
  return t("size {size}, {colour}", { size: p[0], colour: COLOUR_NAME[p[1]] });
}

function showCellInfo(cell, sticky = false) {
  if (S.selected && !S.replay) {
    // with a piece in hand, a cell under the pointer or the focus previews the move there
    S.previewCell = cell;
    render();
    return;
  }
  if (!cell) {
    if (!sticky) render();
    return;
  }
  const view = currentView();
  if (!view) return;
  const c = S.topo.cells.find((x) => x.name === cell);
  const aligns = S.topo.alignments.filter((a) => a.cells.includes(cell)).map((a) => a.name);
  $("info").textContent = t("{tower}. Alignments: {list}.",
    { tower: describeTower(cell, view.towers[cell], c.camp), list: aligns.join(", ") });
}

function wireControls() {
  $("btn-undo").onclick = () => send({ type: "undo" });
  $("btn-pass").onclick = () => send({ type: "move", move: "pass", ply: S.game.ply });
  $("btn-berserk").onclick = berserk;  // a tournament's game (issue 52)
  $("btn-tpause").onclick = tournamentPause;
  $("btn-rematch").onclick = () => {
    // a spectator follows the players to their rematch; a player asks for it (or joins it)
    if (!mySides().length && S.game && S.game.rematch_id) location.href = `/g/${S.game.rematch_id}`;
    else send({ type: "rematch" });
  };
  $("btn-resign").onclick = () => {
    const b = $("btn-resign");
    if (S.resignArmed) {
      clearTimeout(S.resignArmed);
      S.resignArmed = null;
      b.textContent = t("Resign");
      send({ type: "resign" });
      return;
    }
    b.textContent = t("Really resign?");
    b.classList.add("armed");
    S.resignArmed = setTimeout(() => { S.resignArmed = null; b.textContent = t("Resign"); b.classList.remove("armed"); }, 4000);
  };
  $("skip").onclick = (e) => {
    e.preventDefault();
    const slot = document.querySelector("#tray-mine .slot.playable") || $("tray-mine");
    slot.focus();
  };
  $("btn-flip").onclick = () => { S.flipped = !S.board.flip; S.board.setFlip(S.flipped); render(); };
  $("btn-replay").onclick = () => enterReplay(null);
  $("rp-first").onclick = () => stepReplay(-Infinity);
  $("rp-prev").onclick = () => stepReplay(-1);
  $("rp-next").onclick = () => stepReplay(1);
  $("rp-last").onclick = () => stepReplay(Infinity);
  $("rp-exit").onclick = () => { closeLine(); S.replay = null; render(); };
  $("typed").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("typed-move").value.trim();
    if (!text) return;
    send({ type: "move", move: text, ply: S.game ? S.game.ply : undefined });
    $("typed-move").value = "";
  });
  document.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "INPUT") return;
    if (e.key === "Escape") {
      if (S.premove || S.preselect) cancelPremove();
      S.selected = null; S.stickyAlign = null; S.previewCell = null; render();
    }
    if (S.lineFrame && S.review && S.review.line && (e.key === "ArrowLeft" || e.key === "ArrowRight")) {
      S.review.stepLine(S.review.line.i + (e.key === "ArrowLeft" ? -1 : 1));  // stepping through the AI's line
      return;
    }
    if (S.replay && e.key === "ArrowLeft") stepReplay(-1);
    if (S.replay && e.key === "ArrowRight") stepReplay(1);
  });
}

async function enterReplay(ply) {
  try {
    const data = await (await fetch(`/api/games/${S.id}/replay`)).json();
    const last = data.frames.length - 1;
    // at the final position (it opened at move 0: issue 24), or at the ply asked for
    S.replay = { frames: data.frames, i: ply === null ? last : Math.max(0, Math.min(last, ply)) };
    S.selected = null;
    render();
  } catch {
    say(t("Could not load the replay."));
  }
}

/** Back from the AI's line to the game's position. */
function closeLine() {
  if (S.review) S.review.closeLine();
  S.lineFrame = null;
}

function stepReplay(d) {
  if (!S.replay) return;
  closeLine();
  const last = S.replay.frames.length - 1;
  S.replay.i = Math.max(0, Math.min(last, S.replay.i + d));
  render();
}

// ---------------------------------------------------------------- rendering
function currentView() {
  if (S.lineFrame) {  // a frame of the AI's line (review.js)
    const f = S.lineFrame;
    return { towers: f.towers, leaders: f.leaders, last: f.move, score: f.score };
  }
  if (S.replay) {
    const f = S.replay.frames[S.replay.i];
    return { towers: f.towers, leaders: f.leaders, last: f.move, score: f.score };
  }
  if (!S.game) return null;
  return { towers: S.game.towers, leaders: S.game.leaders, last: S.game.last, score: S.game.score };
}

/** The replay's position in words: "16... 5Y@c3" (the move just played), or "start". */
function replayWhere() {
  const i = S.replay.i;
  return i ? `${moveLabel(i)} ${S.replay.frames[i].move}` : t("start");
}

function seatLabel(side) {
  const g = S.game;
  const seat = g.seats[side];
  if (seat.kind === "ai") return `${t("AI")} · ${levelName(seat.level)}`;
  const account = g.accounts && g.accounts[side];
  const name = account || (g.names && g.names[side]);  // an account's username, else the chosen name
  if (mySides().includes(side) && S.role !== "both") return name ? t("You ({name})", { name }) : t("You");
  if (account) return account;
  if (seat.kind === "open") return t("open seat");
  return name || SIDE_NAME[side];
}

/** The requester hears the opponent's answer to their offer: a declined draw, an accepted or a
 * declined takeback (an accepted draw ends the game: the banner says it). */
function sayAnswer(before, g) {
  const asked = before && before.offer;
  const a = g.answer;
  if (!asked || g.offer || !a || a.ply !== asked.ply || a.what !== asked.what || a.by === asked.by) return;
  if (S.role === "both" || !mySides().includes(asked.by)) return;
  const name = sideName(a.by);
  let text = null;
  if (a.what === "takeback") {
    text = a.accepted ? t("{name} accepted your takeback request: your last move is taken back.", { name }) :
      t("{name} declined your takeback request.", { name });
  } else if (!a.accepted) {
    text = t("{name} declined your draw offer.", { name });
  }
  if (text) say(text, "note");
}

/** A side as players read it: the player's name when it has one. */
function sideName(side) {
  const name = S.game && S.game.names && S.game.names[side];
  return name ? `${name} (${SIDE_NAME[side]})` : SIDE_NAME[side];
}

function resultText(g) {
  const [s, n] = g.score;
  if (g.reason === "aborted" && g.no_start) {
    return t("Game aborted: {side} did not make a first move in time (no result).", { side: sideName(g.no_start) });
  }
  if (g.reason === "aborted") return t("Game aborted: no result.");
  if (g.reason === "expired") return t("Nobody joined in time: the game was withdrawn (no result).");
  if (g.result === "draw" && g.reason === "agreed") return t("Draw agreed.");
  if (g.result === "draw" && g.reason === "claim") return t("Draw claimed: the opponent left the game.");
  if (g.result === "draw") return t("Draw: both players passed with {n} monoliths each.", { n: s });
  // a player reads about themselves; spectators and hot-seat players read side names
  const me = S.role === "south" || S.role === "north" ? S.role : null;
  const loser = g.result === "south" ? "north" : "south";
  // whole sentences for "you" and for a side: the grammar differs (and in French too)
  const won = g.result === me, lost = loser === me;
  const w = SIDE_NAME[g.result], l = SIDE_NAME[loser];
  const held = t("{a} to {b}", { a: Math.max(s, n), b: Math.min(s, n) });
  const why = {
    seven: won ? t("you held 7 monoliths through a full turn") : t("{w} held 7 monoliths through a full turn", { w }),
    exhaustion: won ? t("both players passed; you hold more monoliths ({held})", { held }) :
      t("both players passed; {w} holds more monoliths ({held})", { w, held }),
    resign: lost ? t("you resigned") : t("{l} resigned", { l }),
    time: lost ? t("you ran out of time") : t("{l} ran out of time", { l }),
    claim: lost ? t("you left the game and {w} claimed the win", { w }) :
      won ? t("{l} left the game and you claimed the win", { l }) : t("{l} left the game and {w} claimed the win", { l, w }),
  }[g.reason] || "";
  const head = !me ? t("{side} wins", { side: sideName(g.result) }) : won ? t("You won") : t("You lost");
  const text = why ? t("{head}: {why}.", { head, why }) : `${head}.`;
  return text.replace(": you ", ": You ");
}

/** Fetch what each placement would change (the move preview) for the position on the board. */
async function loadPreview() {
  const g = S.game;
  if (!g || g.status !== "playing" || !myTurn()) return;
  if (S.preview && S.preview.ply === g.ply && S.preview.id === g.id) return;
  const ply = g.ply;
  try {
    const r = await fetch("/api/preview", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ moves: g.moves }) });
    if (!r.ok) return;
    const data = await r.json();
    if (S.game && S.game.ply === ply) {
      S.preview = { id: g.id, ply, effects: data.effects };
      render();
    }
  } catch { /* no preview: the move still works */ }
}

/** Per legal cell of the selected piece: {mine, theirs, changes, words}, and the lines that
 * would change hands if the piece went on S.previewCell. */
function previewFor(piece, mover) {
  const g = S.game;
  if (!piece || !S.preview || S.preview.ply !== g.ply) return { cells: null, lines: null };
  const effects = S.preview.effects[piece[0]] || {};
  const cells = {};
  for (const cell of g.legal[piece] || []) cells[cell] = describePreview(effects[cell] || [], mover, SIDE_NAME);
  let lines = null;
  if (S.previewCell && cells[S.previewCell]) {
    lines = {};
    for (const [a, , now] of effects[S.previewCell] || []) lines[a] = now;
  }
  return { cells, lines };
}

// An AI move is queued for a moment even when a worker is free: the queue is mentioned only after
// this long in it (it flashed before every AI move: issue 24), "AI is thinking…" until then.
const AI_WAIT_SHOWN_AFTER_MS = 2000;

/** Whether the AI's current move has been waiting in the queue long enough to say so. */
function aiWaited(g) {
  const key = `${g.id}:${g.version}`;
  if (!S.aiQueued || S.aiQueued.key !== key) {
    S.aiQueued = { key, at: performance.now() };
    setTimeout(() => { if (S.aiQueued && S.aiQueued.key === key) render(); }, AI_WAIT_SHOWN_AFTER_MS + 50);
  }
  return performance.now() - S.aiQueued.at >= AI_WAIT_SHOWN_AFTER_MS;
}

function render() {
  const g = S.game;
  if (!g || !S.board) return;
  const view = currentView();
  if (S.chat) S.chat.setReplay(S.replay ? S.replay.i : null);  // the chat up to the replayed move
  // score bar
  $("score-south").textContent = view.score[0];
  $("score-north").textContent = view.score[1];
  $("south-name").textContent = seatLabel("south");
  $("north-name").textContent = seatLabel("north");
  $("south-panel").classList.toggle("to-move", g.status === "playing" && g.turn === "south");
  $("north-panel").classList.toggle("to-move", g.status === "playing" && g.turn === "north");
  for (const side of ["south", "north"]) {
    $(`${side}-panel`).classList.toggle("away", g.seats[side].kind === "human" && !g.seats[side].present);
  }
  let turn;
  if (S.lineFrame) turn = t("The AI's line");
  else if (S.replay) turn = t("Replay · {where}", { where: replayWhere() });
  else if (g.status === "over") turn = t("Game over");
  else if (g.status === "waiting") turn = t("Waiting for opponent");
  else if (g.ai && g.ai.status === "queued" && g.seats[g.turn].kind === "ai" && aiWaited(g)) {
    turn = t("AI is waiting for a free worker (place {n} in the queue)…", { n: g.ai.position });
  }
  else if ((g.ai_thinking || (g.ai && g.ai.status === "queued")) && g.seats[g.turn].kind === "ai") {
    turn = t("AI is thinking…");
  }
  else if (myTurn()) turn = S.role === "both" ? t("{side} to move", { side: SIDE_NAME[g.turn] }) : t("Your move");
  else turn = t("{side} to move", { side: SIDE_NAME[g.turn] });
  $("turn").textContent = turn;
  const off = 13 - view.score[0] - view.score[1];
  const small = document.createElement("small");
  small.textContent = (off === 1 ? t("1 monolith off the board") : t("{n} monoliths off the board", { n: off })) +
    (mySides().length ? "" : ` · ${t("you are watching")}`);
  if (g.status === "playing" && g.deadline && g.per_move_days) {
    // the deadline of the side to move, in this player's own time zone
    small.append(` · ${perMoveText(g.per_move_days)} · ` +
      t("move by {when}", { when: deadlineText(g.deadline) }));
  } else if (g.increment) {
    small.append(` · ${t("+{n} s per move", { n: g.increment })}`);
  }
  // the watchers last, their room kept while nobody watches: a spectator arriving adds no line to
  // a phone's score bar (between the clocks it wrapped to a third line: the board moved 12 px down).
  // The room is drawn by CSS from data-room (style.css), so the page's text never holds a count
  // that is not there (copying the line, or reading it, finds no phantom watcher).
  const seen = document.createElement("span");
  const watching = (n) => ` · ${n === 1 ? t("1 watching") : t("{n} watching", { n })}`;
  seen.className = g.watchers ? "watchers" : "watchers none";
  if (g.watchers) seen.textContent = watching(g.watchers);
  else {
    seen.dataset.room = watching(1);
    seen.setAttribute("aria-hidden", "true");
  }
  small.append(seen);
  $("turn").appendChild(small);
  document.title = `${myTurn() ? "● " : ""}Jericho · ${turn}`;
  // banner
  const banner = $("banner");
  let text = "", cls = "banner";
  if (g.status === "over") {
    text = resultText(g) + (g.rematch_id && !S.replay ? ` ${t("A rematch has started.")}` : "");
    cls += " over";
  } else if (firstMoveText(g)) {
    text = firstMoveText(g);
    cls += " first-move";
  } else if (g.threat) {
    const other = g.threat === "south" ? "north" : "south";
    text = t("{side} holds {n} monoliths!", { side: SIDE_NAME[g.threat], n: g.score[g.threat === "south" ? 0 : 1] }) + " " +
      t("{other} must bring them below 7 with this move, or {side} wins.", { other: SIDE_NAME[other], side: SIDE_NAME[g.threat] });
    cls += " threat";
  } else if (g.status === "waiting") {
    text = mySides().length ? t("Waiting for your opponent: send them the invite link below.") :
      t("Waiting for the invited player to join.");
    cls += " waiting";
  }
  // the result's banner can be put away: it lay over the header's links for good (issue 24)
  const closable = g.status === "over";
  if (closable && S.bannerClosed === g.id) text = "";
  banner.hidden = !text;
  const shown = `${closable}:${text}`;
  if (banner.dataset.shown !== shown) {
    banner.dataset.shown = shown;
    const words = document.createElement("span");
    words.textContent = text;
    banner.replaceChildren(words);
    if (closable && text) {
      const close = document.createElement("button");
      close.type = "button";
      close.id = "banner-close";
      close.className = "banner-close";
      close.textContent = "✕";
      close.setAttribute("aria-label", t("Hide this message"));
      close.onclick = () => {
        S.bannerClosed = g.id;
        render();
        $("btn-replay").focus();  // the focus stays in the game, near what comes next
      };
      banner.append(close);
    }
  }
  banner.className = cls;
  // the first move's countdown changes every second: the banner does not read each one out, the
  // move region says it once per turn (issue 52)
  banner.setAttribute("aria-live", cls.includes("first-move") ? "off" : "polite");
  const firstKey = g.first_move && !S.replay ? `${g.id}:${g.ply}` : null;
  if (firstKey && S.firstMoveSaid !== firstKey) {
    S.firstMoveSaid = firstKey;
    // after the move's own sentence (the same live region: a second at once would replace it)
    setTimeout(() => {
      if (S.firstMoveSaid === firstKey && S.game && `${S.game.id}:${S.game.ply}` === firstKey) {
        announce($("move-live"), firstMoveText(S.game));
      }
    }, 1000);
  }
  // selection sanity
  if (S.selected && (!myTurn() || !g.legal[S.selected])) S.selected = null;
  if ((S.premove || S.preselect) && !myTurn() && !premoveAllowed(g, mySides(), !!S.replay)) {
    S.premove = S.preselect = null;  // the game ended, or a replay opened: no queued move
  }
  // board
  const conf = S.hoverAlign && !S.replay ? g.confrontations[S.hoverAlign] : null;
  const champions = new Set(conf ? [conf.south, conf.north].filter(Boolean) : []);
  const pv = previewFor(S.selected, g.turn);
  S.board.render(view, {
    legalCells: new Set(S.selected ? g.legal[S.selected] || [] : []),
    selected: S.selected,
    hoverAlignment: S.hoverAlign,
    champions,
    preview: pv.cells,
    previewLines: pv.lines,
  });
  // the queued move's cell, outlined (style.css: .cell.premove)
  const queuedCell = S.premove ? S.premove.split("@")[1] : null;
  for (const c of $("board").querySelectorAll(".cell")) c.classList.toggle("premove", c.dataset.cell === queuedCell);
  if (conf) {
    const a = S.topo.alignments.find((x) => x.name === S.hoverAlign);
    const champ = (side) => conf[side] ?
      t("{side}'s champion is {cell} ({tower}, bottom to top)",
        { side: SIDE_NAME[side], cell: conf[side], tower: conf[`${side}_tower`].join("/") }) :
      t("{side} has no tower on it", { side: SIDE_NAME[side] });
    const said = reasonText(conf.reason);  // the engine's sentence, in the page's language
    const reason = said.charAt(0).toUpperCase() + said.slice(1);
    $("info").innerHTML = "";
    const b = document.createElement("b");
    b.textContent = t("Alignment {name} ({kind}): ", { name: a.name, kind: KIND[a.kind] ?? a.kind });
    // one sentence to translate: French puts a (narrow) no-break space before ";" (issue 34)
    $("info").append(b, t("{south}; {north}. {reason}.", { south: champ("south"), north: champ("north"), reason }));
  } else if (S.selected && S.previewCell && pv.cells && pv.cells[S.previewCell]) {
    $("info").textContent = t("{move}: {words}.", { move: `${S.selected}@${S.previewCell}`, words: pv.cells[S.previewCell].words });
  } else if (S.premove) {
    $("info").textContent = t("Premove {move}: played as soon as it is your turn, if it is legal then. A click on the board or Escape cancels it.", { move: S.premove });
  } else if (S.preselect) {
    $("info").textContent = t("Premove: now choose the cell for {piece}. It is played as soon as it is your turn.", { piece: S.preselect });
  } else if (!S.selected) {
    $("info").textContent = S.replay ? t("Replay: use ◀ ▶ or the arrow keys.") :
      g.status === "over" ? resultText(g) :
        myTurn() ? t("Your move: pick a piece from your tray, then a highlighted cell.") :
          t("Hover or tap an alignment (its line or a triangle) to see who leads it and why; tap a tower to zoom in.");
  }
  renderTrays();
  if (S.backToTray && myTurn()) {
    // keyboard play: after a move, focus returns to the tray, unless the player has meanwhile
    // moved it somewhere else (an alignment being read, a button)
    S.backToTray = false;
    const at = document.activeElement;
    const slot = document.querySelector("#tray-mine .slot.playable");
    if (slot && (!at || at === document.body || (at.dataset && at.dataset.cell))) slot.focus();
  }
  renderMoves();
  // controls
  const seated = mySides().length > 0;
  $("btn-undo").hidden = !(seated && (g.mode === "ai" || g.mode === "hotseat"));
  $("btn-undo").disabled = !g.can_undo || !!S.replay;
  $("btn-resign").hidden = !seated || g.status === "over";
  $("btn-pass").hidden = !(myTurn() && g.pass_only);
  // a tournament's game (issue 52): a link back to it, and on its end screen "Back to the
  // tournament" instead of a rematch (the next pairing comes by itself: tournamentpush.js)
  const tour = g.tournament;
  $("btn-rematch").hidden = !(g.status === "over" && (seated || g.rematch_id)) || (!!tour && !g.rematch_id);
  $("btn-tournament").hidden = !(tour && g.status === "over");
  $("game-tournament").hidden = !tour;
  if (tour) renderTournament(tour);
  // berserk, before one's own first move, from the game page (the pairing brought the player here)
  const side = mySides().length === 1 ? mySides()[0] : null;
  const moved = side !== null && g.moves.some((_, i) => (i % 2 === 0) === (side === "south"));
  $("btn-berserk").hidden = !(tour?.berserk && side && g.status === "playing" && !moved && !S.berserked);
  // and on the end screen a pause (an arena) or a withdrawal (a Swiss): the next game would come by itself
  $("btn-tpause").hidden = !(tour && side && g.status === "over" && !S.tpaused);
  $("btn-tpause").textContent = tour?.kind === "swiss" ? t("Withdraw") : t("Pause");
  document.documentElement.dataset.playing = seated && g.status !== "over" ? "1" : "";
  $("btn-rematch").textContent = !seated ? t("Watch the rematch") : g.rematch_id ? t("Go to rematch") : t("Rematch");
  $("btn-replay").hidden = !!S.replay || g.moves.length === 0;
  $("replay").hidden = !S.replay;
  $("typed").hidden = !seated || g.status !== "playing";
  if (S.replay) {
    // one numbering everywhere: "16..." is North's move of move 16 (notation.js)
    const i = S.replay.i, last = S.replay.frames.length - 1;
    $("rp-pos").textContent = i ? moveLabel(i) : t("Start");
    $("rp-analyse").href = `/analysis#game=${encodeURIComponent(g.id)}&ply=${i}`;  // the analysis board, from here
    const where = i ? t("after {move}, ply {i} of {n}", { move: replayWhere(), i, n: last }) :
      t("the start, ply 0 of {n}", { n: last });
    $("rp-pos").setAttribute("aria-label", where);
  }
  // the address says which position the replay shows (#ply=N), to share or to come back to
  const address = S.replay ? `/g/${g.id}#ply=${S.replay.i}` : `/g/${g.id}`;
  if (location.pathname + location.hash !== address) history.replaceState(null, "", address);
  // reviewing or replaying: the board stays in view (sticky beside the panel, pinned on a phone)
  $("play").classList.toggle("studying", !!S.replay || g.status === "over");
  // a watcher's trays are both small, and the chat comes first (style.css, #play.watching)
  $("play").classList.toggle("watching", !seated && S.role !== "both");
  $("tray-mine-block").classList.toggle("small", !seated && S.role !== "both");
  if (S.review) S.review.render(g, S.replay ? S.replay.i : g.moves.length);
  renderLinks();
  if (g.mode === "online" && g.status === "waiting" && !g.public && mySides().length && !S.inviteMounted) {
    S.inviteMounted = true;  // once per page: the form keeps what the player typed
    mountInvite($("invite-by-name"), g.id, S.token, postJSON);
  }
  if (g.status !== "waiting") $("invite-by-name").hidden = true;
  const sides = mySides();
  renderEndings(g, sides.length === 1 ? sides[0] : null, send, sideName);
}

function renderTrays() {
  const g = S.game;
  let mine, other;
  const sides = mySides();
  if (S.role === "both") mine = g.turn;
  else if (sides.length) mine = sides[0];
  else mine = S.board.flip ? "north" : "south";
  other = mine === "south" ? "north" : "south";
  const interactive = sides.includes(mine);
  // out of turn the tray says it waits, in words and in its look (style.css: .tray.waiting)
  const waiting = interactive && S.role !== "both" && !S.replay && g.status === "playing" && !myTurn();
  $("tray-mine-title").textContent = interactive ?
    (S.role === "both" ? t("{side}'s pieces (to move)", { side: SIDE_NAME[mine] }) :
      waiting ? t("Your pieces · waiting for {side}", { side: SIDE_NAME[other] }) : t("Your pieces")) :
    t("{side}'s pieces", { side: SIDE_NAME[mine] });
  $("tray-mine").classList.toggle("waiting", waiting);
  $("tray-other-title").textContent = t("{side}'s pieces", { side: SIDE_NAME[other] });
  drawTray($("tray-mine"), mine, interactive);
  drawTray($("tray-other"), other, false);
}

function drawTray(node, side, interactive) {
  const g = S.game;
  const reserve = new Set(S.replay ? [] : g.reserves[side]);
  if (S.replay) {
    // in replay, show what was still in reserve at that point
    const placed = new Set();
    const f = S.replay.frames;
    for (let i = 1; i <= S.replay.i; i++) {
      const mv = f[i].move;
      if (mv && mv.includes("@") && f[i - 1].turn === side) placed.add(mv.split("@")[0]);
    }
    for (const s of [1, 2, 3, 4, 5]) for (const c of COLOURS) if (!placed.has(`${s}${c}`)) reserve.add(`${s}${c}`);
  }
  node.classList.toggle(`side-${side}`, true);
  node.classList.toggle(`side-${side === "south" ? "north" : "south"}`, false);
  const canMove = interactive && myTurn() && g.turn === side;
  if (node.children.length !== 25) {
    // built once; later renders only update the buttons (a click must not lose its target)
    node.replaceChildren();
    for (const size of [5, 4, 3, 2, 1]) {
      for (const c of COLOURS) {
        const p = `${size}${c}`;
        const b = document.createElement("button");
        b.type = "button";
        b.className = "slot";
        b.dataset.piece = p;
        b.appendChild(document.createElementNS("http://www.w3.org/2000/svg", "svg"));
        b.firstChild.setAttribute("viewBox", "-45 -2 90 34");
        b.onclick = (e) => {
          if (node.dataset.interactive === "1") selectPiece(p, e.detail === 0);
          else if (b.dataset.has === "true") say(whyNotPiece(p) || t("These are {side}'s pieces.", { side: SIDE_NAME[node.dataset.side] }), "note");
        };
        node.appendChild(b);
      }
    }
  }
  node.dataset.interactive = interactive ? "1" : "0";
  node.dataset.side = side;
  trayKeys(node);
  for (const b of node.children) {
    const p = b.dataset.piece;
    const has = reserve.has(p);
    // a piece that is there but cannot be picked now stays clickable, to say why (not silently ignored)
    const playable = canMove && has && (g.legal[p] || []).length > 0;
    b.disabled = !has;
    b.classList.toggle("playable", playable);
    // out of turn in a real-time game a piece can be chosen for a premove (premove.js)
    const premovable = interactive && has && !playable && premoveAllowed(g, mySides(), !!S.replay) && side === mySides()[0];
    b.setAttribute("aria-disabled", playable || premovable ? "false" : "true");
    b.tabIndex = playable ? 0 : -1;
    b.classList.toggle("used", !has);
    const queued = interactive && (S.preselect === p || (!!S.premove && S.premove.startsWith(`${p}@`)));
    b.classList.toggle("premoved", queued);
    const chosen = interactive && (S.selected === p || queued);  // never outline the opponent's copy of the piece
    b.classList.toggle("selected", chosen);
    b.setAttribute("aria-pressed", chosen ? "true" : "false");
    b.setAttribute("aria-label", `${p}, ${pieceWords(p)}${has ? "" : t(", already placed")}`);
    b.title = `${p}: ${pieceWords(p)}${has ? "" : t(" (placed)")}`;
    if (b.dataset.has !== String(has)) {
      b.dataset.has = String(has);
      b.firstChild.replaceChildren();
      if (has) drawPiece(b.firstChild, p, 0, 0, 30, { top: false });
    }
  }
  // one Tab stop for the tray, the arrow keys within it (static/traykeys.js)
  rove(node, node.contains(document.activeElement) ? document.activeElement : null);
}

function renderMoves() {
  const g = S.game;
  const ol = $("moves");
  const moves = g.moves;
  const current = S.replay ? S.replay.i : moves.length;
  const key = `${moves.join(" ")}|${current}|${!!S.replay}|${S.review ? S.review.key : ""}`;
  if (ol.dataset.key === key) return;
  ol.dataset.key = key;
  ol.replaceChildren();
  for (let i = 0; i < moves.length; i += 2) {
    const li = document.createElement("li");
    for (const k of [i, i + 1]) {
      if (k >= moves.length) break;
      const b = document.createElement("button");
      b.type = "button";
      b.className = `mv ${k % 2 ? "north" : "south"}`;
      b.textContent = moves[k];
      b.dataset.ply = k + 1;
      if (k + 1 === current) b.classList.add("current");
      b.onclick = () => { closeLine(); if (S.replay) { S.replay.i = k + 1; render(); } else enterReplay(k + 1); };
      if (S.review) S.review.decorate(b, k + 1);
      li.appendChild(b);
    }
    ol.appendChild(li);
  }
  // keep the current move visible by scrolling the list only (scrollIntoView would scroll the
  // whole page too: on a phone every move would jump to the list below the board)
  const cur = ol.querySelector(".current");
  if (cur) {
    const r = cur.getBoundingClientRect(), box = ol.getBoundingClientRect();
    if (r.top < box.top) ol.scrollTop -= box.top - r.top;
    else if (r.bottom > box.bottom) ol.scrollTop += r.bottom - box.bottom;
  }
}

async function tournamentPause() {
  const g = S.game;
  $("btn-tpause").disabled = true;
  const r = await postJSON(`/api/tournaments/${encodeURIComponent(g.tournament.id)}/withdraw`, {});
  $("btn-tpause").disabled = false;
  if (r.ok) {
    S.tpaused = true;
    say(t("You will not be paired again until you join the tournament again."), "note");
  } else say(r.data?.message || t("Something went wrong."));
  render();
}

async function berserk() {
  const g = S.game;
  $("btn-berserk").disabled = true;
  const r = await postJSON(`/api/tournaments/${encodeURIComponent(g.tournament.id)}/berserk`, { game: g.id });
  $("btn-berserk").disabled = false;
  if (r.ok || r.data?.error === "too_late") S.berserked = true;  // the halved clock comes with the state
  else say(r.data?.message || t("Something went wrong."));
  render();
}

function renderTournament(tour) {
  const href = `/tournaments/${encodeURIComponent(tour.id)}`;
  $("btn-tournament").href = href;
  const box = $("game-tournament");
  if (box.dataset.key === tour.id) return;
  box.dataset.key = tour.id;
  const a = document.createElement("a");
  a.href = href;
  a.textContent = tour.name;
  box.replaceChildren(document.createTextNode(`${t("Tournament:")} `), a);
}

function renderLinks() {
  const g = S.game;
  const box = $("links");
  const rows = [];
  const base = `${location.origin}/g/${g.id}`;
  const invite = store.get(`jericho:invite:${g.id}`);
  if (g.mode === "online" && g.status === "waiting" && invite && mySides().length) {
    rows.push([t("Invite link (send it to your opponent)"), `${base}#invite=${invite}`, "invite-link"]);
  }
  if (g.mode === "online" || g.watchers > 0) rows.push([t("Watch link (for spectators)"), base, "watch-link"]);
  if (g.mode === "online" && S.token && mySides().length) {
    rows.push([t("Your private seat link (keep it secret)"), `${base}#seat=${S.token}`, "seat-link"]);
  }
  box.hidden = rows.length === 0;
  const key = JSON.stringify(rows);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren();
  for (const [label, url, id] of rows) {
    const row = document.createElement("div");
    row.className = "link-row";
    const l = document.createElement("label");
    l.textContent = label;
    const input = document.createElement("input");
    input.readOnly = true;
    input.value = url;
    input.id = id;
    l.htmlFor = id;
    const copy = document.createElement("button");
    copy.type = "button";
    copy.textContent = t("Copy");
    copy.onclick = async () => {
      try { await navigator.clipboard.writeText(url); copy.textContent = t("Copied"); } catch { input.select(); }
    };
    row.append(l, input, copy);
    box.appendChild(row);
  }
}

function fmt(sec) {
  sec = Math.max(0, sec);
  const m = Math.floor(sec / 60), s = Math.floor(sec % 60);
  return sec < 20 ? `${m}:${String(s).padStart(2, "0")}.${Math.floor((sec * 10) % 10)}` :
    `${m}:${String(s).padStart(2, "0")}`;
}

/** While an online game waits for a side's first move (issue 52): "Move within 0:25 or the game is
 * aborted.", from the seconds the server gave (`first_move.left`) less those since its state came;
 * "" otherwise.  A correspondence game's first move counts in days and hours. */
function firstMoveText(g) {
  const f = g && g.status === "playing" && !S.replay ? g.first_move : null;
  if (!f) return "";
  const sec = Math.max(0, Math.ceil(f.left - (performance.now() - S.clockAt) / 1000));
  const left = g.per_move_days ? timeLeft(sec, 0) : `${Math.floor(sec / 60)}:${String(sec % 60).padStart(2, "0")}`;
  if (mySides().includes(f.side)) return t("Move within {left} or the game is aborted.", { left });
  return t("{side} must move within {left} or the game is aborted.", { side: sideName(f.side), left });
}

function tickClocks() {
  const g = S.game;
  const banner = $("banner");
  const countdown = firstMoveText(g);
  if (countdown && banner.classList.contains("first-move") && banner.firstChild &&
      banner.firstChild.textContent !== countdown) {
    banner.firstChild.textContent = countdown;
    banner.dataset.shown = `false:${countdown}`;
  }
  for (const side of ["south", "north"]) {
    const node = $(`clock-${side}`);
    if (!g || !g.clock) { node.hidden = true; continue; }
    node.hidden = false;
    let left = g.clock[side];
    if (g.clock.running === side) left -= (performance.now() - S.clockAt) / 1000;
    // a correspondence game counts in days and hours (yourturn.js), a real-time one in minutes
    node.textContent = g.per_move_days ? timeLeft(left, 0) : fmt(left);
    node.classList.toggle("running", g.clock.running === side);
    node.classList.toggle("low", left < 30);
  }
}

const m = location.pathname.match(/^\/g\/([A-Za-z0-9_-]+)\/?$/);
if (m) startGame(m[1]);
else startHome();
