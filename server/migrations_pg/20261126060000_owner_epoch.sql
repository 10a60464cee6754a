-- Fencing of live games between the nodes of a cluster (issue 18): the epoch of the node
-- running the game. A takeover adds one; a journal row or an end is written only by a
-- writer that has the row's epoch, so a node that lost the game while stalled can no
-- longer write to it.
ALTER TABLE games ADD COLUMN owner_epoch BIGINT NOT NULL DEFAULT 0;
