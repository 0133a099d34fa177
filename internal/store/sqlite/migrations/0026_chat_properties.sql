-- The Runtime API's properties of users and conversations and attributes of
-- users: free string maps the bot sets and reads back, kept as JSON like
-- tags, but never filtered on.
ALTER TABLE chat_users ADD COLUMN properties TEXT NOT NULL DEFAULT '{}';
ALTER TABLE chat_users ADD COLUMN attributes TEXT NOT NULL DEFAULT '{}';
ALTER TABLE conversations ADD COLUMN properties TEXT NOT NULL DEFAULT '{}';
