-- An installed integration's registration: "registered", or
-- "registration_failed" with the integration's reason (its register
-- handler threw), and the named configuration in use ("" is the default).
ALTER TABLE bot_integrations ADD COLUMN status TEXT NOT NULL DEFAULT 'registered';
ALTER TABLE bot_integrations ADD COLUMN status_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE bot_integrations ADD COLUMN configuration_type TEXT NOT NULL DEFAULT '';
