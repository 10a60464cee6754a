-- Display names are unique without regard to case: name_key is the name in NFC,
-- lower-cased (computed by the server). Of the players stored before this migration, the
-- first of each group of names equal but for ASCII case gets its key (lower() is ASCII
-- here); the others keep their names and have no key.
ALTER TABLE players ADD COLUMN name_key TEXT;
UPDATE players SET name_key = lower(name)
    WHERE id IN (SELECT min(id) FROM players GROUP BY lower(name));
CREATE UNIQUE INDEX players_name_key ON players (name_key);
