-- vision.indexPages: a page indexed as an image keeps the image with its
-- passage; the images' bytes count against File Storage (files.extra_bytes,
-- on top of the file's size).
ALTER TABLE passages ADD COLUMN image BYTEA;
ALTER TABLE passages ADD COLUMN image_type TEXT NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN extra_bytes BIGINT NOT NULL DEFAULT 0;
