// Replaying a stored game (`/api/games/{id}/replay`): the server replays the record with
// the rules engine and sends the game after every entry; the page shows the frame in
// force at the scrubber's instant, with the sand as it was at that instant.
"use strict";

const TamskReplay = (() => {
  const { $ } = Tamsk;

  // `show(state, t, lines, played)` draws (`played`: how many of `lines` the frame shown
  // has played); returns a controller, or throws with the server's words.
  async function load(gameId, show) {
    const r = await fetch(`/api/games/${encodeURIComponent(gameId)}/replay`, {
      headers: { Accept: "application/json" },
    });
    const body = await r.json();
    if (!r.ok) {
      const err = new Error(body.message || `the replay could not be loaded (${r.status})`);
      err.code = body.error;
      throw err;
    }
    const { game, replay } = body;
    const settings = replay.settings;
    let last = null;
    const lines = [];
    // How many of the move list's lines each frame has played (entries may share an
    // instant: the list follows the frame shown, not the time).
    const played = [];
    // When each player's turn was first handed to him (his first-move abort counts from it).
    const firstTurn = { red: 0, black: null };
    const states = replay.frames.map((f) => {
      const st = TamskState.fromView(f.view, settings);
      for (const e of f.events) {
        if (e.type === "move_released") last = { from: e.from, to: e.to, player: e.player };
        if (e.type === "placed") last = { from: null, to: e.to, player: e.player };
        if (e.type === "turn_started" && firstTurn[e.player] == null) firstTurn[e.player] = e.at;
      }
      st.last = last;
      for (const p of ["red", "black"]) if (firstTurn[p] != null) st.first_turn_ms[p] = firstTurn[p];
      if (f.entry) lines.push(...TamskState.describeEntry(f.entry, f.events));
      played.push(lines.length);
      return st;
    });
    const frames = replay.frames;
    // Frames a step button stops at: the start, every player's action, the end.
    const stops = frames.map((f, i) => i).filter((i) => i === 0 || i === frames.length - 1
      || (frames[i].entry && frames[i].entry.entry === "act"));
    let t = replay.end_ms;
    let playing = false;
    let lastTick = 0;

    const scrub = $("#r-scrub");
    scrub.max = String(replay.end_ms);

    function frameAt(time) {
      let i = 0;
      while (i + 1 < frames.length && frames[i + 1].at_ms <= time) i++;
      return i;
    }

    // A step shows exactly the frame it went to, even when entries share an instant.
    let pinned = null;
    function current() {
      return pinned != null && frames[pinned].at_ms === t ? pinned : frameAt(t);
    }

    function render() {
      const i = current();
      scrub.value = String(t);
      $("#r-time").textContent = `${(t / 1000).toFixed(1)} s of ${(replay.end_ms / 1000).toFixed(1)} s`;
      document.body.setAttribute("data-replay-frame", String(i));
      show(states[i], t, lines, played[i]);
    }

    function step(dir) {
      const i = current();
      let target = dir > 0 ? stops.find((s) => s > i) : [...stops].reverse().find((s) => s < i);
      if (target == null) target = dir > 0 ? frames.length - 1 : 0;
      t = frames[target].at_ms;
      pinned = target;
      playing = false;
      render();
    }

    function tick(now) {
      if (!playing) return;
      const speed = parseFloat($("#r-speed").value) || 1;
      t = Math.min(replay.end_ms, t + (now - lastTick) * speed);
      pinned = null;
      lastTick = now;
      if (t >= replay.end_ms) {
        playing = false;
        playButton.textContent = "Play";
      }
      render();
      if (playing) requestAnimationFrame(tick);
    }

    $("#r-start").onclick = () => { t = 0; pinned = 0; playing = false; render(); };
    $("#r-end").onclick = () => { t = replay.end_ms; pinned = frames.length - 1; playing = false; render(); };
    $("#r-prev").onclick = () => step(-1);
    $("#r-next").onclick = () => step(1);
    const playButton = $("#r-play");
    const toggle = () => {
      if (t >= replay.end_ms) t = 0;
      playing = !playing;
      lastTick = performance.now();
      if (playing) requestAnimationFrame(tick);
      playButton.textContent = playing ? "Pause" : "Play";
    };
    playButton.onclick = toggle;
    document.addEventListener("keydown", (e) => {
      if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
      const keys = {
        ArrowLeft: () => step(-1), ArrowRight: () => step(1), " ": toggle,
        Home: () => $("#r-start").onclick(), End: () => $("#r-end").onclick(),
      };
      if (keys[e.key]) {
        e.preventDefault();
        keys[e.key]();
      }
    });
    scrub.oninput = () => { t = parseInt(scrub.value, 10) || 0; pinned = null; playing = false; render(); };
    $("#replay").hidden = false;
    render();
    return {
      game,
      result: replay.result,
      endMs: replay.end_ms,
      seek(time) {
        t = Math.max(0, Math.min(replay.end_ms, time));
        pinned = t === replay.end_ms ? frames.length - 1 : null;
        playing = false;
        render();
      },
      step,
    };
  }

  return { load };
})();
