// The hex board in SVG: 37 sockets in columns a..g (lengths 4,5,6,7,6,5,4), rows from
// the bottom. Geometry from the rules page: q = col - 3, s = row - 1 + max(0, -q);
// capacity = 4 - hex distance to d4. Colours are told apart without red-green vision:
// Red's hourglasses are orange with letters X Y Z and a solid outline, Black's dark blue
// with A B C and a white outline; every socket also carries its name for screen readers.
"use strict";

const TamskBoard = (() => {
  const COLS = "abcdefg";
  const LENGTHS = [4, 5, 6, 7, 6, 5, 4];
  const R = 30; // hex radius in SVG units
  const SQ3 = Math.sqrt(3);
  const NS = "http://www.w3.org/2000/svg";

  function axial(square) {
    const c = COLS.indexOf(square[0]);
    const row = parseInt(square.slice(1), 10);
    const q = c - 3;
    return { q, s: row - 1 + Math.max(0, -q) };
  }

  function squareOf(q, s) {
    if (q < -3 || q > 3) return null;
    const row = s + 1 - Math.max(0, -q);
    if (row < 1 || row > LENGTHS[q + 3]) return null;
    return COLS[q + 3] + row;
  }

  const ALL = [];
  for (let c = 0; c < 7; c++) for (let r = 1; r <= LENGTHS[c]; r++) ALL.push(COLS[c] + r);

  function neighbours(square) {
    const { q, s } = axial(square);
    const out = [];
    for (const [dq, ds] of [[0, 1], [0, -1], [1, 0], [-1, 0], [1, -1], [-1, 1]]) {
      const n = squareOf(q + dq, s + ds);
      if (n) out.push(n);
    }
    return out;
  }

  function centre(square) {
    const { q, s } = axial(square);
    return { x: 1.5 * R * q + 5.5 * R, y: (6 - (s + q / 2)) * SQ3 * R + R * 1.3 };
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function hexPoints(cx, cy, r) {
    const pts = [];
    for (let i = 0; i < 6; i++) {
      const a = (Math.PI / 3) * i;
      pts.push(`${(cx + r * Math.cos(a)).toFixed(1)},${(cy + r * Math.sin(a)).toFixed(1)}`);
    }
    return pts.join(" ");
  }

  // Builds the board in `host`; `onClick(square)` is called for a click on a socket.
  function create(host, onClick) {
    const W = 11 * R;
    const H = 7 * SQ3 * R + R * 0.6;
    const svg = el("svg", {
      viewBox: `0 0 ${W} ${H}`, role: "group", "aria-label": "TAMSK board, 37 sockets",
      class: "board",
    });
    host.appendChild(svg);
    const sockets = {};
    for (const sq of ALL) {
      const { x, y } = centre(sq);
      const g = el("g", {
        class: "socket", "data-square": sq, tabindex: "-1", role: "button",
      }, svg);
      el("polygon", { points: hexPoints(x, y, R * 0.96), class: "hex" }, g);
      const pips = el("g", { class: "pips" }, g);
      g.addEventListener("click", () => onClick && onClick(sq));
      sockets[sq] = { g, pips, x, y, cap: -1, rings: -1 };
    }
    // Hourglasses are drawn over the sockets, one group each, moved by transform.
    const glasses = {};
    for (const name of "XYZABC") {
      const owner = "XYZ".includes(name) ? "red" : "black";
      const g = el("g", { class: `glass ${owner}`, "data-glass": name }, svg);
      const w = R * 0.5, h = R * 0.62;
      el("polygon", { points: `${-w},${-h} ${w},${-h} 0,0 ${w},${h} ${-w},${h} 0,0`, class: "frame" }, g);
      const clipTop = `clip-top-${name}`, clipBot = `clip-bot-${name}`;
      const defs = el("defs", {}, g);
      el("polygon", { points: `${-w},${-h} ${w},${-h} 0,0` }, el("clipPath", { id: clipTop }, defs));
      el("polygon", { points: `0,0 ${w},${h} ${-w},${h}` }, el("clipPath", { id: clipBot }, defs));
      const top = el("rect", { x: -w, width: 2 * w, y: 0, height: 0, class: "sand", "clip-path": `url(#${clipTop})` }, g);
      const bot = el("rect", { x: -w, width: 2 * w, y: h, height: 0, class: "sand", "clip-path": `url(#${clipBot})` }, g);
      el("text", { x: w * 1.05, y: -h * 0.35, class: "glabel" }, g).textContent = name;
      const secs = el("text", { x: 0, y: h + R * 0.32, class: "gsecs" }, g);
      g.addEventListener("click", () => {
        const sq = g.getAttribute("data-on");
        if (sq && onClick) onClick(sq);
      });
      glasses[name] = { g, top, bot, secs, w, h };
    }
    // The sockets' names over everything, haloed: an hourglass standing on a socket hid
    // its name.
    const names = el("g", { class: "sqnames", "aria-hidden": "true" }, svg);
    for (const sq of ALL) {
      const { x, y } = centre(sq);
      el("text", { x: x - R * 0.55, y: y - R * 0.45, class: "sqname" }, names).textContent = sq;
    }
    return { svg, sockets, glasses };
  }

  function fmtSecs(ms) {
    const s = ms / 1000;
    if (s >= 60) {
      const m = Math.floor(s / 60);
      return `${m}:${String(Math.floor(s - m * 60)).padStart(2, "0")}`;
    }
    return s.toFixed(1);
  }

  // Draws the state at game time t. `ui`: { selected, targets: Set, penalty: bool }.
  function draw(b, st, t, ui) {
    const hourglass = st.settings.hourglass_ms;
    const lvl = st.settings.level;
    for (const sq of ALL) {
      const s = b.sockets[sq];
      const info = st.board[sq];
      if (s.cap !== info.capacity || s.rings !== info.rings) {
        // Pips: one per ring the socket holds, filled for each ring on it.
        while (s.pips.firstChild) s.pips.removeChild(s.pips.firstChild);
        for (let i = 0; i < info.capacity; i++) {
          const a = -Math.PI / 2 + (2 * Math.PI * i) / info.capacity + 0.5;
          el("circle", {
            cx: s.x + Math.cos(a) * R * 0.74, cy: s.y + Math.sin(a) * R * 0.74, r: R * 0.13,
            class: i < info.rings ? "pip ring" : "pip",
          }, s.pips);
        }
        s.cap = info.capacity;
        s.rings = info.rings;
      }
      s.g.setAttribute("data-rings", info.rings);
      s.g.setAttribute("data-glass", info.glass || "");
      const full = info.rings >= info.capacity;
      const last = st.last && (st.last.to === sq || st.last.from === sq);
      const target = ui && ui.targets && ui.targets.has(sq);
      // A full destination is a loss (the only kind a full socket can be: see game.js).
      const loses = target && full;
      s.g.setAttribute("class", "socket" + (full ? " full" : "") + (last ? " last" : "")
        + (ui && ui.selected === sq ? " selected" : "")
        + (target ? " target" : "") + (loses ? " loses" : ""));
      const label = `${sq}, ${info.rings} of ${info.capacity} rings` +
        (info.glass ? `, hourglass ${info.glass} (${TamskState.ownerOf(info.glass) === "red" ? "Red" : "Black"})` : "") +
        (last ? ", last move" : "") + (loses ? ", full: moving there loses" : "");
      s.g.setAttribute("aria-label", label);
    }
    for (const name of "XYZABC") {
      const gl = st.glasses[name];
      const v = b.glasses[name];
      if (!gl.square) {
        v.g.setAttribute("display", "none");
        continue;
      }
      v.g.removeAttribute("display");
      const { x, y } = b.sockets[gl.square];
      const held = st.held && st.held.glass === name;
      v.g.setAttribute("transform", `translate(${x.toFixed(1)},${(y + (held ? -R * 0.25 : 0)).toFixed(1)})`);
      v.g.setAttribute("data-on", gl.square);
      const left = lvl >= 2 ? TamskState.sandLeft(gl, t) : hourglass;
      const frac = Math.min(1, left / hourglass);
      // An unstarted glass (and every glass at Level 1) has all its sand in the bottom.
      const topFrac = lvl >= 2 && gl.started ? frac : 0;
      const botFrac = 1 - topFrac;
      // Sand settles from the waist up in the bottom, and the top empties from above.
      v.top.setAttribute("y", (-v.h * topFrac).toFixed(2));
      v.top.setAttribute("height", (v.h * topFrac).toFixed(2));
      v.bot.setAttribute("y", (v.h * (1 - botFrac)).toFixed(2));
      v.bot.setAttribute("height", (v.h * botFrac).toFixed(2));
      const dead = gl.dead_at_ms != null && gl.dead_at_ms <= t;
      v.g.setAttribute("class", `glass ${TamskState.ownerOf(name)}` + (dead ? " dead" : "") + (held ? " held" : ""));
      v.secs.textContent = lvl < 2 ? "" : dead ? "dead" : gl.started ? fmtSecs(left) : "–";
    }
  }

  return { create, draw, neighbours, ALL, fmtSecs, axial };
})();
