// The game page's countdowns: every bound a game waits on, from the page's state (state.js),
// the seats' presence (`seats`, from the snapshot and presence events), the page's own seat
// (`seat`, null for a watcher) and the game time `t`.
const TamskDeadlines = (() => {
  // Every bound the game waits on, as a countdown (docs/RULES.md, "Waiting states and
  // their bounds"): the 15-second timer, each first move before the abort, the turn limit
  // (or without one the idle bound, 10 × abort_ms), the drop graces, a late release, an
  // absent player's grace, the game clocks, the end once nobody can move. Each at its
  // nominal instant, but the drop grace of a window the server described: its
  // `claim_opens_ms` counts the mover's lag compensation, and is the instant the server
  // must *receive* his drop by: for the page's own seat it is counted down less the
  // one-way delay `oneWay` (half the round trip), so that a drop at 0.0 arrives in time.
  function list(st, seats, seat, t, oneWay = 0) {
    const out = [];
    const s = st.settings;
    const cap = TamskState.cap;
    const whose = (p) => (p === seat ? "Your" : `${cap(p)}'s`);
    const left = (at) => {
      const ms = Math.max(0, at - t);
      return TamskBoard.fmtSecs(ms) + (ms >= 60000 ? "" : " s");
    };
    if (st.status.state !== "playing") return out;
    if (s.level >= 3 && st.neutral.target) {
      const n = TamskState.neutralLeft(st.neutral, t);
      if (n > 0) out.push(`15-second timer on ${cap(st.neutral.target[0])}: ${left(t + n)}`);
    }
    const first = st.first_turn_ms || {};
    for (const p of ["red", "black"]) {
      if (st.moves_made[p] === 0 && first[p] != null && s.abort_ms) {
        out.push(`${whose(p)} first move, or the game is aborted: ${left(first[p] + s.abort_ms)}`);
      }
    }
    if (st.ending) {
      out.push("Neither player can move: the game ends when the last drop window closes");
    } else if (s.turn_limit_ms || s.abort_ms) {
      const limit = s.turn_limit_ms || 10 * s.abort_ms;
      const what = s.turn_limit_ms ? "turn limit" : "idle bound";
      out.push(`${whose(st.turn)} turn, ${what}: ${left(st.turn_started_ms + limit)}`);
    }
    for (const p of ["red", "black"]) {
      const w = st.windows[p];
      // The mover's drop grace; when it ends without a drop, the other player may claim.
      // A penalty ring owed goes within the same window (rules, section 7): shown too,
      // also once his own ring is down (a move with its drop leaves only it open).
      if (w && (w.drop_open || w.penalty_open) && s.level >= 2) {
        const by = w.claim_opens_ms != null ? w.claim_opens_ms : w.opened_ms + s.drop_grace_ms;
        const until = p === seat && w.claim_opens_ms != null ? by - oneWay : by;
        if (w.drop_open) {
          const then = w.claim_allowed === false ? "" : `, then ${cap(TamskState.OTHER[p])} may claim`;
          const penalty = w.penalty_open ? " (and the penalty ring)" : "";
          out.push(`${cap(p)} may drop on ${w.square}${penalty}: ${left(until)}${then}`);
        } else {
          out.push(`${cap(p)} may drop the penalty ring: ${left(until)}`);
        }
      }
      // The grace ended without his drop: the player on turn may claim until his move
      // starts (no countdown: his turn's bounds are above).
      const other = TamskState.OTHER[p];
      if (w && !w.drop_open && !w.dropped && w.claim_allowed !== false && st.turn === other && s.level >= 2) {
        out.push(`${cap(p)} did not drop on ${w.square}: ${other === seat ? "you" : cap(other)} may claim it now`);
      }
    }
    if (st.late && st.late.late_until_ms != null) out.push(`${cap(st.late.player)} must put ${st.late.glass} down: ${left(st.late.late_until_ms)}`);
    for (const p of ["red", "black"]) {
      const info = seats[p];
      const other = cap(TamskState.OTHER[p]);
      if (info && info.connected === false) {
        if (info.grace_expired) out.push(`${cap(p)} is away and his grace ran out: ${other} may claim the win`);
        else if (info.grace_until_ms != null) out.push(`${cap(p)} is away: ${other} may claim the win in ${left(info.grace_until_ms)}`);
      }
    }
    if (st.clocks) {
      for (const p of ["red", "black"]) {
        const running = st.turn === p ? Math.max(0, t - Math.max(st.clocks_at, st.turn_started_ms)) : 0;
        out.push(`${whose(p)} clock: ${TamskBoard.fmtSecs(Math.max(0, st.clocks[p] - running))}`);
      }
    }
    return out;
  }

  return { list };
})();
