-- Exporting and erasing a person (internal/privacy): a chat user's messages
-- and custom events are found by their user wherever they were sent, and a
-- bot's log lines by the user they carry, without reading every row.
CREATE INDEX messages_user ON messages(user_id);
CREATE INDEX chat_events_user ON chat_events(user_id);
CREATE INDEX bot_logs_user ON bot_logs(bot_id, user_id) WHERE user_id <> '';
