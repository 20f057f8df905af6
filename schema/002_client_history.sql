-- 002_client_history.sql: a client's own batches in seq order.
--
-- Undo and redo walk one client's latest batches in a scene; without this
-- index that is a sort of every batch the client ever sent.
CREATE INDEX edits_history ON edits (scene_id, client, seq);
