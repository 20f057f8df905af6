-- 005_assets.sql: SVG artwork stored with a scene.
--
-- An asset is the sanitised bytes of one SVG document (server/codec/svg.c),
-- stored under a file name in one scene by the batch with seq 'seq' (an SVG
-- import: the asset and the nodes bound to it, one batch). Assets are
-- immutable and append-only: a file name is taken once per scene, the row
-- is never updated, and it goes only with its scene. So the assets of a
-- scene as of seq N are the rows with seq <= N, which is how time travel,
-- log export (each asset rides on the log line of its seq) and log import
-- (which stores it again under that seq) see them, without snapshots
-- holding them.
--
-- sha256 is the lowercase hex SHA-256 of 'svg', the asset's address: the
-- ETag it is served with and what log import checks the bytes against.
-- 'ids' lists the ids of the document's elements, sorted, one per line,
-- which an SVG import's manifest and a node's layer are checked against.
CREATE TABLE assets (
	scene_id INTEGER NOT NULL REFERENCES scenes(id) ON DELETE CASCADE,
	file     TEXT NOT NULL,
	seq      INTEGER NOT NULL CHECK (seq >= 1),
	sha256   TEXT NOT NULL CHECK (length(sha256) = 64),
	svg      BLOB NOT NULL,
	ids      TEXT NOT NULL,
	PRIMARY KEY (scene_id, file)
) WITHOUT ROWID;
