-- 001_initial.sql: the first version of the rigd database.
--
-- The truth is the append-only edit log. The state of a scene at seq N is
-- the latest snapshot at or before N plus the log rows after it; the current
-- state is the state at the scene's last seq. There is no "current node
-- state" table: it would cost one or more row writes per op on every commit
-- (a subtree delete touches every node in it) and would still not answer
-- "the scene at an earlier seq". Snapshots are written every so many logged
-- ops inside the same transaction as the batches they follow, so opening a
-- scene replays a bounded tail whatever the length of its log.
--
-- Migrations are applied in order at open, each in its own transaction with
-- PRAGMA user_version set to the file's number. Never edit a released
-- migration: add the next number.

-- 'rigd' in ASCII: marks the file as ours (store_open refuses others).
PRAGMA application_id = 1919510372;

CREATE TABLE scenes (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_us INTEGER NOT NULL            -- microseconds since the Unix epoch
);

-- One row per accepted batch. seq is gapless per scene, from 1.
-- kind: 0 an edit, 1 an undo of batch 'target', 2 a redo of batch 'target'.
-- ops and inverse are JSON arrays of ops in the edit language; applying
-- 'inverse' to the state after this batch gives the state before it.
CREATE TABLE edits (
	scene_id   INTEGER NOT NULL REFERENCES scenes(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL CHECK (seq >= 1),
	time_us    INTEGER NOT NULL,
	client     TEXT NOT NULL,
	client_seq INTEGER,                    -- NULL: the sender gave none
	kind       INTEGER NOT NULL DEFAULT 0 CHECK (kind IN (0, 1, 2)),
	target     INTEGER,                    -- the undone or redone seq
	n_ops      INTEGER NOT NULL,
	ops        TEXT NOT NULL,
	inverse    TEXT NOT NULL,
	PRIMARY KEY (scene_id, seq)
) WITHOUT ROWID;

-- A resend of (client, client_seq) is acknowledged with its original seq.
-- NULL client_seqs never collide (SQL NULLs are distinct in UNIQUE).
CREATE UNIQUE INDEX edits_client ON edits (scene_id, client, client_seq);

-- The whole scene after batch 'seq', in the engine's binary snapshot format
-- ('format' names its version): every node's stored values in preorder.
-- 'hash' is the 64-bit FNV-1a of 'data', checked before a snapshot is used.
-- `rigd check` proves each snapshot equal, byte for byte, to a replay of the
-- log up to its seq.
CREATE TABLE snapshots (
	scene_id INTEGER NOT NULL REFERENCES scenes(id) ON DELETE CASCADE,
	seq      INTEGER NOT NULL CHECK (seq >= 0),
	format   INTEGER NOT NULL,
	n_nodes  INTEGER NOT NULL,
	hash     INTEGER NOT NULL,             -- 64 bits stored as signed
	data     BLOB NOT NULL,
	PRIMARY KEY (scene_id, seq)
) WITHOUT ROWID;
