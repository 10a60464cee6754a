-- Presence that decides a live game, kept with it (issue 18's takeovers and a restart):
-- when a seat's reconnection grace ran out (game time, ms), until he comes back. The
-- opponent's claim window counts from it; without it a restart gave the absent player a
-- fresh grace and the opponent waited for it again (an abandonment due meanwhile was
-- never carried out).
ALTER TABLE games ADD COLUMN red_expired_ms BIGINT;
ALTER TABLE games ADD COLUMN black_expired_ms BIGINT;
