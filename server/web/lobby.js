// The lobby (`/`): live games, open seeks and recent games from /api/lobby (refreshed
// every 2 s), and the form that starts a game over the websocket, then opens its page.
"use strict";

(() => {
  const { $, h } = Tamsk;

  function gameLink(id, text) {
    return h("a", { href: "/game/" + encodeURIComponent(id), text });
  }

  // A player's name and, when the server sends one, his rating (`1500?` while provisional).
  function playerCell(p) {
    const rating = Tamsk.ratingText(p.rating);
    return h("td", {}, p.name, rating != null ? h("span", { class: "rating", text: ` (${rating})` }) : null);
  }

  function fill(table, empty, rows) {
    const body = $("tbody", table);
    body.replaceChildren(...rows);
    table.hidden = rows.length === 0;
    empty.hidden = rows.length !== 0;
  }

  function render(data) {
    fill($("#live-games"), $("#no-live"), data.games.map((g) =>
      h("tr", { "data-game": String(g.game) },
        playerCell(g.red), playerCell(g.black),
        h("td", { text: Tamsk.levelText(g.level) }),
        h("td", { class: "opt", text: String(g.move_count) }),
        h("td", { class: "opt", text: String(g.watchers) }),
        h("td", {}, gameLink(g.game, g.state === "playing" ? "watch" : "see the end")))));
    fill($("#seeks"), $("#no-seeks"), data.seeks.map((s) =>
      h("tr", {},
        playerCell(s.player),
        h("td", { text: Tamsk.levelText(s.settings.level) }),
        h("td", { class: "opt", text: s.settings.level >= 2 ? `${s.settings.hourglass_ms / 1000} s` : "–" }),
        h("td", { class: "opt", text: Tamsk.fmtAgo(s.since_ms) }),
        h("td", {}, h("button", {
          type: "button", text: "play",
          onclick: (ev) => start(ev, { type: "accept_seek", seek: s.seek }),
        })))));
    fill($("#recent"), $("#no-recent"), data.recent.map((g) =>
      h("tr", { "data-game": String(g.id) },
        playerCell(g.red), playerCell(g.black),
        h("td", { class: "opt", text: Tamsk.levelText(g.level) }),
        h("td", { class: "opt", text: String(g.move_count) }),
        h("td", { text: g.result || g.reason || g.state }),
        h("td", {}, gameLink(g.id, "replay")))));
  }

  async function refresh() {
    try {
      const r = await fetch("/api/lobby", { headers: { Accept: "application/json" } });
      if (r.ok) render(await r.json());
    } catch (_) {
      // The server is away for a moment: the next refresh tries again.
    }
  }

  // --- playing ---------------------------------------------------------------------
  let session = null;
  const status = (text) => ($("#play-status").textContent = text);

  function settingsFromForm() {
    const raw = $("#settings-json").value.trim();
    if (raw) {
      const parsed = JSON.parse(raw); // a SyntaxError is shown to the player
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new Error("the settings are a JSON object, like {\"level\":2}");
      }
      return parsed;
    }
    const level = parseInt($("#level").value, 10);
    return Object.assign({ level }, level >= 2 ? Tamsk.TIME_CONTROLS[$("#tc").value] : {});
  }

  // Says hello and sends `chosen` (taking an open seek) or what the form asks for.
  function start(ev, chosen) {
    ev.preventDefault();
    const name = $("#name").value.trim();
    if (!name) {
      status("Type your name first.");
      $("#name").focus();
      return;
    }
    let request = chosen;
    if (!request) {
      let settings;
      try {
        settings = settingsFromForm();
      } catch (e) {
        status("The settings are not valid JSON: " + e.message);
        return;
      }
      const mode = document.querySelector("input[name=mode]:checked").value;
      // Unticked: a casual game; ticked, the server's rule (rated when the settings are
      // a named time control).
      const casual = $("#rated").checked ? {} : { rated: false };
      request = mode === "bot"
        ? { type: "play_bot", settings, level: $("#bot-level").value, ...casual }
        : { type: "seek", settings, ...casual };
    }
    const known = Tamsk.identity();
    const hello = known && known.name === name ? { token: known.token } : { name };
    if (session) session.close();
    status("Connecting…");
    $("#play-button").disabled = true;
    session = Tamsk.connect(hello, (msg) => {
      switch (msg.type) {
        case "welcome":
          Tamsk.setIdentity(msg.name, msg.token);
          status(`Hello ${msg.name}.`);
          session.send(request);
          break;
        case "seeking":
          status("Waiting for an opponent with the same settings…");
          $("#cancel-seek").hidden = false;
          break;
        case "seek_cancelled":
          status("Seek cancelled.");
          $("#cancel-seek").hidden = true;
          $("#play-button").disabled = false;
          break;
        case "snapshot":
          status("Game found: opening it…");
          location.href = "/game/" + encodeURIComponent(msg.game);
          break;
        case "error":
          if (msg.code === "unknown_token") {
            // This browser's player is not known here (a new database): register again.
            Tamsk.forgetIdentity();
            session.close();
            $("#play-button").disabled = false;
            start(ev, chosen);
            return;
          }
          status(msg.message);
          $("#play-button").disabled = false;
          break;
        default:
          break;
      }
    }, () => {
      $("#play-button").disabled = false;
      $("#cancel-seek").hidden = true;
    });
  }

  const known = Tamsk.identity();
  if (known) $("#name").value = known.name;
  $("#play-form").addEventListener("submit", (ev) => start(ev, null));
  $("#cancel-seek").addEventListener("click", () => session && session.send({ type: "cancel_seek" }));
  refresh();
  setInterval(refresh, 2000);
})();
