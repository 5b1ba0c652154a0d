package workshop_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

func TestNewCode_ParsesBackAndAvoidsLookAlikes(t *testing.T) {
	for range 1000 {
		c := workshop.NewCode()
		if len(c) != 7 || c[3] != '-' || strings.ContainsAny(string(c), "0O1IL2Z5S8BUV") {
			t.Fatalf("NewCode() = %q", c)
		}
		got, err := workshop.ParseCode(strings.ToLower(strings.ReplaceAll(string(c), "-", " ")))
		if err != nil || got != c {
			t.Fatalf("ParseCode(%q) = %q, %v", c, got, err)
		}
	}
}

func TestParseCode_RejectsNamingTheProblem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "has 0"},
		{"KQ7-M4", "has 5"},
		{"KQ7-M4PA", "has more"},
		{"KQ0-M4P", `'0' is not in any join code`},
		{"KQ7-M4P!", `'!'`},
	} {
		_, err := workshop.ParseCode(tc.in)
		var ie *workshop.InputError
		if !errors.As(err, &ie) || ie.Field != "code" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCode(%q) = %v, want a code error saying %q", tc.in, err, tc.want)
		}
	}
}

func TestDecodeEvent_Accepts(t *testing.T) {
	for _, tc := range []struct {
		body string
		want workshop.Event
	}{
		{`{"kind":"lesson_opened","lesson":"01-intro"}`, workshop.Event{Kind: workshop.KindLessonOpened, Lesson: "01-intro"}},
		{`{"kind":"goal_reached","lesson":"01-intro","goal":"g1"}`, workshop.Event{Kind: workshop.KindGoalReached, Lesson: "01-intro", Item: "g1"}},
		{`{"kind":"quiz_answered","lesson":"l","quiz":"q2","correct":true}`, workshop.Event{Kind: workshop.KindQuizAnswered, Lesson: "l", Item: "q2", Passed: true}},
		{`{"kind":"hint_used","exercise":"ex-1","hint":2}`, workshop.Event{Kind: workshop.KindHintUsed, Exercise: "ex-1", Number: 2}},
		{` {"kind":"hand_raised"} `, workshop.Event{Kind: workshop.KindHandRaised}},
		{`{"kind":"chaos_run","push":7,"handler":"pg-1.idempotent","survived":true}`, workshop.Event{Kind: workshop.KindChaosRun, Number: 7, Item: "pg-1.idempotent", Passed: true}},
	} {
		got, err := workshop.DecodeEvent(strings.NewReader(tc.body))
		if err != nil || got != tc.want {
			t.Errorf("DecodeEvent(%s) = %+v, %v; want %+v", tc.body, got, err, tc.want)
		}
	}
}

func TestDecodeEvent_RejectsNamingTheField(t *testing.T) {
	for _, tc := range []struct{ body, field string }{
		{``, "body"},
		{`[`, "body"},
		{`{"kind":"lesson_opened","lesson":"a"} {}`, "body"},
		{`{"kind":"pace"}`, "kind"},
		{`{}`, "kind"},
		{`{"kind":"lesson_opened"}`, "lesson"},
		{`{"kind":"lesson_opened","lesson":"a b"}`, "lesson"},
		{`{"kind":"lesson_opened","lesson":"a","exercise":"x"}`, "exercise"},
		// Checks are the server's to record: a browser's claim is refused.
		{`{"kind":"exercise_checked","exercise":"x","passed":true}`, "kind"},
		{`{"kind":"exercise_checked","exercise":"x","passed":false,"counterexample":"c"}`, "kind"},
		{`{"kind":"quiz_answered","lesson":"l","correct":true}`, "quiz"},
		{`{"kind":"hint_used","exercise":"x","hint":0}`, "hint"},
		{`{"kind":"hand_raised","who":"me"}`, "who"},
		{`{"kind":"lesson_opened","lesson":"` + strings.Repeat("a", 3000) + `"}`, "body"},
		{`{"kind":"goal_reached","lesson":"l","goal":"g","passed":true}`, "passed"},
		{`{"kind":"lesson_opened","lesson":"l","playground":"a"}`, "playground"},
		{`{"kind":"chaos_run","handler":"h","survived":true}`, "push"},
		{`{"kind":"chaos_run","push":3,"survived":true}`, "handler"},
		{`{"kind":"chaos_run","push":3,"handler":"h"}`, "survived"},
		{`{"kind":"chaos_run","push":-3,"handler":"h","survived":false}`, "push"},
	} {
		_, err := workshop.DecodeEvent(strings.NewReader(tc.body))
		var ie *workshop.InputError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("DecodeEvent(%.60s) = %v, want an error about %q", tc.body, err, tc.field)
		}
	}
}

func TestParseKey(t *testing.T) {
	for _, ok := range []string{"0b6f2c1e-8f8a-4c53-9a3e-1f2d3c4b5a69", "evt:12345678"} {
		if _, err := workshop.ParseKey(ok); err != nil {
			t.Errorf("ParseKey(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "short", strings.Repeat("k", 101), "has space in it", "émoji-key-1"} {
		if _, err := workshop.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func TestPendingMigrations(t *testing.T) {
	known, err := sqlitestore.Migrations()
	if err != nil || len(known) == 0 {
		t.Fatalf("Migrations() = %v, %v", known, err)
	}
	if p, err := workshop.PendingMigrations(nil, known); err != nil || len(p) != len(known) {
		t.Errorf("fresh database: %d pending, %v", len(p), err)
	}
	all := []workshop.AppliedMigration{{Version: 1, Name: known[0].Name}}
	if p, err := workshop.PendingMigrations(all, known[:1]); err != nil || len(p) != 0 {
		t.Errorf("up to date: %d pending, %v", len(p), err)
	}
	for _, applied := range [][]workshop.AppliedMigration{
		{{Version: 1, Name: "renamed"}},
		{{Version: 1, Name: known[0].Name}, {Version: 3, Name: "gap"}},
		{{Version: len(known) + 1, Name: "future"}},
	} {
		if _, err := workshop.PendingMigrations(applied, known); err == nil {
			t.Errorf("PendingMigrations(%v) accepted", applied)
		}
	}
}

func newService(t *testing.T) (*workshop.Service, workshop.Store) {
	t.Helper()
	s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return workshop.NewService(s, nil), s
}

// slowStore holds Append until release is closed, so that a duplicate can
// arrive while the first is being recorded.
type slowStore struct {
	workshop.Store
	entered chan struct{}
	release chan struct{}
}

func (s *slowStore) Append(ctx context.Context, key workshop.Key, e workshop.Event) (workshop.Event, bool, error) {
	s.entered <- struct{}{}
	<-s.release
	return s.Store.Append(ctx, key, e)
}

func TestService_ConcurrentDuplicateIsInProgress(t *testing.T) {
	svc, store := newService(t)
	room, err := svc.CreateRoom(t.Context(), "room-key-1", workshop.RoomSpec{Name: "R"})
	if err != nil {
		t.Fatal(err)
	}
	_, ada, err := svc.Join(t.Context(), room.Code, "join-key-1", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowStore{Store: store, entered: make(chan struct{}, 1), release: make(chan struct{})}
	svc = workshop.NewService(slow, nil)
	e := workshop.Event{Kind: workshop.KindHandRaised}
	var first workshop.Event
	var wg sync.WaitGroup
	wg.Go(func() {
		var err error
		if first, _, err = svc.Record(context.Background(), ada, "event-key-1", e); err != nil {
			t.Error(err)
		}
	})
	<-slow.entered
	if _, _, err := svc.Record(t.Context(), ada, "event-key-1", e); !errors.Is(err, workshop.ErrKeyInProgress) {
		t.Errorf("duplicate during the first: %v, want ErrKeyInProgress", err)
	}
	close(slow.release)
	wg.Wait()
	slow.entered <- struct{}{} // let the replay through
	<-slow.entered
	again, replayed, err := svc.Record(t.Context(), ada, "event-key-1", e)
	if err != nil || !replayed || again != first {
		t.Errorf("retry after the first finished = %+v, %v, %v; want a replay of %+v", again, replayed, err, first)
	}
}

func TestService_FollowResumesAndWakes(t *testing.T) {
	svc, _ := newService(t)
	room, _ := svc.CreateRoom(t.Context(), "room-key-1", workshop.RoomSpec{Name: "R"})
	_, ada, _ := svc.Join(t.Context(), room.Code, "join-key-1", "Ada")
	first, _, err := svc.Push(t.Context(), room.ID, "push-key-1", workshop.Event{Kind: workshop.KindChaos, Detail: "replay"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got := make(chan workshop.Event, 10)
	go svc.Follow(ctx, room.ID, first.ID, true, func(evs []workshop.Event) error {
		for _, e := range evs {
			got <- e
		}
		return nil
	})
	// A learner's event does not wake a pushes-only follower; the next push does.
	svc.Record(t.Context(), ada, "event-key-1", workshop.Event{Kind: workshop.KindHandRaised})
	pace, _, _ := svc.Push(t.Context(), room.ID, "push-key-2", workshop.Event{Kind: workshop.KindPace, Detail: workshop.PaceGoto, Lesson: "l", Number: 2})
	select {
	case e := <-got:
		if e.ID != pace.ID {
			t.Errorf("follower after %d got %+v first, want the pace push %d", first.ID, e, pace.ID)
		}
	case <-ctx.Done():
		t.Fatal("the follower never heard the push")
	}
}

func TestClass_StuckFirstAndExport(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	room := workshop.Room{ID: 1, Name: "R", Lessons: []string{"l1", "l2"}, Exercises: []string{"ex"}, CreatedAt: t0}
	ls := []workshop.Learner{{ID: 1, Name: "=Ada", JoinedAt: t0}, {ID: 2, Name: "Bob", JoinedAt: t0}, {ID: 3, Name: "Cy", JoinedAt: t0}}
	c := workshop.NewClass(room, ls)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	id := int64(0)
	apply := func(e workshop.Event) {
		id++
		e.ID, e.RoomID = id, 1
		c.Apply(e)
	}
	for l := int64(1); l <= 3; l++ {
		apply(workshop.Event{LearnerID: l, Kind: workshop.KindLessonOpened, Lesson: "l1", At: at(0)})
	}
	apply(workshop.Event{LearnerID: 1, Kind: workshop.KindHintUsed, Exercise: "ex", Number: 1, At: at(1)})
	apply(workshop.Event{LearnerID: 1, Kind: workshop.KindExerciseChecked, Source: workshop.SourceServer, Exercise: "ex", Detail: "deliver m1 lose-ack", At: at(2)})
	apply(workshop.Event{LearnerID: 1, Kind: workshop.KindExerciseChecked, Source: workshop.SourceServer, Exercise: "ex", Passed: true, At: at(4)})
	for i := range 3 {
		apply(workshop.Event{LearnerID: 2, Kind: workshop.KindExerciseChecked, Source: workshop.SourceServer, Exercise: "ex", Detail: "replay", At: at(3 + i)})
	}
	apply(workshop.Event{LearnerID: 3, Kind: workshop.KindHandRaised, At: at(5)})
	rows := c.Rows(at(6))
	if rows[0].Learner.Name != "Cy" || rows[1].Learner.Name != "Bob" || rows[2].Learner.Name != "=Ada" {
		t.Errorf("order = %s, %s, %s; want Cy (hand), Bob (failures), Ada", rows[0].Learner.Name, rows[1].Learner.Name, rows[2].Learner.Name)
	}
	if why := rows[2].Stuck(at(6)); why != nil {
		t.Errorf("Ada is stuck: %v", why)
	}
	if why := rows[2].Stuck(at(4 + 10)); len(why) != 1 || why[0] != workshop.StuckSlow {
		t.Errorf("Ada ten minutes later: %v, want %q", why, workshop.StuckSlow)
	}
	if ce := c.Counterexamples(nil); len(ce) != 1 || ce[0].Counterexample != "replay" || ce[0].Learners != 1 {
		t.Errorf("Counterexamples = %+v; want Bob's replay only (Ada passed)", ce)
	}
	res := c.Results()
	if len(res) != 3 || res[0].Attempts != 2 || res[0].SecondsToPass != 180 || res[0].HintsUsed != 1 || res[1].SecondsToPass != -1 || res[1].Attempts != 3 {
		t.Errorf("Results = %+v", res)
	}
	var csv strings.Builder
	if err := workshop.WriteResultsCSV(&csv, res); err != nil {
		t.Fatal(err)
	}
	wantCSV := "learner,learner_id,exercise,attempts,passed_at,seconds_to_pass,hints_used\n" +
		"'=Ada,1,ex,2,2026-03-02T09:04:00Z,180,1\n" +
		"Bob,2,ex,3,,-1,0\n" +
		"Cy,3,ex,0,,-1,0\n"
	if csv.String() != wantCSV {
		t.Errorf("CSV =\n%s\nwant\n%s", csv.String(), wantCSV)
	}
}

func TestClass_CounterexamplesGroupByShapeWithAPlayground(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	room := workshop.Room{ID: 1, Exercises: []string{"ex"}}
	c := workshop.NewClass(room, []workshop.Learner{{ID: 1, JoinedAt: t0}, {ID: 2, JoinedAt: t0}, {ID: 3, JoinedAt: t0}, {ID: 4, JoinedAt: t0}})
	fail := func(id int64, learner int64, script, pg string) {
		c.Apply(workshop.Event{ID: id, LearnerID: learner, Kind: workshop.KindExerciseChecked, Source: workshop.SourceServer, Exercise: "ex", Detail: script, Playground: pg, At: t0})
	}
	fail(1, 1, "deliver m2 lose-ack; redeliver m2", "pg=m2-ada")
	fail(2, 2, "deliver m1 lose-ack; redeliver m1", "pg=m1-bob")
	fail(3, 3, "deliver m1 lose-ack; redeliver m1", "")
	fail(4, 4, "replay", "pg=replay-dan")
	// The shape of a schedule: its message names do not matter.
	shape := func(s string) string { return strings.NewReplacer("m1", "M", "m2", "M").Replace(s) }
	got := c.Counterexamples(shape)
	want := []workshop.CounterexampleCount{
		{Exercise: "ex", Counterexample: "deliver m1 lose-ack; redeliver m1", Playground: "pg=m1-bob", Learners: 3},
		{Exercise: "ex", Counterexample: "replay", Playground: "pg=replay-dan", Learners: 1},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Counterexamples = %+v\nwant %+v", got, want)
	}
	if got := c.Counterexamples(nil); len(got) != 3 {
		t.Errorf("without a shape, equal scripts only: %+v", got)
	}
}

func TestClass_ChaosSurvivorsCountTheLastPushOnly(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	c := workshop.NewClass(workshop.Room{ID: 1}, []workshop.Learner{{ID: 1, JoinedAt: t0}, {ID: 2, JoinedAt: t0}})
	run := func(id int64, learner int64, push int, handler string, ok bool) {
		c.Apply(workshop.Event{ID: id, LearnerID: learner, Kind: workshop.KindChaosRun, Number: push, Item: handler, Passed: ok, At: t0})
	}
	c.Apply(workshop.Event{ID: 1, Kind: workshop.KindChaos, Detail: "lose-ack", At: t0})
	run(2, 1, 1, "pg-1.mine", true)
	run(3, 2, 1, "pg-1.mine", false)
	run(4, 2, 1, "pg-2.idempotent", true)
	run(5, 2, 1, "pg-2.idempotent", true) // the same handler again counts once
	if s, n := c.ChaosSurvivors(); s != 2 || n != 3 {
		t.Errorf("after push 1: %d of %d survived, want 2 of 3", s, n)
	}
	c.Apply(workshop.Event{ID: 6, Kind: workshop.KindChaos, Detail: "replay", At: t0})
	run(7, 1, 1, "pg-1.mine", true) // late, for the old push
	run(8, 2, 6, "pg-1.mine", false)
	if s, n := c.ChaosSurvivors(); s != 0 || n != 1 {
		t.Errorf("after push 6: %d of %d survived, want 0 of 1", s, n)
	}
}

func TestOpenLessons_PaceLocksLaterLessons(t *testing.T) {
	room := workshop.Room{Lessons: []string{"l1", "l2", "l3", "l4"}}
	pace := func(mode string, n int) workshop.Event {
		return workshop.Event{Kind: workshop.KindPace, Detail: mode, Number: n}
	}
	for _, tc := range []struct {
		name   string
		pushes []workshop.Event
		open   int
	}{
		{"no pace: all open", nil, 4},
		{"a goto alone locks nothing", []workshop.Event{pace(workshop.PaceGoto, 2)}, 4},
		{"open up to 2", []workshop.Event{pace(workshop.PaceOpen, 2), {Kind: workshop.KindChaos, Detail: "replay"}}, 2},
		{"a later goto opens up to its lesson", []workshop.Event{pace(workshop.PaceOpen, 1), pace(workshop.PaceGoto, 3)}, 3},
		{"a goto back keeps what is open", []workshop.Event{pace(workshop.PaceOpen, 3), pace(workshop.PaceGoto, 1)}, 3},
		{"the last open wins", []workshop.Event{pace(workshop.PaceOpen, 3), pace(workshop.PaceOpen, 1)}, 1},
	} {
		if got := workshop.OpenLessons(room, tc.pushes); got != tc.open {
			t.Errorf("%s: %d open, want %d", tc.name, got, tc.open)
		}
	}
	if !workshop.LessonLocked(room, 2, "l3") || workshop.LessonLocked(room, 2, "l2") || workshop.LessonLocked(room, 0, "not-in-the-room") {
		t.Error("LessonLocked: want l3 locked, l2 open, a lesson outside the room open")
	}
}
