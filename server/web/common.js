// What every page shares: the element helpers, who you are (the token kept in this
// browser's localStorage), and a websocket speaking the protocol of docs/PROTOCOL.md.
"use strict";

const Tamsk = (() => {
  function $(sel, root) {
    return (root || document).querySelector(sel);
  }

  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }

  // The player this browser plays as: { name, token } or null.
  const KEY = "tamsk.identity";
  function identity() {
    try {
      const v = JSON.parse(localStorage.getItem(KEY) || "null");
      return v && v.token ? v : null;
    } catch (_) {
      return null;
    }
  }
  function setIdentity(name, token) {
    localStorage.setItem(KEY, JSON.stringify({ name, token }));
  }
  function forgetIdentity() {
    localStorage.removeItem(KEY);
  }

  function wsUrl() {
    return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
  }

  // A websocket session. `hello` is the hello message to send; `onMessage(msg)` gets
  // every server frame; `onClose(event)` when it closes.
  function connect(hello, onMessage, onClose) {
    const ws = new WebSocket(wsUrl());
    const session = {
      ws,
      rtt: 0,
      send(msg) {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
      },
      close() {
        ws.onclose = null;
        ws.close();
      },
    };
    ws.onopen = () => session.send(Object.assign({ type: "hello", version: 1 }, hello));
    ws.onmessage = (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (_) {
        return;
      }
      if (msg.type === "lag") session.rtt = msg.rtt_ms;
      onMessage(msg);
    };
    ws.onclose = (ev) => onClose && onClose(ev);
    return session;
  }

  function fmtAgo(ms) {
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.round(s / 60)} min ago`;
    return `${Math.round(s / 3600)} h ago`;
  }

  // A rating as players read it: `1500?` while provisional, `1662` once settled
  // (`{rating, deviation, provisional}` as the server sends it; a bare number is shown as
  // it is). null when there is none.
  function ratingText(r) {
    if (r == null) return null;
    if (typeof r === "number") return String(Math.round(r));
    if (typeof r === "object" && typeof r.rating === "number") {
      return `${Math.round(r.rating)}${r.provisional ? "?" : ""}`;
    }
    return null;
  }

  // The help line's parts for a viewer of a game (`kind`: player, over, watcher, ended,
  // tv, replay); `flip`: the game has the 15-second timer.
  function helpParts(kind, flip) {
    const k = (key) => h("kbd", { text: key });
    return {
      player: ["Click one of your hourglasses, then where it goes (a red dotted outline: full, moving there loses). Keys: ", k("d"), " drop, ", k("c"), " claim, ",
        k("p"), " penalty ring, ", k("s"), " pick up the selected hourglass (then click where it goes), ",
        ...(flip ? [k("f"), " flip the timer, "] : []), k("Esc"), " put back the selection, ",
        k("R"), " resign."],
      over: ["The game is over: Rematch offers another one, Replay this game replays it."],
      watcher: ["You are watching: the moves, the sand and the countdowns are live; only the players move."],
      ended: ["The game is over: Replay this game replays it, the sand as it was at each instant."],
      tv: ["TAMSK TV: the most-watched live game, then the next one when it ends."],
      replay: ["Replay: the scrubber is the game's time; ", k("←"), " ", k("→"), " step from one action to the next, ",
        k("Home"), " and ", k("End"), " jump, ", k("space"), " plays (at the speed chosen)."],
    }[kind] || [];
  }

  // The ids of the lobby's live and recent games that end with the hex digits `want` (a
  // short id as the terminal client lists it); none when the lobby cannot be read.
  async function gamesEndingWith(want) {
    if (!/^[0-9a-f]{4,31}$/.test(want)) return [];
    try {
      const r = await fetch("/api/lobby", { headers: { Accept: "application/json" } });
      const data = await r.json();
      const ids = [...(data.games || []).map((g) => String(g.game)), ...(data.recent || []).map((g) => String(g.id))];
      return [...new Set(ids.filter((id) => id.replace(/-/g, "").toLowerCase().endsWith(want)))];
    } catch (_) {
      return [];
    }
  }

  function levelText(level) {
    return { 1: "Level 1", 2: "Level 2", 3: "Level 3" }[level] || `Level ${level}`;
  }

  // Time controls of the terminal client's --tc (README), as settings.
  const TIME_CONTROLS = {
    standard: { hourglass_ms: 180000, neutral_ms: 15000, drop_grace_ms: 2000 },
    classical: { hourglass_ms: 300000, neutral_ms: 20000, drop_grace_ms: 3000 },
    rapid: { hourglass_ms: 90000, neutral_ms: 10000, drop_grace_ms: 2000 },
    blitz: { hourglass_ms: 45000, neutral_ms: 5000, drop_grace_ms: 2000 },
  };

  return { $, h, identity, setIdentity, forgetIdentity, connect, fmtAgo, levelText, ratingText, helpParts, gamesEndingWith, TIME_CONTROLS };
})();
