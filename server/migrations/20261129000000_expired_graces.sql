-- Presence that decides a live game, kept with it (issue 18's takeovers and a restart):
-- while a seat is away, the end of his reconnection grace (game time, ms; past once it ran
-- out), cleared when he comes back. A restart or a takeover goes on from it: a grace runs
-- to its own end and the opponent's claim window counts from it (before, every seat got a
-- fresh grace, and an abandonment due meanwhile was never carried out).
ALTER TABLE games ADD COLUMN red_grace_until_ms BIGINT;
ALTER TABLE games ADD COLUMN black_grace_until_ms BIGINT;
