-- 006_scene_gens.sql: which incarnation of a cluster's scene this copy is.
--
-- In a cluster (--redis) every creation of a scene name is given a number
-- by Redis (its incarnation, from the counter rigd:scene-gen), which the
-- catalog rigd:scenes records with the scene's dims and the stream of
-- scene events carries. A process stores here the incarnation its copy of
-- a scene belongs to, so that when it connects again after being down it
-- can tell a scene deleted in the cluster meanwhile (the catalog no longer
-- has it, or has a later incarnation of the name) from a scene the cluster
-- never heard of (no row here: recorded as today). A scene that was never
-- in a cluster has no row. The row goes with its scene.
CREATE TABLE scene_gens (
	scene_id INTEGER PRIMARY KEY REFERENCES scenes(id) ON DELETE CASCADE,
	gen      INTEGER NOT NULL CHECK (gen >= 1)
);
