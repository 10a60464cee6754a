// The game as the page shows it, kept from the documented state (docs/PROTOCOL.md):
// built from a snapshot's `view` (or a replay frame's), then moved on by the engine
// events of each `play` event: those it carries, and those its entry implies (derived
// here from the entry and this state, as docs/PROTOCOL.md "Implied events" says: the
// glass on a square, its sand from its flip instant and capacity, the rings left). No
// rule is judged here: the server accepted the entry and says what else happened.
"use strict";

const TamskState = (() => {
  const OTHER = { red: "black", black: "red" };

  // A display state from a GameView (settings given apart for replay frames).
  function fromView(view, settings) {
    const board = {};
    for (const s of view.board) {
      board[s.square] = { rings: s.rings, capacity: s.capacity, glass: s.glass };
    }
    const glasses = {};
    for (const g of view.glasses) {
      glasses[g.glass] = {
        square: g.square,
        sand: { top_ms: g.sand.top_ms, since_ms: g.sand.since_ms },
        started: g.started,
        dead_at_ms: g.dead_at_ms,
      };
    }
    const windows = {};
    for (const w of view.windows || []) windows[w.mover] = Object.assign({}, w);
    return {
      settings: settings || view.settings,
      at_ms: view.at_ms,
      status: view.status,
      ending: view.ending,
      board,
      glasses,
      holders: Object.assign({}, view.holders),
      turn: view.turn,
      turn_started_ms: view.turn_started_ms,
      held: view.held ? Object.assign({}, view.held) : null,
      late: view.late ? Object.assign({}, view.late) : null,
      windows,
      penalty_owed: Object.assign({}, view.penalty_owed),
      neutral: {
        sand: Object.assign({}, view.neutral.sand),
        target: view.neutral.target,
      },
      clocks: view.clocks ? Object.assign({}, view.clocks) : null,
      clocks_at: view.at_ms,
      moves_made: Object.assign({}, view.moves_made),
      // When each player's first turn began (his first-move abort counts from it,
      // docs/RULES.md decision 10): Red's at 0; Black's when the turn is first handed to
      // him (a turn_started event). From a view alone: the start of the turn he is on
      // before his first move (a snapshot's entries, or a replay's events, say better).
      first_turn_ms: {
        red: 0,
        black: view.turn === "black" && view.moves_made.black === 0 ? view.turn_started_ms : null,
      },
      last: null,
    };
  }

  function ownerOf(glass) {
    return "XYZ".includes(glass) ? "red" : "black";
  }

  // Applies one engine event (as sent in a `play` event) to the display state.
  function applyEvent(st, e) {
    st.at_ms = Math.max(st.at_ms, e.at);
    switch (e.type) {
      case "move_started": {
        const g = st.glasses[e.glass];
        g.sand = Object.assign({}, e.sand);
        g.started = true;
        st.held = { player: e.player, glass: e.glass, from: e.from, since_ms: e.at, late_until_ms: null };
        // A move start closes every drop window.
        st.windows = {};
        break;
      }
      case "move_released": {
        st.board[e.from].glass = null;
        st.board[e.to].glass = e.glass;
        st.glasses[e.glass].square = e.to;
        st.held = null;
        st.late = null;
        st.last = { from: e.from, to: e.to, player: e.player };
        st.moves_made[e.player] += 1;
        st.windows[e.player] = {
          mover: e.player, square: e.to, opened_ms: e.at, drop_open: true,
          penalty_open: !!st.penalty_owed[e.player], dropped: false,
        };
        break;
      }
      case "placed": {
        st.board[e.to].glass = e.glass;
        const g = st.glasses[e.glass];
        g.square = e.to;
        g.sand = Object.assign({}, e.sand);
        g.started = true;
        st.last = { from: null, to: e.to, player: e.player };
        st.moves_made[e.player] += 1;
        st.windows = {};
        st.windows[e.player] = {
          mover: e.player, square: e.to, opened_ms: e.at, drop_open: true,
          penalty_open: !!st.penalty_owed[e.player], dropped: false,
        };
        break;
      }
      case "ring_dropped": {
        st.board[e.square].rings += 1;
        st.holders[e.player] = e.left;
        if (e.kind === "penalty") {
          st.penalty_owed[e.player] = false;
          const w = st.windows[e.player];
          if (w) w.penalty_open = false;
        } else if (e.kind === "claim") {
          delete st.windows[OTHER[e.player]];
        } else {
          const w = st.windows[e.player];
          if (w) { w.dropped = true; w.drop_open = false; }
        }
        break;
      }
      case "drop_grace_ended": {
        const w = st.windows[e.mover];
        if (w) { w.drop_open = false; w.penalty_open = false; }
        break;
      }
      case "neutral_flipped":
        st.neutral = { sand: Object.assign({}, e.sand), target: [e.target, 0] };
        break;
      case "neutral_expired":
        st.neutral.target = null;
        break;
      case "penalty_earned":
        st.penalty_owed[e.player] = true;
        break;
      case "late_release_missed":
        st.held = null;
        st.late = null;
        break;
      case "hourglass_died": {
        const g = st.glasses[e.glass];
        g.dead_at_ms = e.at;
        if (e.in_hand) st.held = null;
        break;
      }
      case "turn_started":
        if (st.clocks) settleClock(st, e.at);
        if (!st.first_turn_ms) st.first_turn_ms = { red: 0, black: null };
        if (st.first_turn_ms[e.player] == null) st.first_turn_ms[e.player] = e.at;
        st.turn = e.player;
        st.turn_started_ms = e.at;
        // The timer judged the turn that just ended.
        st.neutral.target = null;
        break;
      case "game_ended":
        st.status = { state: "finished", outcome: e.outcome };
        st.held = null;
        st.windows = {};
        break;
      case "game_aborted":
        st.status = { state: "aborted", reason: e.reason, at_ms: e.at };
        st.held = null;
        st.windows = {};
        break;
      default:
        break; // passed, turn_forfeited, lag_compensated: shown in the move list only
    }
    // The timer expiring on a started move makes it a late one (release by the bound).
    if (e.type === "neutral_expired" && e.started && st.held) {
      st.late = Object.assign({}, st.held, {
        late_until_ms: e.at + (st.settings.late_release_ms || 5000),
      });
    }
  }

  // The events an accepted entry implies (docs/PROTOCOL.md, "Implied events"), from the
  // state just before them. Mirrors protocol::delta::implied.
  function implied(st, entry) {
    if (entry.entry !== "act") return [];
    const at = entry.at_ms, player = entry.player, other = OTHER[player], a = entry.action;
    const s = st.settings;
    const timed = s.level !== 1;
    const flip = (glass) => {
      const g = st.glasses[glass];
      return timed ? { top_ms: s.hourglass_ms - sandLeft(g, at), since_ms: at }
        : Object.assign({}, g.sand);
    };
    const ring = (square, kind) => ({
      type: "ring_dropped", at, player, square, kind, left: Math.max(0, st.holders[player] - 1),
    });
    const turn = { type: "turn_started", at, player: other };
    const out = [];
    switch (a.type) {
      case "move": {
        const glass = st.board[a.from] && st.board[a.from].glass;
        if (!glass) break;
        out.push({ type: "move_started", at, player, glass, from: a.from, sand: flip(glass) });
        out.push({ type: "move_released", at, player, glass, from: a.from, to: a.to, late: false });
        out.push(turn);
        if (a.drop) out.push(ring(a.to, "regular"));
        break;
      }
      case "start": {
        const glass = st.board[a.from] && st.board[a.from].glass;
        if (glass) out.push({ type: "move_started", at, player, glass, from: a.from, sand: flip(glass) });
        break;
      }
      case "release":
        if (st.held && st.held.player === player) {
          out.push({ type: "move_released", at, player, glass: st.held.glass, from: st.held.from, to: a.to, late: false });
          out.push(turn);
        }
        break;
      case "place": {
        const sand = timed ? { top_ms: s.hourglass_ms, since_ms: at } : Object.assign({}, st.glasses[a.glass].sand);
        out.push({ type: "placed", at, player, glass: a.glass, to: a.to, sand });
        out.push(turn);
        if (a.drop) out.push(ring(a.to, "regular"));
        break;
      }
      case "drop":
        if (st.windows[player]) out.push(ring(st.windows[player].square, "regular"));
        break;
      case "claim":
        if (st.windows[other]) out.push(ring(st.windows[other].square, "claim"));
        break;
      case "penalty_drop":
        out.push(ring(a.at, "penalty"));
        break;
      case "flip":
        out.push({ type: "neutral_flipped", at, by: player, target: other, sand: { top_ms: s.neutral_ms, since_ms: at } });
        break;
      default:
        break;
    }
    return out;
  }

  // Applies a `play` change: the entry's events, the carried ones (`events`) and, unless
  // `complete`, the implied ones where they go (after the carried events earlier than the
  // entry). Returns every event, in the engine's order.
  function applyPlay(st, entry, kept, complete) {
    const all = [];
    const take = (e) => { applyEvent(st, e); all.push(e); };
    let i = 0;
    if (!complete) {
      while (i < kept.length && kept[i].at < entry.at_ms) take(kept[i++]);
      for (const e of implied(st, entry)) take(e);
    }
    while (i < kept.length) take(kept[i++]);
    return all;
  }

  // The entry and the carried events of a `play` change (`"play":{...}` of an event
  // published at `now_ms`: its `at_ms` is omitted when it is `now_ms`).
  function playOf(play, nowMs) {
    const entry = Object.assign({}, play);
    delete entry.events;
    delete entry.complete;
    entry.at_ms = play.at_ms != null ? play.at_ms : nowMs;
    return { entry, events: play.events || [], complete: !!play.complete };
  }

  // The game clock of the player whose turn ends is charged the time it took.
  function settleClock(st, at) {
    const p = st.turn;
    const spent = at - Math.max(st.clocks_at, st.turn_started_ms);
    st.clocks[p] = Math.max(0, st.clocks[p] - Math.max(0, spent));
    const inc = st.settings.game_clock ? st.settings.game_clock.increment_ms : 0;
    st.clocks[p] += inc;
    st.clocks_at = at;
  }

  // Sand left in a glass's top at game time t (docs/PROTOCOL.md, "Drawing the sand").
  function sandLeft(g, t) {
    if (!g.started) return 0;
    const end = g.dead_at_ms != null ? Math.min(t, g.dead_at_ms) : t;
    return Math.max(0, g.sand.top_ms - Math.max(0, end - g.sand.since_ms));
  }

  function neutralLeft(n, t) {
    return Math.max(0, n.sand.top_ms - Math.max(0, t - n.sand.since_ms));
  }

  // A move typed in the notation, as the action it asks for (without `drop`, which the
  // page adds): `d1-d2` a move, `X@c3` a placement, `p@c3` the penalty ring, `start d1`
  // and `release d2` a move in two steps; else null.
  function parseTyped(raw) {
    const text = raw.trim().toLowerCase();
    let m;
    if ((m = /^([a-g][1-7])\s*-\s*([a-g][1-7])$/.exec(text))) return { type: "move", from: m[1], to: m[2] };
    if ((m = /^([xyzabc])\s*@\s*([a-g][1-7])$/.exec(text))) return { type: "place", glass: m[1].toUpperCase(), to: m[2] };
    if ((m = /^p\s*@\s*([a-g][1-7])$/.exec(text))) return { type: "penalty_drop", at: m[1] };
    if ((m = /^start\s+([a-g][1-7])$/.exec(text))) return { type: "start", from: m[1] };
    if ((m = /^release\s+([a-g][1-7])$/.exec(text))) return { type: "release", to: m[1] };
    return null;
  }

  // A socket with all the rings it can take.
  function isFull(st, sq) {
    const info = st.board[sq];
    return !!info && info.rings >= info.capacity;
  }

  // Releasing onto a full socket loses (the rulebook's rule, `full_socket: "lose"`), rather
  // than being refused (`"reject"`).
  function fullLoses(st) {
    return st.settings.full_socket !== "reject";
  }

  function isOver(st) {
    return st.status.state !== "playing";
  }

  // The instant the game ended (time stops there), or null.
  function endedAt(st) {
    if (st.status.state === "finished") return st.status.outcome.ended_at_ms;
    if (st.status.state === "aborted") return st.status.at_ms;
    return null;
  }

  // Why a game ended, in words (EndReason: {"type", "player"?}).
  function reasonText(r) {
    const p = r.player ? cap(r.player) : "";
    switch (r.type) {
      case "no_moves": return "neither player can move";
      case "repetition": return "the same position a third time";
      case "full_socket": return `${p} released onto a full socket`;
      case "resigned": return `${p} resigned`;
      case "clock": return `${p}'s game clock ran out`;
      case "abandoned": return `${p} abandoned the game`;
      case "idle": return `${p} let three turns lapse`;
      case "both_idle": return "both players let their turns lapse";
      case "both_absent": return "both players left";
      default: return String(r.type || r).replace(/_/g, " ");
    }
  }

  function describeStatus(st, names) {
    const name = (p) => `${cap(p)} (${names[p]})`;
    if (st.status.state === "finished") {
      const o = st.status.outcome;
      const rings = o.rings ? `; rings left ${o.rings.red} (Red), ${o.rings.black} (Black)` : "";
      // The tiebreak's line-up (latest death first), as the server broadcast it.
      const lineup = o.tiebreak && o.tiebreak.lineup.length
        ? " (" + o.tiebreak.lineup.map((l, i) => `${l.glass} ${l.running ? "would die" : "died"} at `
          + `${(l.dies_at_ms / 1000).toFixed(1)} s${i === o.tiebreak.deciding_index ? " decides" : ""}`).join(", ") + ")"
        : "";
      const tiebreak = o.decision === "tiebreak" ? `; decided by the last living hourglass${lineup}` : "";
      return (o.winner ? `${name(o.winner)} wins` : "Draw") + `: ${reasonText(o.reason)}${rings}${tiebreak}`;
    }
    if (st.status.state === "aborted") {
      const r = st.status.reason || {};
      const why = {
        // The words of the records and the terminal (`AbortReason::describe`).
        no_first_move: `${cap(r.player)} did not make his first move in time`,
        shutdown: "the server shut down",
        both_absent: "both players left before both had made a first move",
      }[r.type];
      return "Aborted" + (why ? `: ${why}` : "");
    }
    return null;
  }

  function cap(p) {
    return p ? p[0].toUpperCase() + p.slice(1) : "";
  }

  // One line of the move list per entry that a person cares about.
  function describeEntry(entry, events) {
    const t = (entry.at_ms / 1000).toFixed(1) + " s";
    const who = entry.player ? cap(entry.player) : "";
    // Without the events (a snapshot's entries), the action says whether it asked to drop.
    const dropped = events
      ? events.some((e) => e.type === "ring_dropped" && e.kind === "regular")
      : !!(entry.action && entry.action.drop);
    const lines = [];
    if (entry.entry === "act") {
      const a = entry.action;
      switch (a.type) {
        case "move": lines.push(`${who} ${a.from}-${a.to}${dropped ? " + ring" : ""}`); break;
        case "start": lines.push(`${who} picks up ${a.from}`); break;
        case "release": {
          const rel = (events || []).find((e) => e.type === "move_released");
          lines.push(`${who} ${rel ? rel.from + "-" : "to "}${a.to}${dropped ? " + ring" : ""}`);
          break;
        }
        case "place": lines.push(`${who} places ${a.glass} on ${a.to}${dropped ? " + ring" : ""}`); break;
        case "drop": lines.push(`${who} drops a ring`); break;
        case "claim": lines.push(`${who} claims`); break;
        case "penalty_drop": lines.push(`${who} penalty ring on ${a.at}`); break;
        case "flip": lines.push(`${who} flips the 15-second timer`); break;
        case "resign": lines.push(`${who} resigns`); break;
        default: lines.push(`${who} ${a.type}`);
      }
    } else if (entry.entry === "abandon") {
      lines.push(`${cap(entry.player)} abandoned`);
    }
    for (const e of events || []) {
      if (e.type === "hourglass_died") lines.push(`${e.glass} on ${e.square} ran out`);
      else if (e.type === "passed") lines.push(`${cap(e.player)} passes`);
      else if (e.type === "turn_forfeited") lines.push(`${cap(e.player)} forfeits the turn (${e.reason.replace(/_/g, " ")})`);
      else if (e.type === "penalty_earned") lines.push(`${cap(e.player)} earns a penalty ring`);
    }
    return lines.map((l) => ({ at_ms: entry.at_ms, text: l, time: t }));
  }

  return {
    fromView, applyEvent, applyPlay, implied, playOf, sandLeft, neutralLeft, isOver, endedAt, describeStatus, describeEntry,
    ownerOf, cap, OTHER, isFull, fullLoses, parseTyped,
  };
})();
