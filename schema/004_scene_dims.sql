-- 004_scene_dims.sql: a scene is 3D (the default) or 2D.
--
-- A 2D scene keeps every node in the xy plane (t.z = 0, rotation about z
-- only, s.z = 1, pivot.z = 0); the edit layer refuses an op that leaves it,
-- so a 2D scene's log holds only ops in the plane. The log itself does not
-- say which a scene is: this column does, and replay, time travel, check
-- and import read it before the first row. Scenes created before this
-- version are 3D.
ALTER TABLE scenes ADD COLUMN dims INTEGER NOT NULL DEFAULT 3 CHECK (dims IN (2, 3));
