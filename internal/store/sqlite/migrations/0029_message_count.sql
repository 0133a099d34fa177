-- A conversation's number of messages, kept by triggers as messages are
-- added and deleted (by any path: the APIs, a person's data deleted, an
-- archive imported, a cascade), so that reading it does not count them.
ALTER TABLE conversations ADD COLUMN message_count BIGINT NOT NULL DEFAULT 0;
UPDATE conversations SET message_count = (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = conversations.id);
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages BEGIN
  UPDATE conversations SET message_count = message_count + 1 WHERE id = NEW.conversation_id;
END;
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages BEGIN
  UPDATE conversations SET message_count = message_count - 1 WHERE id = OLD.conversation_id;
END;
