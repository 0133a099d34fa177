-- A conversation's number of messages, kept by a trigger as messages are
-- added and deleted (by any path: the APIs, a person's data deleted, an
-- archive imported, a cascade), so that reading it does not count them.
ALTER TABLE conversations ADD COLUMN message_count BIGINT NOT NULL DEFAULT 0;
UPDATE conversations c SET message_count = (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id);
CREATE FUNCTION messages_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE conversations SET message_count = message_count + 1 WHERE id = NEW.conversation_id;
  ELSE
    UPDATE conversations SET message_count = message_count - 1 WHERE id = OLD.conversation_id;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER messages_count AFTER INSERT OR DELETE ON messages FOR EACH ROW EXECUTE FUNCTION messages_count();
