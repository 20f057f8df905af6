-- 008_client_seq_partial.sql: two costs taken out of every logged batch.
--
-- The writer inserts one row into 'edits' for each accepted batch, inside
-- the commit that every ack of its turn waits for. Two parts of the table
-- as first written cost that insert more than the row itself:
--
--   CHECK (kind IN (0, 1, 2))  SQLite codes an IN list in a CHECK as a
--                              temporary table, built and dropped for
--                              every row inserted (about a quarter of the
--                              insert's time); the same constraint as three
--                              comparisons costs nothing measurable.
--   edits_client               the resend index took an entry for every
--                              batch, yet only a batch with a client_seq
--                              can be resent; NULLs were never compared for
--                              uniqueness. It now holds those batches only,
--                              and the lookup (client_seq = ?) still reads
--                              it, as it implies client_seq IS NOT NULL.
--
-- SQLite cannot change a CHECK in place, so the table is built again under
-- its name and every row copied, in this migration's transaction: opening
-- an older database with this rigd rewrites its log once. A million logged
-- batches took 4.4 s on a 2-core machine, and about twice the log's size
-- in free disk (the WAL holds the copy until its checkpoint; the old
-- table's pages stay in the file as free pages, which later rows reuse).
CREATE TABLE edits_008 (
	scene_id   INTEGER NOT NULL REFERENCES scenes(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL CHECK (seq >= 1),
	time_us    INTEGER NOT NULL,
	client     TEXT NOT NULL,
	client_seq INTEGER,                    -- NULL: the sender gave none
	kind       INTEGER NOT NULL DEFAULT 0 CHECK (kind = 0 OR kind = 1 OR kind = 2),
	target     INTEGER,                    -- the undone or redone seq
	n_ops      INTEGER NOT NULL,
	ops        TEXT NOT NULL,
	inverse    TEXT NOT NULL,
	ops_bin    BLOB,                       -- see 003_ops_bin.sql
	PRIMARY KEY (scene_id, seq)
) WITHOUT ROWID;

INSERT INTO edits_008 (scene_id, seq, time_us, client, client_seq, kind, target, n_ops, ops,
		       inverse, ops_bin)
	SELECT scene_id, seq, time_us, client, client_seq, kind, target, n_ops, ops, inverse, ops_bin
	FROM edits ORDER BY scene_id, seq;

DROP TABLE edits;
ALTER TABLE edits_008 RENAME TO edits;

CREATE UNIQUE INDEX edits_client ON edits (scene_id, client, client_seq)
	WHERE client_seq IS NOT NULL;
CREATE INDEX edits_history ON edits (scene_id, client, seq);   -- see 002_client_history.sql
