-- The journal of live games in batch rows (see server/src/store/sql/batches.rs): one row
-- per transaction of the store's writer, its body a JSON array of [game id, index, entry].
-- A row per entry keyed by (game_id, idx) went in at its game's place among all the live
-- games', and SQLite logs whole pages: about a page written per move.
CREATE TABLE live_batches (
    id    INTEGER PRIMARY KEY,
    body  TEXT NOT NULL
);

-- The entries of games cut off by the stop before this migration, in one row.
INSERT INTO live_batches (body)
    SELECT json_group_array(json_array(game_id, idx, json(entry)))
    FROM (SELECT game_id, idx, entry FROM live_entries ORDER BY game_id, idx)
    HAVING COUNT(*) > 0;

DROP TABLE live_entries;

-- The entries as the keyed table showed them (read by hand and by tests; the server
-- reads the rows themselves).
CREATE VIEW live_entries AS
    SELECT json_extract(e.value, '$[0]') AS game_id,
           json_extract(e.value, '$[1]') AS idx,
           json_extract(e.value, '$[2]') AS entry,
           b.id AS batch,
           e.key AS pos
    FROM live_batches b, json_each(b.body) e;
