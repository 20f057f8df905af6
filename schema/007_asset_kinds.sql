-- 007_asset_kinds.sql: what an asset's bytes are.
--
-- Schema 5 stored SVG artwork only. A skeleton import (Spine or
-- DragonBones) stores several assets with its batch: the skeleton file as
-- posted, its texture atlas and the atlas's PNG pages. 'kind' says which,
-- so that the bytes are served with their own content type and checked by
-- their own reader (rigd check, log import); rows from before this
-- migration are SVG. The bytes stay in the column named 'svg' (a BLOB:
-- any bytes), and 'ids' lists what a layer "FILE#GROUP" may name in the
-- asset: an SVG's element ids, a skeleton's slot attachments, nothing for
-- an atlas or a page.
--
--   svg                the sanitised SVG document
--   png                a PNG page, re-encoded by rigd as 8-bit RGBA
--   spine              a Spine skeleton (JSON)
--   spine-atlas        a Spine texture atlas (.atlas text)
--   dragonbones        a DragonBones skeleton (_ske.json)
--   dragonbones-atlas  a DragonBones texture atlas (_tex.json)
ALTER TABLE assets ADD COLUMN kind TEXT NOT NULL DEFAULT 'svg'
	CHECK (kind IN ('svg', 'png', 'spine', 'spine-atlas', 'dragonbones', 'dragonbones-atlas'));
