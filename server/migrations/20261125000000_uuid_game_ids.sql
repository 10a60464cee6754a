-- Game ids become UUID v7, kept as hyphenated lower-case text (which sorts like the ids).
-- A game stored under an integer id n keeps it as the UUID whose last 48 bits are n
-- (00000000-0000-0000-0000-00000000000n): not a v7, and older than every v7 id, so the
-- order of games is kept.
CREATE TABLE games_v2 (
    id           TEXT PRIMARY KEY,
    red_id       TEXT NOT NULL,
    red_name     TEXT NOT NULL,
    black_id     TEXT NOT NULL,
    black_name   TEXT NOT NULL,
    level        BIGINT NOT NULL,
    settings     TEXT NOT NULL,
    state        TEXT NOT NULL,
    winner       TEXT,
    reason       TEXT,
    result       TEXT,
    move_count   BIGINT NOT NULL DEFAULT 0,
    started_ms   BIGINT NOT NULL,
    ended_ms     BIGINT,
    record_json  TEXT,
    record_text  TEXT
);
INSERT INTO games_v2
    SELECT printf('00000000-0000-0000-0000-%012x', id), red_id, red_name, black_id,
           black_name, level, settings, state, winner, reason, result, move_count,
           started_ms, ended_ms, record_json, record_text
    FROM games;
DROP TABLE games;
ALTER TABLE games_v2 RENAME TO games;
CREATE INDEX games_red_name ON games (red_name, id);
CREATE INDEX games_black_name ON games (black_name, id);

CREATE TABLE live_entries_v2 (
    game_id  TEXT NOT NULL,
    idx      BIGINT NOT NULL,
    entry    TEXT NOT NULL,
    PRIMARY KEY (game_id, idx)
);
INSERT INTO live_entries_v2
    SELECT printf('00000000-0000-0000-0000-%012x', game_id), idx, entry FROM live_entries;
DROP TABLE live_entries;
ALTER TABLE live_entries_v2 RENAME TO live_entries;
