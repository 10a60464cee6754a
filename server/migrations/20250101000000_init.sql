-- Players and stored games. Portable SQL (SQLite now, PostgreSQL later): BIGINT
-- instants in ms since the Unix epoch, TEXT JSON, ids assigned by the server.

CREATE TABLE players (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    -- SHA-256 of the secret token, hex: the token itself is never stored.
    token_hash  TEXT NOT NULL UNIQUE,
    created_ms  BIGINT NOT NULL,
    is_bot      BIGINT NOT NULL DEFAULT 0,
    -- Reserved for ratings.
    rating      DOUBLE PRECISION
);
CREATE INDEX players_name ON players (name);

CREATE TABLE games (
    id           BIGINT PRIMARY KEY,
    red_id       TEXT NOT NULL,
    red_name     TEXT NOT NULL,
    black_id     TEXT NOT NULL,
    black_name   TEXT NOT NULL,
    level        BIGINT NOT NULL,
    -- The game's settings as JSON.
    settings     TEXT NOT NULL,
    -- 'playing' (live, or lost in a crash until the next start), 'finished', 'aborted'.
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
    record_json  TEXT,
    record_text  TEXT
);
CREATE INDEX games_red_name ON games (red_name, id);
CREATE INDEX games_black_name ON games (black_name, id);

-- Entries of live games, written as they happen, so that a game cut off by a crash can
-- still be stored (as aborted) with its record at the next start. Cleared when the game
-- is stored.
CREATE TABLE live_entries (
    game_id  BIGINT NOT NULL,
    idx      BIGINT NOT NULL,
    entry    TEXT NOT NULL,
    PRIMARY KEY (game_id, idx)
);
