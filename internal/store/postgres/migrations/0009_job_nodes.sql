-- The node (server process) that claimed a running job: at start a node
-- hands back its own leases, left by a crash, and no other node's.
ALTER TABLE jobs ADD COLUMN node_id TEXT NOT NULL DEFAULT '';
