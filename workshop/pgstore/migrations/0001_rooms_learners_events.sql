-- Rooms, their learners, and every event of a room: learners' progress and
-- the instructor's pushes. PostgreSQL's dialect of sqlitestore's schema;
-- times are timestamptz (millisecond precision is what the store keeps).
CREATE TABLE rooms (
	id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	code       text        NOT NULL UNIQUE,
	create_key text        NOT NULL UNIQUE,
	name       text        NOT NULL,
	lessons    text[]      NOT NULL,
	exercises  text[]      NOT NULL,
	created_at timestamptz NOT NULL,
	ended_at   timestamptz           -- NULL while the room is open
);

CREATE INDEX rooms_created_at ON rooms (created_at);

CREATE TABLE learners (
	id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	room_id   bigint      NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	join_key  text        NOT NULL,
	name      text        NOT NULL,
	token     text        NOT NULL UNIQUE,
	joined_at timestamptz NOT NULL,
	UNIQUE (room_id, join_key)
);

-- The idempotency key lives in the event's own row: the unique constraint
-- makes recording the key and the event one atomic insert. learner_id 0 is
-- the instructor. Identity values are never reused, so a server-sent events
-- id stays a valid resume point.
CREATE TABLE events (
	id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	room_id     bigint      NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
	learner_id  bigint      NOT NULL,
	idem_key    text        NOT NULL,
	fingerprint bytea       NOT NULL,
	kind        text        NOT NULL,
	push        boolean     NOT NULL, -- learners receive it
	lesson      text        NOT NULL,
	exercise    text        NOT NULL,
	item        text        NOT NULL,
	passed      boolean     NOT NULL,
	detail      text        NOT NULL,
	number      integer     NOT NULL,
	at          timestamptz NOT NULL,
	UNIQUE (room_id, learner_id, idem_key)
);

CREATE INDEX events_room_push ON events (room_id, push, id);
