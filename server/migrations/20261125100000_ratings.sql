-- Ratings (issue 17): one Glicko-2 rating per player and named time control, and one
-- history row per player and rated game. Game ids are TEXT here (see store::game_id_text).

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
    game_id           TEXT NOT NULL,
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
