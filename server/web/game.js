// A game page (`/game/{id}`) and the TV (`/tv`, the most-watched live game, then the
// next). Live: a websocket, `watch` as a guest or `join` as a seated player (the token
// from localStorage), a display state kept from the snapshot and the events
// (state.js), and the sand redrawn every animation frame from the documented state.
// A game that is no longer live is replayed (replay.js).
"use strict";

(() => {
  const { $, h } = Tamsk;
  const tv = location.pathname === "/tv";
  // Game ids are opaque strings (UUIDs): the server's own value is sent back once known.
  let gameRef = tv ? null : idFromUrl(location.pathname.slice("/game/".length));
  let st = null; // display state
  let seq = 0;
  let seat = null;
  let seats = { red: null, black: null };
  let watchers = 0;
  let lines = [];
  let base = { now_ms: 0, perf: 0 };
  let session = null;
  let mode = "connecting";
  // A join or watch answered with one of these is asked again a second later.
  const NOT_YET = ["game_moving", "game_busy", "game_unreachable"];
  let followAgain = null;
  let ui = { selected: null, placing: null, penalty: false, targets: new Set() };
  let lastStatus = "";
  let myGames = [];
  let closedByUs = false;
  let tvEnded = new Set();
  let resyncing = false;

  // Hooks for the browser tests and for anyone curious in the console.
  const hooks = { applied: {}, state: () => st, session: () => session };
  window.__tamsk = hooks;

  function idFromUrl(s) {
    try {
      return decodeURIComponent(s);
    } catch (_) {
      return s; // a stray % is the id as typed: the server says it is no game
    }
  }
  function sameGame(a, b) {
    return a != null && b != null && String(a) === String(b);
  }
  function storeKey() {
    return "tamsk.game." + String(gameRef);
  }

  const board = TamskBoard.create($("#board"), onSquare);

  function gameNow() {
    if (!st) return 0;
    const end = TamskState.endedAt(st);
    if (end != null) return end;
    const rtt = session ? session.rtt : 0;
    return Math.max(st.at_ms, base.now_ms + (performance.now() - base.perf) + rtt / 2);
  }

  function setBase(nowMs) {
    base = { now_ms: nowMs, perf: performance.now() };
  }

  // The error line says the game is being followed again (it changes nodes): the next
  // snapshot clears it.
  let waitingNotice = false;
  function showError(text) {
    $("#error").textContent = text || "";
    waitingNotice = false;
  }

  // --- live ------------------------------------------------------------------------
  function connect() {
    const me = Tamsk.identity();
    closedByUs = false;
    mode = "connecting";
    session = Tamsk.connect(me ? { token: me.token } : { guest: true }, onMessage, () => {
      if (closedByUs || mode === "replay") return;
      // Offline at once (nothing can be played meanwhile), not a second later.
      mode = "connecting";
      document.body.setAttribute("data-mode", mode);
      $("#controls").hidden = true;
      // Not the status line drawn last: once back, the game's line is written again.
      $("#status").textContent = lastStatus = "Connection lost: reconnecting…";
      setTimeout(connect, 1000);
    });
  }

  function follow() {
    clearTimeout(followAgain);
    if (gameRef == null) return;
    const mine = myGames.find((g) => sameGame(g, gameRef));
    if (mine != null) gameRef = mine;
    let after = null;
    if (!st) {
      // A reload: what this tab saw is kept in sessionStorage; resume after it.
      try {
        const saved = JSON.parse(sessionStorage.getItem(storeKey()) || "null");
        if (saved && saved.st) {
          ({ st, seq, lines, seats, seat } = saved);
          setBase(saved.st.at_ms);
          renderMoves();
        }
      } catch (_) { /* nothing kept */ }
    }
    if (st) after = seq;
    const type = mine != null ? "join" : "watch";
    const msg = { type, game: gameRef };
    if (after != null) msg.after_seq = after;
    session.send(msg);
  }

  async function pickTv() {
    gameRef = null;
    try {
      const r = await fetch("/api/lobby");
      const data = await r.json();
      const live = data.games.filter((g) => g.state === "playing" && !tvEnded.has(String(g.game)));
      live.sort((a, b) => b.watchers - a.watchers || b.move_count - a.move_count);
      if (live.length) {
        gameRef = live[0].game;
        st = null;
        lines = [];
        renderMoves();
        follow();
        return;
      }
    } catch (_) { /* tried again below */ }
    $("#title").textContent = "TAMSK TV";
    $("#status").textContent = "No live game right now: waiting for one…";
    setTimeout(pickTv, 2000);
  }

  // An id that is no game's. The terminal client lists a game by the last 8 hex digits
  // of its id (`#0c1d2e3f`): such a short id is looked up among the lobby's live and
  // recent games and, when exactly one ends with it, that game is shown. Anything else
  // is said in words, without an empty board.
  async function lookUp(raw) {
    const want = String(raw).trim().replace(/^#/, "").replace(/-/g, "").toLowerCase();
    const found = await Tamsk.gamesEndingWith(want);
    if (found.length === 1) {
      hooks.lookedUp = { from: String(raw), to: found[0] };
      history.replaceState(null, "", "/game/" + encodeURIComponent(found[0]));
      gameRef = found[0];
      if (mode === "replay" || !session) connect();
      else follow();
      return;
    }
    notFound(raw, found);
  }

  function notFound(raw, candidates) {
    mode = "missing";
    closedByUs = true;
    if (session) session.close();
    $("#title").textContent = document.title = "No such game";
    $(".layout").hidden = true;
    $("#status").textContent = "";
    showError(TamskPanels.missingText(raw, candidates));
    $("#missing").hidden = false;
    document.body.setAttribute("data-mode", "missing");
  }

  function save() {
    try {
      sessionStorage.setItem(storeKey(), JSON.stringify({ st, seq, lines, seats, seat }));
    } catch (_) { /* storage full or off: a reload then takes a snapshot */ }
  }

  function onMessage(msg) {
    switch (msg.type) {
      case "welcome":
        myGames = msg.games || [];
        tv ? pickTv() : follow();
        break;
      case "guest_welcome":
        tv ? pickTv() : follow();
        break;
      case "snapshot":
        if (!sameGame(msg.game, gameRef)) {
          // A rematch started: its own page.
          location.href = "/game/" + encodeURIComponent(msg.game);
          return;
        }
        onSnapshot(msg);
        break;
      case "resumed":
        hooks.resumed = msg.after_seq;
        hooks.resumes = (hooks.resumes || 0) + 1;
        mode = "live";
        seat = msg.seat;
        render(true);
        break;
      case "event":
        if (sameGame(msg.game, gameRef)) onEvent(msg);
        break;
      case "watchers":
        if (sameGame(msg.game, gameRef)) watchers = msg.count;
        break;
      case "rematch_offered":
        $("#b-rematch").hidden = false;
        $("#b-rematch").textContent = msg.by === seat ? "Rematch offered…" : "Accept the rematch";
        break;
      case "rematch_declined":
        $("#b-rematch").textContent = "Rematch declined";
        break;
      case "rating_changed":
        // This game was rated: the player's new rating beside the old one.
        if (sameGame(msg.game, gameRef) && seat && seats[seat]) {
          seats[seat].rating = msg.before;
          seats[seat].rating_after = msg.after;
          render(true);
        }
        break;
      case "error":
        onError(msg);
        break;
      default:
        break;
    }
  }

  function onError(msg) {
    if (msg.code === "unknown_token") {
      Tamsk.forgetIdentity();
      closedByUs = true;
      session.close();
      connect();
      return;
    }
    if (msg.code === "game_moved" && mode === "live" && gameRef != null && sameGame(msg.game, gameRef)) {
      // Several nodes: the game left this connection's node (it lost its lease: a stall,
      // a NATS outage). Following it again reaches the node that runs it now.
      hooks.moved = (hooks.moved || 0) + 1;
      mode = "connecting";
      showError("This game moved to another server: following it there…");
      waitingNotice = true;
      render(true);
      follow();
      return;
    }
    if (msg.code === "bad_message" && mode === "connecting" && !st && gameRef != null && !tv) {
      // The id is no game id at all (a short id, a typo): look it up, else say so.
      lookUp(gameRef);
      return;
    }
    if (msg.code === "unknown_game" && gameRef != null && !tv) {
      // Not live (any more): replay the stored game.
      sessionStorage.removeItem(storeKey());
      startReplay();
      return;
    }
    if (msg.code === "unknown_game" && tv) {
      pickTv();
      return;
    }
    if (NOT_YET.includes(msg.code) && mode === "connecting" && gameRef != null) {
      // Not served this instant (its node is gone and another takes it over, or busy).
      hooks.notYet = (hooks.notYet || 0) + 1;
      showError(msg.code === "game_moving"
        ? "This game's server is gone; another one takes it over within seconds. Trying again…"
        : msg.message + " (trying again)");
      waitingNotice = true;
      clearTimeout(followAgain);
      followAgain = setTimeout(follow, 1000);
      return;
    }
    showError(msg.message);
  }

  function onSnapshot(s) {
    if (waitingNotice) showError("");
    resyncing = false;
    mode = "live";
    gameRef = s.game;
    seat = s.seat;
    seats = { red: s.red, black: s.black };
    watchers = s.watchers;
    st = TamskState.fromView(s.view, s.view.settings);
    // Said beside the names: rated (in its control) or casual.
    st.kind = s.rated ? (s.tc ? `rated ${s.tc}` : "rated") : "casual";
    seq = s.seq;
    setBase(s.now_ms);
    lines = [];
    let pendingFrom = null;
    for (const entry of s.view.entries) {
      lines.push(...TamskState.describeEntry(entry, null));
      if (entry.entry !== "act") continue;
      const a = entry.action;
      if (a.type === "move") st.last = { from: a.from, to: a.to, player: entry.player };
      if (a.type === "start") pendingFrom = a.from;
      if (a.type === "release") st.last = { from: pendingFrom, to: a.to, player: entry.player };
      if (a.type === "place") st.last = { from: null, to: a.to, player: entry.player };
      // Red's first release handed Black his first turn (if nothing did before).
      if (entry.player === "red" && ["move", "release", "place"].includes(a.type)) {
        const b = st.first_turn_ms.black;
        st.first_turn_ms.black = b == null ? entry.at_ms : Math.min(b, entry.at_ms);
      }
    }
    renderMoves();
    render(true);
    save();
  }

  function onEvent(ev) {
    if (ev.seq <= seq) return; // already in the state (a resume after a reload)
    if (resyncing) return; // a snapshot is on its way
    if (!st || ev.seq !== seq + 1) {
      // A gap: ask for the whole game again (once).
      resyncing = true;
      session.send({ type: seat ? "join" : "watch", game: gameRef });
      return;
    }
    seq = ev.seq;
    setBase(ev.now_ms);
    if (ev.play) {
      const p = TamskState.playOf(ev.play, ev.now_ms);
      const turnBefore = st.turn;
      const events = TamskState.applyPlay(st, p.entry, p.events, p.complete);
      // A refusal belongs to the turn it was given in: a new turn clears it.
      if (st.turn !== turnBefore && !waitingNotice) showError("");
      const added = TamskState.describeEntry(p.entry, events);
      lines.push(...added);
      appendMoves(added);
      if (ui.selected && !(st.board[ui.selected] && st.board[ui.selected].glass)) clearSelection();
    } else if (ev.gone) {
      const [player, until] = ev.gone;
      Object.assign(seats[player], { connected: false, grace_until_ms: until, grace_expired: false });
    } else if (ev.back) {
      Object.assign(seats[ev.back], { connected: true, grace_until_ms: null, grace_expired: false });
    } else if (ev.lag) {
      // The lag entry: it moves the server's deadlines, nothing the page draws.
      seats[ev.lag[0]].lag_ms = ev.lag[1];
    } else if (ev.grace_expired) {
      seats[ev.grace_expired].grace_expired = true;
    }
    render(true);
    hooks.applied[ev.seq] = Date.now();
    save();
    if (tv && TamskState.isOver(st) && !tvEnded.has(String(gameRef))) {
      tvEnded.add(String(gameRef));
      const ended = gameRef;
      setTimeout(() => {
        if (sameGame(ended, gameRef)) {
          session.send({ type: "leave", game: gameRef });
          pickTv();
        }
      }, 3000);
    }
  }

  // --- playing ---------------------------------------------------------------------
  function act(action) {
    showError("");
    // `seq`: the last event this page applied; a move decided on it is refused
    // (`stale_action`) if the turn changed meanwhile, rather than played unseen.
    session.send({ type: "act", game: gameRef, action, seq });
  }

  function myTurn() {
    return seat && st && st.status.state === "playing" && st.turn === seat;
  }

  function clearSelection() {
    ui = { selected: null, placing: null, penalty: false, targets: new Set() };
  }

  function onSquare(sq) {
    if (!seat || !st || mode !== "live" || TamskState.isOver(st)) return;
    const info = st.board[sq];
    if (ui.penalty) {
      act({ type: "penalty_drop", at: sq });
      clearSelection();
    } else if (ui.placing) {
      act({ type: "place", glass: ui.placing, to: sq, drop: autoDrop(sq) });
      clearSelection();
    } else if (st.held && st.held.player === seat) {
      // A move started elsewhere (another tab): put it down here.
      if (!confirmLoss(sq)) return;
      act({ type: "release", to: sq });
      if (autoDrop(sq)) act({ type: "drop" });
    } else if (ui.selected && ui.selected !== sq && !info.glass) {
      if (!confirmLoss(sq)) return;
      act({ type: "move", from: ui.selected, to: sq, drop: autoDrop(sq) });
      clearSelection();
    } else if (info.glass && TamskState.ownerOf(info.glass) === seat) {
      if (ui.selected === sq) {
        clearSelection();
      } else {
        ui.selected = sq;
        // A full socket is a destination only where releasing there loses (and is
        // drawn so: `loses`); where it is refused it is none.
        ui.targets = new Set(TamskBoard.neighbours(sq).filter((n) => !st.board[n].glass
          && (!TamskState.isFull(st, n) || TamskState.fullLoses(st))));
        if (!myTurn()) showError("It is not your turn yet.");
      }
    } else {
      clearSelection();
    }
    render(true);
  }

  // Releasing onto a full socket loses at once under the rulebook's rule: a click (or a
  // typed move) there asks first, as a resignation does.
  function confirmLoss(sq) {
    if (!TamskState.isFull(st, sq) || !TamskState.fullLoses(st)) return true;
    return confirm(`${sq} is full: moving there loses the game. Move anyway?`);
  }

  function autoDrop(sq) {
    const info = st.board[sq];
    return $("#auto-drop").checked && info.rings < info.capacity && st.holders[seat] > 0;
  }

  function command(name) {
    if (!seat || mode !== "live") return;
    if (st && TamskState.isOver(st) && name !== "rematch" && name !== "cancel") return;
    switch (name) {
      case "drop": act({ type: "drop" }); break;
      case "claim": act({ type: "claim" }); break;
      case "flip": act({ type: "flip" }); break;
      case "start":
        // A move in two steps (rules, section 4): the selected hourglass is picked up (and
        // flipped); a click on a socket then puts it down.
        if (ui.selected) act({ type: "start", from: ui.selected });
        else showError("Select one of your hourglasses first; s then picks it up.");
        clearSelection();
        break;
      case "penalty":
        ui.penalty = !ui.penalty;
        ui.selected = null;
        showError(ui.penalty ? "Pick the socket for your penalty ring." : "");
        break;
      case "abandon": session.send({ type: "claim_abandonment", game: gameRef }); break;
      case "resign":
        if (confirm("Resign this game?")) act({ type: "resign" });
        break;
      case "rematch": session.send({ type: "rematch", game: gameRef }); break;
      case "cancel": clearSelection(); showError(""); break;
      default: break;
    }
    render(true);
  }

  // A move typed in the notation (for the keyboard alone, and screen readers).
  function typed(ev) {
    ev.preventDefault();
    if (!seat || !st || mode !== "live" || TamskState.isOver(st)) return;
    const input = $("#typed-move");
    const action = TamskState.parseTyped(input.value);
    if (!action) {
      showError(`"${input.value}" is not a move: type from-to like d1-d2, X@c3 to place, p@c3, or start d1 then release d2.`);
      return;
    }
    if ((action.type === "move" || action.type === "release") && st.board[action.to] && !confirmLoss(action.to)) return;
    const drop = !!st.board[action.to] && autoDrop(action.to);
    if (action.type === "move" || action.type === "place") action.drop = drop;
    act(action);
    // A release's ring is an action of its own, as after a click.
    if (action.type === "release" && drop) act({ type: "drop" });
    input.value = "";
  }
  $("#typed").addEventListener("submit", typed);

  for (const [id, name] of [["#b-drop", "drop"], ["#b-claim", "claim"], ["#b-flip", "flip"],
    ["#b-penalty", "penalty"], ["#b-abandon", "abandon"], ["#b-resign", "resign"], ["#b-rematch", "rematch"]]) {
    $(id).addEventListener("click", () => command(name));
  }
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
    const keys = { d: "drop", c: "claim", f: "flip", p: "penalty", s: "start", w: "abandon", R: "resign", Escape: "cancel" };
    if (keys[e.key]) {
      e.preventDefault();
      command(keys[e.key]);
    }
  });

  // --- drawing ---------------------------------------------------------------------
  function appendMoves(added) {
    const ol = $("#moves");
    ol.append(...TamskPanels.moveItems(added));
    ol.scrollTop = ol.scrollHeight;
  }
  function renderMoves() {
    $("#moves").replaceChildren();
    appendMoves(lines);
  }

  function name(p) {
    return TamskPanels.name(seats, p);
  }

  function renderPlayer(p, t) {
    $("#p-" + p).replaceChildren(...TamskPanels.player(st, seats, seat, p, t, (g) => {
      clearSelection();
      ui.placing = g;
      // Where it may go: any free socket with room (the engine's placement rule).
      ui.targets = new Set(Object.keys(st.board).filter((sq) => !st.board[sq].glass && !TamskState.isFull(st, sq)));
      render(true);
    }, ui.placing));
  }

  function statusLine() {
    return TamskPanels.statusLine(st, seats, seat);
  }

  let textDrawn = 0;
  function render(structural) {
    if (!st) return;
    const t = gameNow();
    TamskBoard.draw(board, st, t, ui);
    // The sand moves every frame; the text (panels, countdowns) ten times a second.
    const now = performance.now();
    if (!structural && now - textDrawn < 100) return;
    textDrawn = now;
    renderPlayer("red", t);
    renderPlayer("black", t);
    $("#neutral").textContent = TamskPanels.neutralLine(st, t);
    // The way to the server: half the round trip, and a quarter more for its jitter (as the
    // terminal: client-cli/src/countdown.rs).
    const way = session ? (session.rtt / 2) * 1.25 : 0;
    $("#deadlines").replaceChildren(...TamskPanels.deadlines(st, seats, seat, t, way));
    if (structural) {
      const title = `${name("red")} vs ${name("black")}` + (st.kind ? ` · ${st.kind}` : "")
        + (tv ? " · TAMSK TV" : "");
      $("#title").textContent = title;
      // The tab says when it is your move (for a player looking at another tab).
      document.title = (myTurn() ? "● Your move · " : "") + title;
      const line = statusLine() + (mode === "live" ? ` Watchers: ${watchers}.` : "");
      if (line !== lastStatus) $("#status").textContent = lastStatus = line;
      const over = TamskState.isOver(st);
      $("#controls").hidden = !seat || mode !== "live";
      $("#b-rematch").hidden = !over || !seat;
      // Once it is over nothing can be played: only the rematch (and the replay) remain.
      for (const b of ["#b-drop", "#b-claim", "#b-penalty", "#b-flip", "#b-resign", "#b-abandon",
        "#typed-move", "#typed button", "#auto-drop"]) $(b).disabled = over;
      setHelp(tv ? "tv" : !seat ? (over ? "ended" : "watcher") : over ? "over" : "player");
      $("#b-flip").hidden = st.settings.level < 3;
      $("#b-abandon").hidden = !(seat && seats[TamskState.OTHER[seat]] && seats[TamskState.OTHER[seat]].grace_expired);
      const body = document.body;
      body.setAttribute("data-mode", mode);
      body.setAttribute("data-seat", seat || "");
      body.setAttribute("data-turn", st.turn);
      body.setAttribute("data-state", st.status.state);
      body.setAttribute("data-seq", String(seq));
      body.setAttribute("data-game", gameRef == null ? "" : String(gameRef));
      body.setAttribute("data-held", st.held ? st.held.glass : "");
      if (over && mode === "live" && !tv) showReplayOffer();
    }
  }

  // The help line says what applies to whoever looks: the player's clicks and keys, the
  // watcher's (nothing to do), the replay's keys. The colours' legend follows it.
  let helpShown = null;
  function setHelp(kind) {
    if (kind === helpShown) return;
    helpShown = kind;
    const parts = Tamsk.helpParts(kind, st && st.settings.level >= 3);
    $("#help-mode").replaceChildren(...parts);
    document.body.setAttribute("data-help", kind);
  }

  function showReplayOffer() {
    if ($("#to-replay")) return;
    $("#status").after(h("button", { id: "to-replay", onclick: startReplay, text: "Replay this game" }));
  }

  function frame() {
    if (st && mode !== "replay") render(false);
    requestAnimationFrame(frame);
  }

  // --- replay ----------------------------------------------------------------------
  function showReplayFrame(state, t, all, played) {
    if (lines !== all) {
      // The move list of the whole game, greyed after the scrubber's instant.
      lines = all;
      renderMoves();
    }
    st = state;
    TamskBoard.draw(board, st, t, ui);
    renderPlayer("red", t);
    renderPlayer("black", t);
    $("#deadlines").replaceChildren(...TamskPanels.deadlines(st, seats, seat, t));
    const n = st.settings.level >= 3 ? TamskState.neutralLeft(st.neutral, t) : null;
    $("#neutral").textContent = n == null ? "" : `15-second timer: ${TamskBoard.fmtSecs(n)} s`;
    const items = $("#moves").children;
    for (let i = 0; i < items.length; i++) {
      items[i].classList.toggle("future", i >= played);
      items[i].classList.toggle("current", i === played - 1);
    }
    // The last line played so far is marked and kept in sight in the list (not the page).
    const current = items[played - 1];
    if (current) {
      const ol = $("#moves");
      if (current.offsetTop < ol.scrollTop || current.offsetTop > ol.scrollTop + ol.clientHeight - current.offsetHeight) {
        ol.scrollTop = current.offsetTop - ol.clientHeight / 2;
      }
    }
    document.body.setAttribute("data-mode", "replay");
    document.body.setAttribute("data-game", String(gameRef));
    document.body.setAttribute("data-state", st.status.state);
  }

  async function startReplay() {
    mode = "replay";
    closedByUs = true;
    if (session) session.close();
    const offer = $("#to-replay");
    if (offer) offer.remove();
    seat = null;
    clearSelection();
    let ctl;
    try {
      ctl = await TamskReplay.load(gameRef, showReplayFrame);
    } catch (e) {
      if (e.code === "unknown_game" || e.code === "bad_game_id") {
        // Neither live nor stored: no such game.
        if (e.code === "bad_game_id") lookUp(gameRef);
        else notFound(gameRef, []);
      } else {
        showError(e.message);
      }
      return;
    }
    try {
      const g = ctl.game;
      seats = { red: { name: g.red.name, rating: g.red.rating }, black: { name: g.black.name, rating: g.black.rating } };
      $("#title").textContent = document.title = `${g.red.name} vs ${g.black.name} · replay`;
      $("#status").textContent = ctl.result || g.result || g.reason || g.state;
      $("#controls").hidden = true;
      setHelp("replay");
      hooks.replay = ctl;
      ctl.seek(ctl.endMs);
    } catch (e) {
      showError(e.message);
    }
  }

  connect();
  requestAnimationFrame(frame);
})();
