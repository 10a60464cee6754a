-- Whether a game is rated, so that a game resumed after a restart stays rated (or casual).
ALTER TABLE games ADD COLUMN rated BIGINT;
