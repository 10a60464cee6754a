-- The PostgreSQL schema: the same tables, columns and meaning as SQLite's after all of
-- server/migrations, in PostgreSQL's types. A change to the schema is a new migration in
-- both folders. Instants are BIGINT milliseconds since the Unix epoch; flags BOOLEAN; JSON
-- JSONB. Game ids are UUID v7 kept as hyphenated lower-case TEXT COLLATE "C" (the same
-- values as in SQLite, whose byte order is the order of the ids: `GET /games` pages by
-- them); player and tournament ids are TEXT too.

CREATE TABLE players (
    id          TEXT COLLATE "C" PRIMARY KEY,
    name        TEXT NOT NULL,
    -- The name in NFC, lower-cased (computed by the server): unique without regard to case.
    name_key    TEXT,
    -- SHA-256 of the secret token, hex: the token itself is never stored.
    token_hash  TEXT NOT NULL UNIQUE,
    created_ms  BIGINT NOT NULL,
    is_bot      BOOLEAN NOT NULL DEFAULT FALSE,
    -- Reserved (the ratings are in `ratings`).
    rating      DOUBLE PRECISION
);
CREATE INDEX players_name ON players (name);
CREATE UNIQUE INDEX players_name_key ON players (name_key);

CREATE TABLE games (
    id           TEXT COLLATE "C" PRIMARY KEY,
    red_id       TEXT NOT NULL,
    red_name     TEXT NOT NULL,
    black_id     TEXT NOT NULL,
    black_name   TEXT NOT NULL,
    level        BIGINT NOT NULL,
    -- The game's settings (protocol::settings::Settings).
    settings     JSONB NOT NULL,
    -- 'playing' (live, or cut off by a stop until the next start), 'finished', 'aborted'.
    state        TEXT NOT NULL,
    -- 'red', 'black', or NULL (draw, aborted, playing).
    winner       TEXT,
    -- Machine-readable reason: no_moves, repetition, full_socket, resigned, clock,
    -- abandoned, no_first_move, shutdown, crash.
    reason       TEXT,
    -- The result in words.
    result       TEXT,
    move_count   BIGINT NOT NULL DEFAULT 0,
    started_ms   BIGINT NOT NULL,
    ended_ms     BIGINT,
    -- The whole record: JSON (protocol::record::Record) and the text format (docs/RECORDS.md).
    record_json  JSONB,
    record_text  TEXT,
    -- The code of a private game, so that a game resumed after a restart stays private.
    code         TEXT,
    -- Rated, so that a game resumed after a restart stays rated (or casual).
    rated        BOOLEAN
);
CREATE INDEX games_red_name ON games (red_name, id);
CREATE INDEX games_black_name ON games (black_name, id);
-- The live games a restart resumes.
CREATE INDEX games_playing ON games (id) WHERE state = 'playing';

-- The journal of live games: their entries (protocol::record::Entry), written as they
-- happen, so that a game cut off by a stop is resumed (or stored as aborted with its
-- record) at the next start. Cleared when the game is stored.
CREATE TABLE live_entries (
    game_id  TEXT COLLATE "C" NOT NULL,
    idx      BIGINT NOT NULL,
    entry    JSONB NOT NULL,
    PRIMARY KEY (game_id, idx)
);

-- Ratings: one Glicko-2 rating per player and named time control, and one history row per
-- player and rated game.
CREATE TABLE ratings (
    player_id   TEXT NOT NULL,
    -- classical, standard, rapid, blitz
    tc          TEXT NOT NULL,
    rating      DOUBLE PRECISION NOT NULL,
    deviation   DOUBLE PRECISION NOT NULL,
    volatility  DOUBLE PRECISION NOT NULL,
    games       BIGINT NOT NULL,
    wins        BIGINT NOT NULL,
    losses      BIGINT NOT NULL,
    draws       BIGINT NOT NULL,
    updated_ms  BIGINT NOT NULL,
    PRIMARY KEY (player_id, tc)
);
CREATE INDEX ratings_board ON ratings (tc, rating);

CREATE TABLE rating_changes (
    game_id           TEXT COLLATE "C" NOT NULL,
    player_id         TEXT NOT NULL,
    opponent_id       TEXT NOT NULL,
    tc                TEXT NOT NULL,
    -- 1 win, 0.5 draw, 0 loss
    score             DOUBLE PRECISION NOT NULL,
    rating_before     DOUBLE PRECISION NOT NULL,
    deviation_before  DOUBLE PRECISION NOT NULL,
    rating_after      DOUBLE PRECISION NOT NULL,
    deviation_after   DOUBLE PRECISION NOT NULL,
    volatility_after  DOUBLE PRECISION NOT NULL,
    at_ms             BIGINT NOT NULL,
    PRIMARY KEY (game_id, player_id)
);
CREATE INDEX rating_changes_player ON rating_changes (player_id, at_ms);

-- Swiss tournaments: what a restart needs to go on, and what the API shows.
CREATE TABLE tournaments (
    id           TEXT PRIMARY KEY,
    created_by   TEXT NOT NULL,
    rounds       BIGINT NOT NULL,
    -- classical, standard, rapid, blitz
    tc           TEXT NOT NULL,
    -- The games' settings.
    settings     JSONB NOT NULL,
    rated        BOOLEAN NOT NULL,
    starts_ms    BIGINT NOT NULL,
    -- upcoming, running, finished, cancelled
    state        TEXT NOT NULL,
    -- Rounds started so far.
    round        BIGINT NOT NULL DEFAULT 0,
    created_ms   BIGINT NOT NULL,
    finished_ms  BIGINT
);
CREATE INDEX tournaments_state ON tournaments (state, starts_ms);

CREATE TABLE tournament_players (
    tournament_id  TEXT NOT NULL,
    player_id      TEXT NOT NULL,
    name           TEXT NOT NULL,
    -- His rating in the control when he joined: the pairing seed.
    seed           DOUBLE PRECISION NOT NULL,
    -- The first round he may be paired in.
    joined_round   BIGINT NOT NULL,
    withdrawn      BOOLEAN NOT NULL DEFAULT FALSE,
    joined_ms      BIGINT NOT NULL,
    PRIMARY KEY (tournament_id, player_id)
);

-- One row per pairing; a bye is a row with no black_id (its board after the games).
CREATE TABLE tournament_pairings (
    tournament_id  TEXT NOT NULL,
    round          BIGINT NOT NULL,
    board          BIGINT NOT NULL,
    red_id         TEXT NOT NULL,
    black_id       TEXT,
    game_id        TEXT COLLATE "C",
    -- NULL until the game is over.
    red_score      DOUBLE PRECISION,
    black_score    DOUBLE PRECISION,
    forfeit        BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (tournament_id, round, board)
);
CREATE INDEX tournament_pairings_game ON tournament_pairings (game_id);
