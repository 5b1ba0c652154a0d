// Package storetest is the conformance suite of workshop.Store: every
// backend's tests call Run with a function that makes an empty store, and
// the backend is correct when the suite passes. It covers idempotency
// (every state-changing method called twice changes nothing twice),
// concurrency (many goroutines with the same keys: one effect each),
// isolation between rooms and learners, ending, deletion and retention.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/workshop"
)

// NewStore makes an empty store for one test; the test closes it.
type NewStore func(t *testing.T) workshop.Store

// Run runs the whole suite as subtests of t.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		test func(*testing.T, workshop.Store)
	}{
		{"Empty", testEmpty},
		{"CreateRoom", testCreateRoom},
		{"CreateRoom_SameKeyTwice", testCreateRoomTwice},
		{"CreateRoom_CodeTaken", testCodeTaken},
		{"Join", testJoin},
		{"Join_SameKeyTwice", testJoinTwice},
		{"Append", testAppend},
		{"Append_Replay", testAppendReplay},
		{"Append_KeyReusedWithOtherBody", testAppendKeyReused},
		{"Append_KeysAreScopedToLearner", testKeyScope},
		{"Append_ConcurrentSameKeys", testAppendConcurrent},
		{"Events_PushesOnlyAndPaging", testEventsPaging},
		{"EndRoom", testEndRoom},
		{"DeleteRoom", testDeleteRoom},
		{"DeleteRoomsCreatedBefore", testRetention},
		{"RenameAndRemoveLearner", testRenameRemove},
		{"Append_ChaosRunKeepsItsPushID", testChaosRunPushID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() { s.Close() })
			tt.test(t, s)
		})
	}
}

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func ctx(t *testing.T) context.Context { return t.Context() }

func mustRoom(t *testing.T, s workshop.Store, key, code string) workshop.Room {
	t.Helper()
	r, err := s.CreateRoom(ctx(t), workshop.Key(key), workshop.RoomSpec{Name: "Room " + key, Lessons: []string{"01-intro", "02-dedupe"}, Exercises: []string{"ex-1"}}, workshop.Code(code), t0)
	if err != nil {
		t.Fatalf("CreateRoom(%s): %v", key, err)
	}
	return r
}

func mustJoin(t *testing.T, s workshop.Store, room workshop.Room, key, name string) workshop.Learner {
	t.Helper()
	l, err := s.Join(ctx(t), room.ID, workshop.Key(key), name, workshop.NewToken(), t0.Add(time.Minute))
	if err != nil {
		t.Fatalf("Join(%s): %v", name, err)
	}
	return l
}

// testChaosRunPushID: a chaos re-run names its push by the push's event id
// (Number), and event ids start at Unix milliseconds × 1000 (past 32 bits),
// so the store keeps a Number that large.
func testChaosRunPushID(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	push := mustAppend(t, s, "push-chaos-1", workshop.Event{RoomID: room.ID, Kind: workshop.KindChaos, Detail: "duplicate", At: t0.Add(time.Minute)})
	for _, n := range []int{int(push.ID), 1 << 53} {
		run := workshop.Event{RoomID: room.ID, LearnerID: ada.ID, Kind: workshop.KindChaosRun, Number: n, Item: "pg-1.dedupe-tx", Passed: true, At: t0.Add(2 * time.Minute)}
		got := mustAppend(t, s, fmt.Sprintf("chaos-run-%d", n), run)
		evs := allEvents(t, s, room, false)
		if got.Number != n || evs[len(evs)-1].Number != n {
			t.Errorf("a chaos run of push %d is stored with number %d, read back as %d", n, got.Number, evs[len(evs)-1].Number)
		}
	}
}

func checked(room workshop.Room, l workshop.Learner, passed bool, detail string) workshop.Event {
	return workshop.Event{RoomID: room.ID, LearnerID: l.ID, Kind: workshop.KindExerciseChecked, Exercise: "ex-1", Passed: passed, Detail: detail, At: t0.Add(2 * time.Minute)}
}

func mustAppend(t *testing.T, s workshop.Store, key string, e workshop.Event) workshop.Event {
	t.Helper()
	got, replayed, err := s.Append(ctx(t), workshop.Key(key), e)
	if err != nil || replayed {
		t.Fatalf("Append(%s) = replayed %v, %v; want a new event", key, replayed, err)
	}
	return got
}

func allEvents(t *testing.T, s workshop.Store, room workshop.Room, pushesOnly bool) []workshop.Event {
	t.Helper()
	evs, err := s.Events(ctx(t), room.ID, 0, pushesOnly, 100000)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	return evs
}

func kinds(evs []workshop.Event) []workshop.Kind {
	var ks []workshop.Kind
	for _, e := range evs {
		ks = append(ks, e.Kind)
	}
	return ks
}

func testEmpty(t *testing.T, s workshop.Store) {
	if _, err := s.RoomByCode(ctx(t), "KQ7-M4P"); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("RoomByCode on an empty store: %v, want ErrNotFound", err)
	}
	if _, err := s.Room(ctx(t), 1); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("Room on an empty store: %v, want ErrNotFound", err)
	}
	if _, err := s.LearnerByToken(ctx(t), workshop.NewToken()); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("LearnerByToken on an empty store: %v, want ErrNotFound", err)
	}
	if rooms, err := s.Rooms(ctx(t)); err != nil || len(rooms) != 0 {
		t.Errorf("Rooms on an empty store = %v, %v; want none", rooms, err)
	}
	if evs, err := s.Events(ctx(t), 1, 0, false, 10); err != nil || len(evs) != 0 {
		t.Errorf("Events on an empty store = %v, %v; want none", evs, err)
	}
	if err := s.DeleteRoom(ctx(t), 1); err != nil {
		t.Errorf("DeleteRoom on an empty store: %v, want nil", err)
	}
}

func testCreateRoom(t *testing.T, s workshop.Store) {
	a := mustRoom(t, s, "key-room-a", "AAA-AAA")
	b := mustRoom(t, s, "key-room-b", "BBB-BBB")
	if a.ID == b.ID || a.Code != "AAA-AAA" || a.Name != "Room key-room-a" || !a.Open() || !a.CreatedAt.Equal(t0) {
		t.Errorf("CreateRoom = %+v", a)
	}
	if len(a.Lessons) != 2 || a.Lessons[1] != "02-dedupe" || len(a.Exercises) != 1 {
		t.Errorf("lists = %v, %v", a.Lessons, a.Exercises)
	}
	got, err := s.RoomByCode(ctx(t), "BBB-BBB")
	if err != nil || got.ID != b.ID {
		t.Errorf("RoomByCode = %+v, %v; want room %d", got, err, b.ID)
	}
	rooms, err := s.Rooms(ctx(t))
	if err != nil || len(rooms) != 2 || rooms[0].ID != b.ID {
		t.Errorf("Rooms = %+v, %v; want b then a", rooms, err)
	}
}

func testCreateRoomTwice(t *testing.T, s workshop.Store) {
	a := mustRoom(t, s, "key-room-a", "AAA-AAA")
	// The resubmitted form draws another code: the key wins, the code is unused.
	again := mustRoom(t, s, "key-room-a", "CCC-CCC")
	if again.ID != a.ID || again.Code != a.Code {
		t.Errorf("second CreateRoom with the key = %+v, want %+v", again, a)
	}
	_, err := s.CreateRoom(ctx(t), "key-room-a", workshop.RoomSpec{Name: "Other"}, "DDD-DDD", t0)
	if !errors.Is(err, workshop.ErrKeyReused) {
		t.Errorf("CreateRoom with the key and another spec: %v, want ErrKeyReused", err)
	}
	if rooms, _ := s.Rooms(ctx(t)); len(rooms) != 1 {
		t.Errorf("%d rooms, want 1", len(rooms))
	}
}

func testCodeTaken(t *testing.T, s workshop.Store) {
	mustRoom(t, s, "key-room-a", "AAA-AAA")
	_, err := s.CreateRoom(ctx(t), "key-room-b", workshop.RoomSpec{Name: "B"}, "AAA-AAA", t0)
	if !errors.Is(err, workshop.ErrCodeTaken) {
		t.Errorf("CreateRoom with a taken code: %v, want ErrCodeTaken", err)
	}
}

func testJoin(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	bob := mustJoin(t, s, room, "join-bob-1", "Bob")
	if ada.RoomID != room.ID || ada.Name != "Ada" || ada.ID == bob.ID || ada.Token == bob.Token {
		t.Errorf("Join = %+v, %+v", ada, bob)
	}
	got, err := s.LearnerByToken(ctx(t), bob.Token)
	if err != nil || got.ID != bob.ID || got.Name != "Bob" {
		t.Errorf("LearnerByToken = %+v, %v; want Bob", got, err)
	}
	ls, err := s.Learners(ctx(t), room.ID)
	if err != nil || len(ls) != 2 || ls[0].ID != ada.ID {
		t.Errorf("Learners = %+v, %v; want Ada, Bob", ls, err)
	}
	evs := allEvents(t, s, room, false)
	if len(evs) != 2 || evs[0].Kind != workshop.KindJoined || evs[0].LearnerID != ada.ID || evs[1].LearnerID != bob.ID {
		t.Errorf("events after two joins = %+v; want two joined events", evs)
	}
	if _, err := s.Join(ctx(t), room.ID+100, "join-eve-1", "Eve", workshop.NewToken(), t0); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("Join of a missing room: %v, want ErrNotFound", err)
	}
}

func testJoinTwice(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	first := mustJoin(t, s, room, "join-ada-1", "Ada")
	again := mustJoin(t, s, room, "join-ada-1", "Ada")
	if again.ID != first.ID || again.Token != first.Token {
		t.Errorf("second Join with the key = %+v, want %+v (same learner, same token)", again, first)
	}
	if _, err := s.Join(ctx(t), room.ID, "join-ada-1", "Eve", workshop.NewToken(), t0); !errors.Is(err, workshop.ErrKeyReused) {
		t.Errorf("Join with the key and another name: %v, want ErrKeyReused", err)
	}
	if ls, _ := s.Learners(ctx(t), room.ID); len(ls) != 1 {
		t.Errorf("%d learners, want 1", len(ls))
	}
	if evs := allEvents(t, s, room, false); len(evs) != 1 {
		t.Errorf("%d events, want 1 joined", len(evs))
	}
}

func testAppend(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	e := checked(room, ada, false, "deliver m1 lose-ack; redeliver m1")
	e.Playground = "scenario=lost-ack&script=deliver+m1+lose-ack%3B+redeliver+m1"
	got := mustAppend(t, s, "event-key-1", e)
	if got.ID == 0 || got.Kind != e.Kind || got.Exercise != "ex-1" || got.Passed || got.Detail != e.Detail || got.Playground != e.Playground || !got.At.Equal(e.At) || got.LearnerID != ada.ID {
		t.Errorf("Append = %+v, want %+v with an id", got, e)
	}
	second := mustAppend(t, s, "event-key-2", checked(room, ada, true, ""))
	if second.ID <= got.ID {
		t.Errorf("ids %d then %d, want increasing", got.ID, second.ID)
	}
	evs := allEvents(t, s, room, false)
	if len(evs) != 3 || evs[1] != got || evs[2] != second {
		t.Errorf("Events = %+v", evs)
	}
}

func testAppendReplay(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	e := checked(room, ada, true, "")
	first := mustAppend(t, s, "event-key-1", e)
	e.At = e.At.Add(time.Hour) // a retry an hour later: same event, another time
	again, replayed, err := s.Append(ctx(t), "event-key-1", e)
	if err != nil || !replayed || again != first {
		t.Errorf("replay = %+v, %v, %v; want the stored %+v, replayed", again, replayed, err, first)
	}
	if n := len(allEvents(t, s, room, false)); n != 2 {
		t.Errorf("%d events after a replay, want 2 (joined, checked)", n)
	}
}

func testAppendKeyReused(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	mustAppend(t, s, "event-key-1", checked(room, ada, false, "deliver m1"))
	for _, other := range []workshop.Event{checked(room, ada, true, ""), checked(room, ada, false, "deliver m2"),
		{RoomID: room.ID, LearnerID: ada.ID, Kind: workshop.KindHandRaised, At: t0}} {
		if _, _, err := s.Append(ctx(t), "event-key-1", other); !errors.Is(err, workshop.ErrKeyReused) {
			t.Errorf("Append(%+v) with a used key: %v, want ErrKeyReused", other, err)
		}
	}
}

func testKeyScope(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	other := mustRoom(t, s, "key-room-b", "BBB-BBB")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	bob := mustJoin(t, s, room, "join-bob-1", "Bob")
	eve := mustJoin(t, s, other, "join-eve-1", "Eve")
	// One key, three learners (two rooms) and the instructor: four events.
	mustAppend(t, s, "same-key-1", checked(room, ada, true, ""))
	mustAppend(t, s, "same-key-1", checked(room, bob, false, "x"))
	mustAppend(t, s, "same-key-1", checked(other, eve, true, ""))
	mustAppend(t, s, "same-key-1", workshop.Event{RoomID: room.ID, Kind: workshop.KindChaos, Detail: "replay", At: t0})
	if n := len(allEvents(t, s, room, false)); n != 5 {
		t.Errorf("room a has %d events, want 5 (2 joined, 3 appended)", n)
	}
	if evs := allEvents(t, s, other, false); len(evs) != 2 || evs[1].LearnerID != eve.ID {
		t.Errorf("room b events = %+v; want Eve's joined and checked only", evs)
	}
}

// testAppendConcurrent is the course's own lesson: many deliveries of the
// same messages at once, one effect each.
func testAppendConcurrent(t *testing.T, s workshop.Store) {
	appendConcurrently(t, []workshop.Store{s})
}

// appendConcurrently has 16 writers, spread over the stores, append the
// same 40 keys at once, and checks each key has one event.
func appendConcurrently(t *testing.T, stores []workshop.Store) {
	s := stores[0]
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	const workers, keys = 16, 40
	ids := make([][keys]int64, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers*keys)
	for w := range workers {
		store := stores[w%len(stores)]
		wg.Go(func() {
			for k := range keys {
				// Workers walk the keys in different orders, so they collide.
				k = (k + w*7) % keys
				e := workshop.Event{RoomID: room.ID, LearnerID: ada.ID, Kind: workshop.KindGoalReached, Lesson: "01-intro", Item: fmt.Sprint("goal-", k), At: t0}
				got, _, err := store.Append(context.Background(), workshop.Key(fmt.Sprintf("concurrent-%03d", k)), e)
				if err != nil {
					errs <- fmt.Errorf("worker %d key %d: %w", w, k, err)
					continue
				}
				ids[w][k] = got.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for k := range keys {
		for w := 1; w < workers; w++ {
			if ids[w][k] != ids[0][k] {
				t.Fatalf("key %d: worker 0 got event %d, worker %d got %d; want one event per key", k, ids[0][k], w, ids[w][k])
			}
		}
	}
	for i, store := range stores {
		if n := len(allEvents(t, store, room, false)); n != keys+1 {
			t.Errorf("store %d sees %d events after %d workers × %d keys, want %d (joined + one per key)", i, n, workers, keys, keys+1)
		}
	}
}

// OpenShared opens n stores on one empty database, each with connections
// of its own, as n replicas would; the test closes them.
type OpenShared func(t *testing.T, n int) []workshop.Store

// RunShared runs the cases of several stores sharing one database: many
// writers with the same idempotency keys, from several stores at once,
// give one effect each.
func RunShared(t *testing.T, open OpenShared) {
	tests := []struct {
		name string
		test func(*testing.T, []workshop.Store)
	}{
		{"Append_ConcurrentSameKeys_SeveralStores", appendConcurrently},
		{"CreateRoomAndJoin_ConcurrentSameKeys_SeveralStores", createAndJoinConcurrently},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stores := open(t, 3)
			t.Cleanup(func() {
				for _, s := range stores {
					s.Close()
				}
			})
			tt.test(t, stores)
		})
	}
}

// createAndJoinConcurrently creates one room and joins one learner from
// every store at once with the same keys: one room, one learner, one
// joined event.
func createAndJoinConcurrently(t *testing.T, stores []workshop.Store) {
	const perStore = 4
	var wg sync.WaitGroup
	rooms := make([]workshop.Room, len(stores)*perStore)
	learners := make([]workshop.Learner, len(rooms))
	errs := make([]error, len(rooms))
	for i := range rooms {
		s := stores[i%len(stores)]
		wg.Go(func() {
			spec := workshop.RoomSpec{Name: "Shared", Lessons: []string{"01-intro"}}
			rooms[i], errs[i] = s.CreateRoom(context.Background(), "key-room-shared", spec, workshop.Code(fmt.Sprintf("C%02d-AAA", i)), t0)
			if errs[i] != nil {
				return
			}
			learners[i], errs[i] = s.Join(context.Background(), rooms[i].ID, "join-ada-1", "Ada", workshop.NewToken(), t0)
		})
	}
	wg.Wait()
	for i := range rooms {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		if rooms[i].ID != rooms[0].ID || learners[i].ID != learners[0].ID || learners[i].Token != learners[0].Token {
			t.Fatalf("writer %d got room %d learner %d, writer 0 room %d learner %d; want one of each", i, rooms[i].ID, learners[i].ID, rooms[0].ID, learners[0].ID)
		}
	}
	if rs, _ := stores[1].Rooms(ctx(t)); len(rs) != 1 {
		t.Errorf("%d rooms, want 1", len(rs))
	}
	if evs := allEvents(t, stores[2], rooms[0], false); len(evs) != 1 || evs[0].Kind != workshop.KindJoined {
		t.Errorf("events = %v; want one joined", kinds(evs))
	}
}

func testEventsPaging(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	mustAppend(t, s, "event-key-1", workshop.Event{RoomID: room.ID, LearnerID: ada.ID, Kind: workshop.KindHandRaised, At: t0})
	pace := mustAppend(t, s, "push-key-1", workshop.Event{RoomID: room.ID, Kind: workshop.KindPace, Detail: workshop.PaceGoto, Lesson: "02-dedupe", Number: 2, At: t0})
	mustAppend(t, s, "event-key-2", workshop.Event{RoomID: room.ID, LearnerID: ada.ID, Kind: workshop.KindHandLowered, At: t0})
	chaos := mustAppend(t, s, "push-key-2", workshop.Event{RoomID: room.ID, Kind: workshop.KindChaos, Detail: "lose-ack", At: t0})
	pushes := allEvents(t, s, room, true)
	if len(pushes) != 2 || pushes[0] != pace || pushes[1] != chaos {
		t.Errorf("pushes = %+v; want pace, chaos", pushes)
	}
	if after, _ := s.Events(ctx(t), room.ID, pace.ID, true, 10); len(after) != 1 || after[0] != chaos {
		t.Errorf("pushes after %d = %+v; want chaos", pace.ID, after)
	}
	all := allEvents(t, s, room, false)
	page, _ := s.Events(ctx(t), room.ID, all[1].ID, false, 2)
	if len(page) != 2 || page[0] != all[2] || page[1] != all[3] {
		t.Errorf("page of 2 after event %d = %v; want %v", all[1].ID, kinds(page), kinds(all[2:4]))
	}
}

func testEndRoom(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	before := mustAppend(t, s, "event-key-1", checked(room, ada, true, ""))
	for range 2 {
		ended, err := s.EndRoom(ctx(t), room.ID, t0.Add(time.Hour))
		if err != nil || ended.Open() || !ended.EndedAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("EndRoom = %+v, %v", ended, err)
		}
	}
	if pushes := allEvents(t, s, room, true); len(pushes) != 1 || pushes[0].Kind != workshop.KindRoomEnded {
		t.Errorf("pushes after ending twice = %v; want one room_ended", kinds(pushes))
	}
	if _, _, err := s.Append(ctx(t), "event-key-2", checked(room, ada, false, "y")); !errors.Is(err, workshop.ErrRoomEnded) {
		t.Errorf("Append after the end: %v, want ErrRoomEnded", err)
	}
	if got, replayed, err := s.Append(ctx(t), "event-key-1", checked(room, ada, true, "")); err != nil || !replayed || got != before {
		t.Errorf("replay after the end = %+v, %v, %v; want the stored event", got, replayed, err)
	}
	if _, err := s.Join(ctx(t), room.ID, "join-bob-1", "Bob", workshop.NewToken(), t0); !errors.Is(err, workshop.ErrRoomEnded) {
		t.Errorf("Join after the end: %v, want ErrRoomEnded", err)
	}
	if again, err := s.Join(ctx(t), room.ID, "join-ada-1", "Ada", workshop.NewToken(), t0); err != nil || again.ID != ada.ID {
		t.Errorf("a replayed Join after the end = %+v, %v; want Ada", again, err)
	}
}

func testDeleteRoom(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "key-room-a", "AAA-AAA")
	keep := mustRoom(t, s, "key-room-b", "BBB-BBB")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	bob := mustJoin(t, s, keep, "join-bob-1", "Bob")
	mustAppend(t, s, "event-key-1", checked(room, ada, true, ""))
	for range 2 {
		if err := s.DeleteRoom(ctx(t), room.ID); err != nil {
			t.Fatalf("DeleteRoom: %v", err)
		}
	}
	if _, err := s.Room(ctx(t), room.ID); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("Room after delete: %v", err)
	}
	if _, err := s.LearnerByToken(ctx(t), ada.Token); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("LearnerByToken after delete: %v", err)
	}
	if evs := allEvents(t, s, room, false); len(evs) != 0 {
		t.Errorf("events after delete: %v", kinds(evs))
	}
	if _, _, err := s.Append(ctx(t), "event-key-2", checked(room, ada, true, "")); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("Append to a deleted room: %v, want ErrNotFound", err)
	}
	if got, err := s.LearnerByToken(ctx(t), bob.Token); err != nil || got.ID != bob.ID {
		t.Errorf("the other room's learner: %+v, %v", got, err)
	}
	// Event ids are never reused: a resuming view cannot confuse a new event for an old one.
	last := allEvents(t, s, keep, false)
	next := mustAppend(t, s, "event-key-3", checked(keep, bob, true, ""))
	if next.ID <= last[len(last)-1].ID {
		t.Errorf("event id %d after deleting, want above %d", next.ID, last[len(last)-1].ID)
	}
}

func testRetention(t *testing.T, s workshop.Store) {
	old, err := s.CreateRoom(ctx(t), "key-room-a", workshop.RoomSpec{Name: "Old"}, "AAA-AAA", t0.Add(-40*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	young := mustRoom(t, s, "key-room-b", "BBB-BBB")
	n, err := s.DeleteRoomsCreatedBefore(ctx(t), t0.Add(-30*24*time.Hour))
	if err != nil || n != 1 {
		t.Errorf("DeleteRoomsCreatedBefore = %d, %v; want 1", n, err)
	}
	if _, err := s.Room(ctx(t), old.ID); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("the old room: %v, want ErrNotFound", err)
	}
	if _, err := s.Room(ctx(t), young.ID); err != nil {
		t.Errorf("the young room: %v", err)
	}
}

func testRenameRemove(t *testing.T, s workshop.Store) {
	room := mustRoom(t, s, "room-key-1", "KQ7-M4P")
	ada := mustJoin(t, s, room, "join-ada-1", "Ada")
	bob := mustJoin(t, s, room, "join-bob-1", "Bob")
	for range 2 { // the same name twice: one event
		l, err := s.RenameLearner(ctx(t), room.ID, ada.ID, "Ada L.", t0)
		if err != nil || l.Name != "Ada L." || l.Token != ada.Token {
			t.Fatalf("rename: %+v, %v", l, err)
		}
	}
	if got, err := s.LearnerByToken(ctx(t), ada.Token); err != nil || got.Name != "Ada L." {
		t.Errorf("the renamed learner by token: %+v, %v", got, err)
	}
	for range 2 {
		if err := s.RemoveLearner(ctx(t), room.ID, bob.ID, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.LearnerByToken(ctx(t), bob.Token); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("a removed learner's token: %v, want ErrNotFound", err)
	}
	if ls, err := s.Learners(ctx(t), room.ID); err != nil || len(ls) != 1 || ls[0].ID != ada.ID {
		t.Errorf("learners after removing Bob: %+v, %v", ls, err)
	}
	if _, err := s.RenameLearner(ctx(t), room.ID, bob.ID, "Robert", t0); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("renaming a removed learner: %v, want ErrNotFound", err)
	}
	if _, err := s.RenameLearner(ctx(t), room.ID+1, ada.ID, "Eve", t0); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("renaming through another room: %v, want ErrNotFound", err)
	}
	var got []string
	for _, e := range allEvents(t, s, room, false) {
		got = append(got, string(e.Kind)+":"+e.Item)
	}
	if want := "joined: joined: renamed:Ada L. removed:"; strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", strings.Join(got, " "), want)
	}
}
