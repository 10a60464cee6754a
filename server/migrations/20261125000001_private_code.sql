-- The code of a private game, so that a game resumed after a restart stays private.
ALTER TABLE games ADD COLUMN code TEXT;
