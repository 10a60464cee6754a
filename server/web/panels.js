// The game page's text beside the board: each player's panel, the status line and the
// 15-second timer's line, from the page's state (state.js), the seats (`seats`, from the
// snapshot and presence events), the page's own seat (`seat`, null for a watcher) and the
// game time `t`.
const TamskPanels = (() => {
  const { h } = Tamsk;

  function name(seats, p) {
    return (seats[p] && seats[p].name) || TamskState.cap(p);
  }

  // A player's panel: name, rings left, lag, rating, presence, and his hourglasses.
  // `onPlace(glass)` makes the "place X" buttons of the placement set-up (for the page's
  // own seat only); `placing`, the glass chosen (its button is shown pressed).
  function player(st, seats, seat, p, t, onPlace, placing) {
    const info = seats[p] || {};
    const mine = seat === p ? " (you)" : "";
    // His rating in the game's control (`1500?` while provisional), and after a rated
    // game the new one beside it.
    const shown = Tamsk.ratingText(info.rating);
    const after = Tamsk.ratingText(info.rating_after);
    const rating = shown != null ? ` · rating ${shown}${after != null ? ` → ${after}` : ""}` : "";
    const away = info.connected === false
      ? ` · away${info.grace_until_ms != null ? `, grace ${TamskBoard.fmtSecs(Math.max(0, info.grace_until_ms - t))} s` : ""}`
      : "";
    const glasses = Object.keys(st.glasses).filter((g) => TamskState.ownerOf(g) === p).map((g) => {
      const gl = st.glasses[g];
      const where = gl.square || "beside the board";
      const sand = st.settings.level < 2 ? "" : gl.dead_at_ms != null && gl.dead_at_ms <= t ? " dead"
        : gl.started ? ` ${TamskBoard.fmtSecs(TamskState.sandLeft(gl, t))}` : " unstarted";
      const place = seat === p && !gl.square && st.status.state === "playing"
        ? h("button", {
          class: "place", onclick: () => onPlace(g), text: `place ${g}`,
          "aria-pressed": String(placing === g),
        })
        : null;
      return h("li", {}, `${g} ${where}${sand}`, place);
    });
    return [
      h("div", { class: "pname" },
        h("span", { class: "swatch " + p, "aria-hidden": "true" }),
        `${TamskState.cap(p)}: ${name(seats, p)}${mine}`,
        st.turn === p && st.status.state === "playing" ? h("strong", { text: " · to move" }) : null),
      h("div", { text: `rings left ${st.holders[p]}`
        + (st.penalty_owed[p] && st.status.state === "playing" ? " · penalty ring owed" : "")
        + (info.lag_ms != null ? ` · lag ${info.lag_ms} ms` : "") + rating + away }),
      h("ul", { class: "glist" }, ...glasses),
    ];
  }

  // Who is to move and what just happened, or how the game ended.
  function statusLine(st, seats, seat) {
    const over = TamskState.describeStatus(st, { red: name(seats, "red"), black: name(seats, "black") });
    // A sentence of its own, whatever follows it.
    if (over) return /[.!?]$/.test(over) ? over : over + ".";
    const cap = TamskState.cap;
    const last = st.last ? ` Last move: ${cap(st.last.player)} ${st.last.from ? st.last.from + "-" : "to "}${st.last.to}.` : "";
    const you = seat ? (st.turn === seat ? " Your move." : " Your opponent's move.") : "";
    const held = st.held ? ` ${cap(st.held.player)} holds ${st.held.glass}.` : "";
    return `${cap(st.turn)} (${name(seats, st.turn)}) to move.${you}${held}${last}`;
  }

  // The 15-second timer (Level 3 only: "" below).
  function neutralLine(st, t) {
    const n = st.settings.level >= 3 ? TamskState.neutralLeft(st.neutral, t) : null;
    return n == null ? "" : n > 0 && st.neutral.target
      ? `15-second timer: ${TamskBoard.fmtSecs(n)} s on ${TamskState.cap(st.neutral.target[0])}`
      : n > 0 ? `15-second timer: ${TamskBoard.fmtSecs(n)} s (judges nobody)` : "15-second timer: empty";
  }

  // Lines of the move list (state.js's `describeEntry`), as list items.
  function moveItems(lines) {
    return lines.map((l) => h("li", { "data-at": String(l.at_ms) }, h("span", { class: "t", text: l.time }), " ", l.text));
  }

  // The countdowns (deadlines.js), as list items.
  function deadlines(st, seats, seat, t, oneWay = 0) {
    return TamskDeadlines.list(st, seats, seat, t, oneWay).map((d) => h("li", { text: d }));
  }

  // What a page that finds no game says: `raw` the id it was given, `candidates` the
  // games a short id fits (none, or several).
  function missingText(raw, candidates) {
    const shown = String(raw) === "" ? "(none)" : `“${raw}”`;
    const example = "/game/0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f";
    return candidates && candidates.length > 1
      ? `The short id ${shown} fits ${candidates.length} games: open yours from the lobby's links (${candidates.map((c) => "/game/" + c).join(", ")}).`
      : `No game has the id ${shown}. A game's id is its full id, as in the lobby's links (such as ${example}); `
        + "the terminal client's short id (#0c1d2e3f, the last 8 digits) is found here only while its game is live or among the lobby's recent games.";
  }

  return { name, player, statusLine, neutralLine, moveItems, deadlines, missingText };
})();
