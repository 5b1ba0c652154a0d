package workshop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Service is workshop mode's rules on top of a Store: checks what people
// type, draws codes and tokens, turns concurrent duplicates into
// ErrKeyInProgress, and wakes followers after each commit.
type Service struct {
	store Store
	hub   *Hub
	now   func() time.Time

	// inflight holds the idempotency keys being recorded now, so that a
	// duplicate arriving meanwhile is told 409 at once instead of queueing
	// behind the first; the store's unique constraint is what guarantees
	// one effect, this only gives the duplicate its honest answer.
	inflight sync.Map // inflightKey → struct{}

	limits     Limits
	seatEvents *buckets // by learner id
	joins      *buckets // by client address

	mu    sync.Mutex
	rooms map[int64]Room // rooms read for Record's checks; their lists never change
	seats map[int64]int  // learners per room, as last counted here
	// classes are the rooms' class views, kept up to date (classcache.go).
	classes map[int64]*cachedClass
	// streams counts each learner's open streams here (presence.go).
	streams map[int64]int
	// lastSeen is when each learner's last stream here closed (presence.go).
	lastSeen map[int64]time.Time
	// joinedFrom counts the new seats joined here from each client address
	// (JoinFrom), which web's fair share counts for the address.
	joinedFrom map[string]int
}

type inflightKey struct {
	room, learner int64
	key           Key
}

// NewService serves workshops from store. now is the clock (nil: time.Now).
func NewService(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	s := &Service{store: store, hub: NewHub(), now: now,
		rooms: make(map[int64]Room), seats: make(map[int64]int), classes: make(map[int64]*cachedClass)}
	s.SetLimits(DefaultLimits())
	return s
}

// SetLimits replaces the limits (DefaultLimits until then); call it before
// serving. A zero rate means no limit on that.
func (s *Service) SetLimits(l Limits) {
	s.limits = l
	s.seatEvents = newBuckets(l.EventsPerSecond, l.EventBurst, s.now)
	s.joins = newBuckets(l.JoinsPerSecond, l.JoinBurst, s.now)
}

// Limits are the service's limits.
func (s *Service) Limits() Limits { return s.limits }

// Store is the service's store.
func (s *Service) Store() Store { return s.store }

// Hub is the service's fan-out, for a backend that wakes it from elsewhere.
func (s *Service) Hub() *Hub { return s.hub }

// Limits on what people type.
const (
	MaxRoomName    = 80
	MaxLearnerName = 40
	MaxRoomItems   = 100
)

// CheckRoomSpec checks a room's name and lists (their syntax; whether the
// lessons exist is the caller's to check against the course).
func CheckRoomSpec(spec RoomSpec) (RoomSpec, error) {
	name, err := cleanName("name", spec.Name, MaxRoomName)
	if err != nil {
		return spec, err
	}
	spec.Name = name
	for field, list := range map[string][]string{"lessons": spec.Lessons, "exercises": spec.Exercises} {
		if len(list) > MaxRoomItems {
			return spec, inputErrorf(field, "at most %d", MaxRoomItems)
		}
		seen := make(map[string]bool, len(list))
		for _, id := range list {
			if err := checkSlug(field, id); err != nil {
				return spec, err
			}
			if id == "" || seen[id] {
				return spec, inputErrorf(field, "%q is empty or listed twice", id)
			}
			seen[id] = true
		}
	}
	return spec, nil
}

// cleanName trims a display name and refuses control characters and names
// too short or too long.
func cleanName(field, name string, maxRunes int) (string, error) {
	name = strings.TrimSpace(name)
	if !utf8.ValidString(name) {
		return "", inputErrorf(field, "not valid UTF-8")
	}
	if name == "" {
		return "", inputErrorf(field, "missing")
	}
	if n := utf8.RuneCountInString(name); n > maxRunes {
		return "", inputErrorf(field, "at most %d characters; this one has %d", maxRunes, n)
	}
	for i, r := range name {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", inputErrorf(field, "character at byte %d is a control character", i)
		}
	}
	return name, nil
}

// CreateRoom creates a room with a fresh code. key makes it idempotent: a
// resubmitted form returns the same room.
func (s *Service) CreateRoom(ctx context.Context, key Key, spec RoomSpec) (Room, error) {
	spec, err := CheckRoomSpec(spec)
	if err != nil {
		return Room{}, err
	}
	for range 8 {
		room, err := s.store.CreateRoom(ctx, key, spec, NewCode(), s.now())
		if !errors.Is(err, ErrCodeTaken) {
			return room, err
		}
	}
	return Room{}, errors.New("workshop: eight random join codes in a row were taken")
}

// Join adds a learner to the open room with this code. key makes it
// idempotent: a resubmitted form returns the same learner and token. A
// room with Limits.SeatsPerRoom learners refuses with ErrRoomFull.
func (s *Service) Join(ctx context.Context, code Code, key Key, name string) (Room, Learner, error) {
	room, l, _, err := s.join(ctx, code, key, name)
	return room, l, err
}

// JoinFrom is Join for a request from client (its address, as web names
// it): new seats from one address are limited (Limits.JoinsPerSecond and
// JoinBurst), so nobody mints thousands of seats, while a class behind one
// NAT joins within the burst. A refusal is a *RateError; a replayed join
// (the same form again) costs nothing.
func (s *Service) JoinFrom(ctx context.Context, client string, code Code, key Key, name string) (Room, Learner, error) {
	if ok, retry := s.joins.take(client); !ok {
		return Room{}, Learner{}, &RateError{What: "joins from this address", RetryAfter: retry}
	}
	room, l, fresh, err := s.join(ctx, code, key, name)
	if !fresh {
		s.joins.refund(client)
	} else {
		s.mu.Lock()
		if s.joinedFrom == nil || len(s.joinedFrom) >= maxBuckets {
			s.joinedFrom = make(map[string]int) // a flood of addresses: start counting again
		}
		s.joinedFrom[client]++
		s.mu.Unlock()
	}
	return room, l, err
}

// SeatsJoinedFrom is how many new seats joined here from client (JoinFrom):
// a replayed join counts once.
func (s *Service) SeatsJoinedFrom(client string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.joinedFrom[client]
}

// join is Join; fresh tells a new seat from a replay or a refusal.
func (s *Service) join(ctx context.Context, code Code, key Key, name string) (Room, Learner, bool, error) {
	name, err := cleanName("name", name, MaxLearnerName)
	if err != nil {
		return Room{}, Learner{}, false, err
	}
	room, err := s.store.RoomByCode(ctx, code)
	if err != nil {
		return Room{}, Learner{}, false, err
	}
	if !room.Open() {
		return room, Learner{}, false, ErrRoomEnded
	}
	if err := s.checkSeats(ctx, room.ID); err != nil {
		return room, Learner{}, false, err
	}
	at := s.now()
	l, err := s.store.Join(ctx, room.ID, key, name, NewToken(), at)
	if err != nil {
		return room, l, false, err
	}
	fresh := l.JoinedAt.UnixMilli() == at.UnixMilli() // a replay returns the first join's time
	if fresh {
		s.mu.Lock()
		s.seats[room.ID]++
		s.mu.Unlock()
	}
	s.hub.Notify(room.ID, false)
	return room, l, fresh, nil
}

// checkSeats refuses a join to a room with Limits.SeatsPerRoom learners.
// The count is kept here and read again from the store only near the
// limit, so replicas each count what they see and agree at the limit.
func (s *Service) checkSeats(ctx context.Context, roomID int64) error {
	max := s.limits.SeatsPerRoom
	if max <= 0 {
		return nil
	}
	s.mu.Lock()
	n, known := s.seats[roomID]
	s.mu.Unlock()
	if known && n < max-1 {
		return nil
	}
	learners, err := s.store.Learners(ctx, roomID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.seats[roomID] = len(learners)
	s.mu.Unlock()
	if len(learners) >= max {
		return ErrRoomFull
	}
	return nil
}

// room reads a room for Record's checks, from memory after the first time:
// its lessons and exercises never change (whether it ended, the store
// checks in Append).
func (s *Service) room(ctx context.Context, roomID int64) (Room, error) {
	s.mu.Lock()
	room, ok := s.rooms[roomID]
	s.mu.Unlock()
	if ok {
		return room, nil
	}
	room, err := s.store.Room(ctx, roomID)
	if err != nil {
		return room, err
	}
	s.mu.Lock()
	if len(s.rooms) >= 4096 {
		clear(s.rooms)
	}
	s.rooms[roomID] = room
	s.mu.Unlock()
	return room, nil
}

// ErrNotInRoom: an event names a lesson or exercise the room does not
// cover. It comes as an *InputError naming the field (web: 400, or 422).
var ErrNotInRoom = errors.New("workshop: not one of the room's lessons or exercises")

// checkInRoom refuses an event about a lesson or exercise outside room.
func checkInRoom(room Room, e Event) error {
	if e.Lesson != "" && !slices.Contains(room.Lessons, e.Lesson) {
		return &InputError{Field: "lesson", Msg: fmt.Sprintf("%q is not one of this room's lessons", e.Lesson), Err: ErrNotInRoom}
	}
	if e.Exercise != "" && !slices.Contains(room.Exercises, e.Exercise) {
		return &InputError{Field: "exercise", Msg: fmt.Sprintf("%q is not one of this room's exercises", e.Exercise), Err: ErrNotInRoom}
	}
	return nil
}

// Resume finds a learner and their room by token.
func (s *Service) Resume(ctx context.Context, token Token) (Room, Learner, error) {
	l, err := s.store.LearnerByToken(ctx, token)
	if err != nil {
		return Room{}, Learner{}, err
	}
	room, err := s.store.Room(ctx, l.RoomID)
	return room, l, err
}

// Record appends an event a learner's browser sent (from DecodeEvent)
// under their key, as SourceBrowser. It refuses events about lessons or
// exercises outside the room (ErrNotInRoom), check results (the server
// records those: RecordCheck), and more than the seat's share of events
// (a *RateError; a replay of a stored event is not charged).
func (s *Service) Record(ctx context.Context, l Learner, key Key, e Event) (Event, bool, error) {
	switch {
	case e.Kind.Push():
		return Event{}, false, inputErrorf("kind", "%s is the instructor's", e.Kind)
	case e.Kind == KindExerciseChecked || e.Kind == KindJoined:
		return Event{}, false, inputErrorf("kind", "%s is recorded by the server, never sent by a browser", e.Kind)
	}
	room, err := s.room(ctx, l.RoomID)
	if err != nil {
		return Event{}, false, err
	}
	if err := checkInRoom(room, e); err != nil {
		return Event{}, false, err
	}
	seat := strconv.FormatInt(l.ID, 10)
	if ok, retry := s.seatEvents.take(seat); !ok {
		return Event{}, false, &RateError{What: "events from this seat", RetryAfter: retry}
	}
	e.RoomID, e.LearnerID, e.Source = l.RoomID, l.ID, SourceBrowser
	stored, replayed, err := s.append(ctx, key, e)
	if replayed || errors.Is(err, ErrKeyInProgress) {
		s.seatEvents.refund(seat)
	}
	return stored, replayed, err
}

// RecordRendered records what the server itself rendered for a learner in
// a room: a goal the playground state it drew meets (KindGoalReached:
// Lesson, Item: the goal) or the answer to a "predict, then run" question
// it drew (KindPredictionMade: Lesson, Item: the playground's id, Passed:
// right), as Source server. Each is recorded once per learner (its natural
// key): drawing the same state again is a replay. It is not charged to the
// seat's share of events, and refuses lessons outside the room
// (ErrNotInRoom), which web ignores.
func (s *Service) RecordRendered(ctx context.Context, l Learner, e Event) (Event, error) {
	if e.Kind != KindGoalReached && e.Kind != KindPredictionMade {
		return Event{}, inputErrorf("kind", "the server records goals and predictions it rendered, not %s", e.Kind)
	}
	if err := errors.Join(checkSlug("lesson", e.Lesson), checkSlug("item", e.Item)); err != nil || e.Lesson == "" || e.Item == "" {
		return Event{}, inputErrorf("item", "a rendered goal or prediction names its lesson and its id")
	}
	room, err := s.room(ctx, l.RoomID)
	if err != nil {
		return Event{}, err
	}
	if err := checkInRoom(room, e); err != nil {
		return Event{}, err
	}
	e = Event{Kind: e.Kind, RoomID: l.RoomID, LearnerID: l.ID, Lesson: e.Lesson, Item: e.Item, Passed: e.Passed && e.Kind == KindPredictionMade, Source: SourceServer}
	// '#' is in no client's key (ParseKey): the natural key is the server's.
	stored, _, err := s.append(ctx, Key("#"+string(e.Kind)+":"+e.Lesson+"/"+e.Item), e)
	if errors.Is(err, ErrKeyReused) {
		return stored, nil // a prediction answered again differently: the first answer stands
	}
	return stored, err
}

// Push appends an instructor's push (pace, countdown, chaos) to a room.
func (s *Service) Push(ctx context.Context, roomID int64, key Key, e Event) (Event, bool, error) {
	if !e.Kind.Push() || e.Kind == KindRoomEnded {
		return Event{}, false, inputErrorf("kind", "%s is not something an instructor pushes", e.Kind)
	}
	e.RoomID, e.LearnerID, e.Source = roomID, 0, SourceServer
	return s.append(ctx, key, e)
}

func (s *Service) append(ctx context.Context, key Key, e Event) (Event, bool, error) {
	ik := inflightKey{e.RoomID, e.LearnerID, key}
	if _, busy := s.inflight.LoadOrStore(ik, struct{}{}); busy {
		return Event{}, false, ErrKeyInProgress
	}
	defer s.inflight.Delete(ik)
	e.At = s.now()
	stored, replayed, err := s.store.Append(ctx, key, e)
	if err == nil && !replayed {
		s.hub.Notify(e.RoomID, e.Kind.Push())
	}
	return stored, replayed, err
}

// EndRoom ends a room; learners get a KindRoomEnded push.
func (s *Service) EndRoom(ctx context.Context, roomID int64) (Room, error) {
	room, err := s.store.EndRoom(ctx, roomID, s.now())
	if err == nil {
		s.hub.Notify(roomID, true)
	}
	return room, err
}

// RenameLearner changes a learner's display name (the instructor's
// correction); the class view and the export show the new one.
func (s *Service) RenameLearner(ctx context.Context, roomID, learnerID int64, name string) (Learner, error) {
	name, err := cleanName("name", name, MaxLearnerName)
	if err != nil {
		return Learner{}, err
	}
	l, err := s.store.RenameLearner(ctx, roomID, learnerID, name, s.now())
	if err == nil {
		s.hub.Notify(roomID, false)
	}
	return l, err
}

// RemoveLearner takes a learner out of the room: their resume link and
// cookie stop working, their seat is free, and they leave the class view
// (their events stay in the timeline). Removing twice changes nothing.
func (s *Service) RemoveLearner(ctx context.Context, roomID, learnerID int64) error {
	if err := s.store.RemoveLearner(ctx, roomID, learnerID, s.now()); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.seats, roomID) // counted again at the next join
	s.mu.Unlock()
	s.hub.Notify(roomID, false)
	return nil
}

// DeleteRoom deletes a room and everything in it.
func (s *Service) DeleteRoom(ctx context.Context, roomID int64) error {
	if err := s.store.DeleteRoom(ctx, roomID); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.rooms, roomID)
	delete(s.seats, roomID)
	delete(s.classes, roomID)
	s.mu.Unlock()
	s.hub.Forget(roomID)
	return nil
}

// DeleteExpired deletes the rooms created longer than retention ago.
func (s *Service) DeleteExpired(ctx context.Context, retention time.Duration) (int, error) {
	return s.store.DeleteRoomsCreatedBefore(ctx, s.now().Add(-retention))
}

// followBatch is how many events a follower reads at a time.
const followBatch = 500

// followRetry is how long a follower waits to read again while the store
// is unavailable.
const followRetry = time.Second

// Follow calls send with the room's events after the given id, in order,
// now and whenever more are committed, until ctx ends, send fails, or the
// room is deleted (then it returns ErrNotFound). It is the live fan-out:
// after is the Last-Event-ID a reconnecting view resumes from. While the
// store is unavailable it keeps trying, so a view outlives a database
// restart and catches up when the store is back.
func (s *Service) Follow(ctx context.Context, roomID, after int64, pushesOnly bool, send func([]Event) error) error {
	for {
		signal := s.hub.Signal(roomID, pushesOnly)
		var retry <-chan time.Time // set while the store is unavailable
		for {
			evs, err := s.store.Events(ctx, roomID, after, pushesOnly, followBatch)
			if errors.Is(err, ErrStoreUnavailable) {
				retry = time.After(followRetry)
				break
			}
			if err != nil {
				return err
			}
			if len(evs) == 0 {
				break
			}
			if err := send(evs); err != nil {
				return err
			}
			after = evs[len(evs)-1].ID
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-retry:
		case <-signal:
			if _, err := s.store.Room(ctx, roomID); err != nil && !errors.Is(err, ErrStoreUnavailable) {
				return err
			}
		}
	}
}
