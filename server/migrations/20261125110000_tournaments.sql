-- Swiss tournaments (issue 17): what a restart needs to go on, and what the API shows.
-- Game ids are TEXT (see store::game_id_text).

CREATE TABLE tournaments (
    id           TEXT PRIMARY KEY,
    created_by   TEXT NOT NULL,
    rounds       BIGINT NOT NULL,
    -- classical, standard, rapid, blitz
    tc           TEXT NOT NULL,
    -- The games' settings as JSON.
    settings     TEXT NOT NULL,
    rated        BIGINT NOT NULL,
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
    withdrawn      BIGINT NOT NULL DEFAULT 0,
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
    game_id        TEXT,
    -- NULL until the game is over.
    red_score      DOUBLE PRECISION,
    black_score    DOUBLE PRECISION,
    forfeit        BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tournament_id, round, board)
);
