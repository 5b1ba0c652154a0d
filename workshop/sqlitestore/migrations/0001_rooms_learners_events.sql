-- Rooms, their learners, and every event of a room: learners' progress and
-- the instructor's pushes. Times are Unix milliseconds.
CREATE TABLE rooms (
	id         INTEGER PRIMARY KEY,
	code       TEXT    NOT NULL UNIQUE,
	create_key TEXT    NOT NULL UNIQUE,
	name       TEXT    NOT NULL,
	lessons    TEXT    NOT NULL, -- slugs, one per line
	exercises  TEXT    NOT NULL, -- ids, one per line
	created_at INTEGER NOT NULL,
	ended_at   INTEGER           -- NULL while the room is open
) STRICT;

CREATE INDEX rooms_created_at ON rooms (created_at);

CREATE TABLE learners (
	id        INTEGER PRIMARY KEY,
	room_id   INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	join_key  TEXT    NOT NULL,
	name      TEXT    NOT NULL,
	token     TEXT    NOT NULL UNIQUE,
	joined_at INTEGER NOT NULL,
	UNIQUE (room_id, join_key)
) STRICT;

-- The idempotency key lives in the event's own row: the unique constraint
-- makes recording the key and the event one atomic insert. learner_id 0 is
-- the instructor. AUTOINCREMENT: ids are never reused, so a server-sent
-- events id stays a valid resume point.
CREATE TABLE events (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	room_id     INTEGER NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	learner_id  INTEGER NOT NULL,
	idem_key    TEXT    NOT NULL,
	fingerprint BLOB    NOT NULL,
	kind        TEXT    NOT NULL,
	push        INTEGER NOT NULL, -- 1: learners receive it
	lesson      TEXT    NOT NULL,
	exercise    TEXT    NOT NULL,
	item        TEXT    NOT NULL,
	passed      INTEGER NOT NULL,
	detail      TEXT    NOT NULL,
	number      INTEGER NOT NULL,
	at          INTEGER NOT NULL,
	UNIQUE (room_id, learner_id, idem_key)
) STRICT;

CREATE INDEX events_room_push ON events (room_id, push, id);
