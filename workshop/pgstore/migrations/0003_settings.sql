-- Settings every replica shares: the instructor key ("instructor_key"),
-- made by the first replica that starts and rotated by `serve
-- -rotate-instructor-key`.
CREATE TABLE settings (
	name  text PRIMARY KEY,
	value text NOT NULL
);
