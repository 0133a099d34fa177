-- An account's picture (updateAccount's profilePicture): a URL, as given.
ALTER TABLE accounts ADD COLUMN profile_picture TEXT NOT NULL DEFAULT '';
