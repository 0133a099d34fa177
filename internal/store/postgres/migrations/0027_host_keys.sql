-- The Node host's bot API keys were derived from the bot's signing secret,
-- which every workspace member could read: they are retired (the server
-- refuses them too), and each bot's bundle gets a key derived from a
-- server secret at its next event.
DELETE FROM bot_keys WHERE id LIKE 'bak\_host%' ESCAPE '\';
