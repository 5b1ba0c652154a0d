package workshop_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

// roomWith creates a room covering lessons l1, l2 and exercise ex, and joins
// the named learners.
func roomWith(t *testing.T, svc *workshop.Service, names ...string) (workshop.Room, []workshop.Learner) {
	t.Helper()
	room, err := svc.CreateRoom(t.Context(), "room-key-1", workshop.RoomSpec{Name: "R", Lessons: []string{"l1", "l2"}, Exercises: []string{"ex"}})
	if err != nil {
		t.Fatal(err)
	}
	var ls []workshop.Learner
	for i, n := range names {
		_, l, err := svc.Join(t.Context(), room.Code, workshop.Key(fmt.Sprintf("join-key-%d", i)), n)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return room, ls
}

func TestRecordCheck_EveryCheckCountsAndOnlyTheServersVerdict(t *testing.T) {
	svc, _ := newService(t)
	room, ls := roomWith(t, svc, "Ada", "Eve")
	ada, eve := ls[0], ls[1]
	// Two checks on one page, then a pass: three attempts.
	for _, c := range []workshop.Check{
		{Exercise: "ex", Counterexample: "deliver m1 lose-ack", Playground: "scenario=lost-ack"},
		{Exercise: "ex", Counterexample: "deliver m1 lose-ack", Playground: "scenario=lost-ack"},
		{Exercise: "ex", Passed: true},
	} {
		e, err := svc.RecordCheck(t.Context(), ada, c)
		if err != nil {
			t.Fatal(err)
		}
		if e.Source != workshop.SourceServer || e.Kind != workshop.KindExerciseChecked {
			t.Errorf("recorded %+v, want a server-sourced exercise_checked", e)
		}
	}
	// Eve forges a pass: refused, whatever the body says.
	if _, err := workshop.DecodeEvent(strings.NewReader(`{"kind":"exercise_checked","exercise":"ex","passed":true}`)); err == nil {
		t.Error("a browser's exercise_checked decodes")
	}
	if _, _, err := svc.Record(t.Context(), eve, "forged-key-1", workshop.Event{Kind: workshop.KindExerciseChecked, Exercise: "ex", Passed: true}); err == nil {
		t.Error("Record took a browser's exercise_checked")
	}
	class, err := svc.Class(t.Context(), room.ID)
	if err != nil {
		t.Fatal(err)
	}
	res := class.Results()
	if len(res) != 2 || res[0].Attempts != 3 || res[0].PassedAt == "" || res[1].Attempts != 0 || res[1].PassedAt != "" {
		t.Errorf("Results = %+v; want Ada 3 attempts and a pass, Eve nothing", res)
	}
}

func TestRecord_RefusesWhatTheRoomDoesNotCover(t *testing.T) {
	svc, _ := newService(t)
	room, ls := roomWith(t, svc, "Ada")
	for _, e := range []workshop.Event{
		{Kind: workshop.KindLessonOpened, Lesson: "elsewhere"},
		{Kind: workshop.KindGoalReached, Lesson: "elsewhere", Item: "g"},
		{Kind: workshop.KindHintUsed, Exercise: "not-in-room", Number: 1},
	} {
		_, _, err := svc.Record(t.Context(), ls[0], workshop.Key("key-"+e.Lesson+e.Exercise), e)
		var ie *workshop.InputError
		if !errors.Is(err, workshop.ErrNotInRoom) || !errors.As(err, &ie) || ie.Field == "" {
			t.Errorf("Record(%+v) = %v, want ErrNotInRoom naming the field", e, err)
		}
	}
	if _, err := svc.RecordCheck(t.Context(), ls[0], workshop.Check{Exercise: "not-in-room", Passed: true}); !errors.Is(err, workshop.ErrNotInRoom) {
		t.Errorf("RecordCheck outside the room = %v, want ErrNotInRoom", err)
	}
	if _, _, err := svc.Record(t.Context(), ls[0], "key-in-room-1", workshop.Event{Kind: workshop.KindLessonOpened, Lesson: "l2"}); err != nil {
		t.Errorf("a lesson of the room: %v", err)
	}
	class, _ := svc.Class(t.Context(), room.ID)
	if res := class.Results(); len(res) != 1 || res[0].Exercise != "ex" {
		t.Errorf("Results = %+v; want only the room's exercise", res)
	}
}

func TestRecord_GoalsAndQuizzesAreTheBrowsers(t *testing.T) {
	svc, _ := newService(t)
	room, ls := roomWith(t, svc, "Ada")
	e, _, err := svc.Record(t.Context(), ls[0], "goal-key-01", workshop.Event{Kind: workshop.KindGoalReached, Lesson: "l1", Item: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != workshop.SourceBrowser {
		t.Errorf("a goal is stored with source %q, want browser", e.Source)
	}
	evs, err := svc.Store().Events(t.Context(), room.ID, 0, false, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		want := workshop.SourceServer
		if e.Kind == workshop.KindGoalReached {
			want = workshop.SourceBrowser
		}
		if e.Reporter() != want {
			t.Errorf("%s read back with source %q, want %q", e.Kind, e.Reporter(), want)
		}
	}
}

func TestRecord_EventsLimitedPerSeat(t *testing.T) {
	svc, _ := newService(t)
	_, ls := roomWith(t, svc, "Flood", "Calm")
	burst := int(svc.Limits().EventBurst)
	var first workshop.Event
	for i := range burst {
		e, _, err := svc.Record(t.Context(), ls[0], workshop.Key(fmt.Sprintf("flood-key-%04d", i)), workshop.Event{Kind: workshop.KindHandRaised})
		if err != nil {
			t.Fatalf("event %d of the burst: %v", i, err)
		}
		if i == 0 {
			first = e
		}
	}
	_, _, err := svc.Record(t.Context(), ls[0], "flood-key-over", workshop.Event{Kind: workshop.KindHandRaised})
	var re *workshop.RateError
	if !errors.Is(err, workshop.ErrRateLimited) || !errors.As(err, &re) || re.RetrySeconds() < 1 {
		t.Fatalf("event %d: %v, want a RateError with a retry time", burst+1, err)
	}
	// A retry of a stored event is its replay, not a new one: answered.
	if e, replayed, err := svc.Record(t.Context(), ls[0], "flood-key-0000", workshop.Event{Kind: workshop.KindHandRaised}); err != nil && !errors.Is(err, workshop.ErrRateLimited) || err == nil && (!replayed || e.ID != first.ID) {
		t.Errorf("replay at the limit: %+v %t %v", e, replayed, err)
	}
	// Another seat has its own share.
	if _, _, err := svc.Record(t.Context(), ls[1], "calm-key-0001", workshop.Event{Kind: workshop.KindHandRaised}); err != nil {
		t.Errorf("another seat is refused: %v", err)
	}
}

func TestJoin_SeatsPerRoomAndJoinsPerAddress(t *testing.T) {
	svc, _ := newService(t)
	limits := workshop.DefaultLimits()
	limits.SeatsPerRoom, limits.JoinBurst, limits.JoinsPerSecond = 5, 3, 0.001
	svc.SetLimits(limits)
	room, _ := roomWith(t, svc)
	join := func(client, key string) error {
		_, _, err := svc.JoinFrom(t.Context(), client, room.Code, workshop.Key(key), "L")
		return err
	}
	for i := range 3 {
		if err := join("10.0.0.1", fmt.Sprintf("nat-join-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := join("10.0.0.1", "nat-join-3"); !errors.Is(err, workshop.ErrRateLimited) {
		t.Errorf("a fourth join from one address with a burst of 3: %v, want ErrRateLimited", err)
	}
	if err := join("10.0.0.1", "nat-join-0"); err != nil && !errors.Is(err, workshop.ErrRateLimited) {
		t.Errorf("a replayed join: %v", err)
	}
	for i := range 2 {
		if err := join("10.0.0.2", fmt.Sprintf("other-join-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := join("10.0.0.3", "sixth-seat"); !errors.Is(err, workshop.ErrRoomFull) {
		t.Errorf("a sixth seat in a room of 5: %v, want ErrRoomFull", err)
	}
}

func TestClassPage_PagesAnAggregateKeptUpToDate(t *testing.T) {
	svc, _ := newService(t)
	names := make([]string, 30)
	for i := range names {
		names[i] = fmt.Sprintf("L%02d", i)
	}
	room, ls := roomWith(t, svc, names...)
	now := time.Now()
	page, err := svc.ClassPage(t.Context(), room.ID, now, 0, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if page.Learners != 30 || len(page.Rows) != 10 || page.Rows[0].Learner.Name != "L00" {
		t.Fatalf("first page: %d learners, %d rows; want 30 and 10 from L00", page.Learners, len(page.Rows))
	}
	// New events and a new learner after the first view are applied on the next.
	svc.Record(t.Context(), ls[29], "hand-key-29", workshop.Event{Kind: workshop.KindHandRaised})
	svc.RecordCheck(t.Context(), ls[3], workshop.Check{Exercise: "ex", Passed: true})
	svc.Join(t.Context(), room.Code, "late-join-1", "Late")
	page, err = svc.ClassPage(t.Context(), room.ID, now, 0, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if page.Learners != 31 || page.Rows[0].Learner.Name != "L29" || page.Passed["ex"] != 1 {
		t.Errorf("after more events: %d learners, first %s, %d passed; want 31, L29 (hand), 1", page.Learners, page.Rows[0].Learner.Name, page.Passed["ex"])
	}
	last, err := svc.ClassPage(t.Context(), room.ID, now, 30, 10, nil)
	if err != nil || len(last.Rows) != 1 || last.Rows[0].Learner.Name != "Late" {
		t.Errorf("last page: %+v, %v; want Late alone", last.Rows, err)
	}
	// Class is a copy: changing it changes nothing kept.
	c, _ := svc.Class(t.Context(), room.ID)
	c.Apply(workshop.Event{ID: 1 << 40, LearnerID: ls[0].ID, Kind: workshop.KindHandRaised})
	if page, _ := svc.ClassPage(t.Context(), room.ID, now, 0, 1, nil); page.Rows[0].Learner.Name != "L29" {
		t.Error("a change to a Class copy reached the kept aggregate")
	}
}

func TestLearner_DrillDownAndSameNames(t *testing.T) {
	svc, _ := newService(t)
	room, ls := roomWith(t, svc, "Ada", "Ada", "Bob")
	svc.RecordCheck(t.Context(), ls[1], workshop.Check{Exercise: "ex", Counterexample: "deliver m1 lose-ack", Playground: "h=fail"})
	svc.RecordCheck(t.Context(), ls[1], workshop.Check{Exercise: "ex", Passed: true, Playground: "h=pass"})
	p, err := svc.Learner(t.Context(), room.ID, ls[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	h := p.Exercises["ex"].History
	if len(h) != 2 || h[0].Passed || h[0].Counterexample != "deliver m1 lose-ack" || h[0].Playground != "h=fail" || !h[1].Passed || h[1].Playground != "h=pass" {
		t.Errorf("the second Ada's history: %+v", h)
	}
	class, _ := svc.Class(t.Context(), room.ID)
	var labels []string
	for _, p := range class.Joined() {
		labels = append(labels, p.Label)
	}
	if strings.Join(labels, ",") != "Ada,Ada (2),Bob" {
		t.Errorf("labels %q, want Ada, Ada (2), Bob", labels)
	}
	if _, err := svc.Learner(t.Context(), room.ID, 999); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("a learner not in the room: %v", err)
	}
}

func TestWriteExportJSON_TimelineAndGoals(t *testing.T) {
	svc, _ := newService(t)
	room, ls := roomWith(t, svc, "Ada")
	svc.Record(t.Context(), ls[0], "goal-key-01", workshop.Event{Kind: workshop.KindGoalReached, Lesson: "l1", Item: "first-duplicate"})
	svc.RecordCheck(t.Context(), ls[0], workshop.Check{Exercise: "ex", Passed: true})
	var b strings.Builder
	if err := svc.WriteExportJSON(t.Context(), &b, room.ID); err != nil {
		t.Fatal(err)
	}
	var x workshop.Export
	if err := json.Unmarshal([]byte(b.String()), &x); err != nil {
		t.Fatal(err)
	}
	if len(x.Results) != 1 || x.Results[0].Attempts != 1 || x.Results[0].PassedAt == "" {
		t.Errorf("results %+v", x.Results)
	}
	if len(x.Goals) != 1 || x.Goals[0].Goal != "first-duplicate" || x.Goals[0].Source != workshop.SourceBrowser {
		t.Errorf("goals %+v, want first-duplicate reported by the browser", x.Goals)
	}
	var kinds []string
	for _, m := range x.Timeline {
		kinds = append(kinds, string(m.Kind)+"/"+string(m.Source))
	}
	if got := strings.Join(kinds, " "); got != "joined/server goal_reached/browser exercise_checked/server" {
		t.Errorf("timeline %s", got)
	}
}

func TestRenameAndRemove_ReachTheClassView(t *testing.T) {
	svc, _ := newService(t)
	room, ls := roomWith(t, svc, "Ada", "Ada", "Bob")
	if _, err := svc.Class(t.Context(), room.ID); err != nil { // the aggregate exists before the changes
		t.Fatal(err)
	}
	if _, err := svc.RenameLearner(t.Context(), room.ID, ls[1].ID, "Ada B."); err != nil {
		t.Fatal(err)
	}
	if err := svc.RemoveLearner(t.Context(), room.ID, ls[2].ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Resume(t.Context(), ls[2].Token); !errors.Is(err, workshop.ErrNotFound) {
		t.Errorf("a removed learner resumes: %v", err)
	}
	for _, fresh := range []bool{false, true} {
		if fresh {
			svc = workshop.NewService(svc.Store(), nil) // another replica, built from the store
		}
		page, err := svc.ClassPage(t.Context(), room.ID, time.Now(), 0, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, p := range page.Rows {
			labels = append(labels, p.Label)
		}
		if got := strings.Join(labels, ","); page.Learners != 2 || got != "Ada,Ada B." {
			t.Errorf("fresh %t: %d learners %q; want Ada, Ada B.", fresh, page.Learners, got)
		}
	}
}

func TestOnline_AnOpenStreamOrARecentEvent(t *testing.T) {
	svc, _ := newService(t)
	room, ls := roomWith(t, svc, "Ada", "Bob")
	later := time.Now().Add(workshop.OnlineWindow + time.Minute) // both joined long ago
	disconnect := svc.Connect(ls[0].ID)
	page, err := svc.ClassPage(t.Context(), room.ID, later, 0, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !page.Rows[0].Online || page.Rows[1].Online {
		t.Errorf("Ada with a stream open: %t, Bob without: %t; want online, offline", page.Rows[0].Online, page.Rows[1].Online)
	}
	disconnect()
	if page, _ := svc.ClassPage(t.Context(), room.ID, later, 0, 10, nil); page.Rows[0].Online {
		t.Error("Ada is online after her stream closed")
	}
	if page, _ := svc.ClassPage(t.Context(), room.ID, time.Now(), 0, 10, nil); !page.Rows[1].Online {
		t.Error("Bob, who just joined, is offline")
	}
}

func TestRecordRendered_GoalsAndPredictionsTheServerDrew(t *testing.T) {
	svc, store := newService(t)
	room, ls := roomWith(t, svc, "Ada")
	ada := ls[0]
	for range 2 { // the same state drawn twice: one event
		if _, err := svc.RecordRendered(t.Context(), ada, workshop.Event{Kind: workshop.KindGoalReached, Lesson: "l1", Item: "first-duplicate"}); err != nil {
			t.Fatal(err)
		}
	}
	svc.Record(t.Context(), ada, "browser-goal-1", workshop.Event{Kind: workshop.KindGoalReached, Lesson: "l1", Item: "first-duplicate"})
	svc.Record(t.Context(), ada, "browser-goal-2", workshop.Event{Kind: workshop.KindGoalReached, Lesson: "l1", Item: "only-browser"})
	if _, err := svc.RecordRendered(t.Context(), ada, workshop.Event{Kind: workshop.KindPredictionMade, Lesson: "l2", Item: "pg-1", Passed: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RecordRendered(t.Context(), ada, workshop.Event{Kind: workshop.KindPredictionMade, Lesson: "l2", Item: "pg-1"}); err != nil {
		t.Errorf("a second, different answer: %v, want the first to stand quietly", err)
	}
	if _, err := svc.RecordRendered(t.Context(), ada, workshop.Event{Kind: workshop.KindGoalReached, Lesson: "elsewhere", Item: "g"}); !errors.Is(err, workshop.ErrNotInRoom) {
		t.Errorf("a goal outside the room: %v, want ErrNotInRoom", err)
	}
	p, err := svc.Learner(t.Context(), room.ID, ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Goals["l1/first-duplicate"] != workshop.SourceServer || p.Goals["l1/only-browser"] != workshop.SourceBrowser {
		t.Errorf("goals %v: want the server's word for first-duplicate, the browser's for only-browser", p.Goals)
	}
	if pr := p.Predictions["l2/pg-1"]; !pr.Correct || pr.Source != workshop.SourceServer {
		t.Errorf("prediction %+v, want right, from the server", pr)
	}
	evs, _ := store.Events(t.Context(), room.ID, 0, false, 100)
	n := 0
	for _, e := range evs {
		if e.Kind == workshop.KindGoalReached && e.Item == "first-duplicate" && e.Source == workshop.SourceServer {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d server goal events for one goal drawn twice, want 1", n)
	}
	if e, err := workshop.DecodeEvent(strings.NewReader(`{"kind":"prediction_made","lesson":"l2","prediction":"pg-1","correct":false}`)); err != nil || e.Kind != workshop.KindPredictionMade || e.Item != "pg-1" {
		t.Errorf("a browser's prediction: %+v, %v", e, err)
	}
	if _, err := workshop.DecodeEvent(strings.NewReader(`{"kind":"prediction_made","lesson":"l2","prediction":"pg-1"}`)); err == nil {
		t.Error("a prediction without correct decodes")
	}
}

// A learner whose stream closed (a page gone, a replica lost) is online for
// the reconnect grace, then offline with the time they were last seen; a
// stream opened again, or an event sent since, counts as before.
func TestPresence_AClosedStreamGoesOfflineAfterTheGrace(t *testing.T) {
	store, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Now()
	svc := workshop.NewService(store, func() time.Time { return now })
	room, ls := roomWith(t, svc, "Ada")
	ada := ls[0]
	presence := func(at time.Time) (bool, time.Time) {
		page, err := svc.ClassPage(t.Context(), room.ID, at, 0, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		return page.Rows[0].Online, page.Rows[0].Contact
	}
	disconnect := svc.Connect(ada.ID)
	now = now.Add(time.Minute)
	if online, seen := presence(now); !online || !seen.Equal(now) {
		t.Errorf("with a stream open: online %t, last seen %v; want online, now", online, seen)
	}
	disconnect()
	closed := now
	for _, tc := range []struct {
		after  time.Duration
		online bool
	}{
		{0, true},
		{workshop.ReconnectGrace - time.Second, true},
		{workshop.ReconnectGrace, false},
		{workshop.OnlineWindow - time.Second, false}, // within the window of events, but the stream said goodbye
	} {
		online, seen := presence(closed.Add(tc.after))
		if online != tc.online || !seen.Equal(closed) {
			t.Errorf("%v after the stream closed: online %t, last seen %v; want %t, %v", tc.after, online, seen, tc.online, closed)
		}
	}
	// Reconnected elsewhere (another replica): an event after the close counts.
	now = closed.Add(time.Minute)
	if _, _, err := svc.Record(t.Context(), ada, "ada-hand-1", workshop.Event{Kind: workshop.KindHandRaised}); err != nil {
		t.Fatal(err)
	}
	if online, seen := presence(now.Add(time.Second)); !online || seen.Sub(now).Abs() >= time.Millisecond { // events keep milliseconds
		t.Errorf("an event after the close: online %t, last seen %v; want online, at the event (%v)", online, seen, now)
	}
	// Back on this replica: online again.
	defer svc.Connect(ada.ID)()
	if online, _ := presence(now.Add(time.Hour)); !online {
		t.Error("a stream open again: offline")
	}
}
