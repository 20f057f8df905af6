-- 003_ops_bin.sql: each logged batch's ops a second time, as a binary image.
--
-- Replay (opening a scene's log tail, time travel, `rigd check`) decodes
-- every row's ops. Read from JSON with cJSON that costs more than applying
-- them; the engine's binary image (a leading format byte, then every op's
-- fields little-endian, doubles bit for bit; see engine.h) decodes several
-- times faster. The JSON stays the reference: for export, for people, and
-- for rows logged before this version, whose ops_bin is NULL and which keep
-- replaying from it. `rigd check` proves both columns hold the same ops.
ALTER TABLE edits ADD COLUMN ops_bin BLOB;
