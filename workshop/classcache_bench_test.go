package workshop_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

func newServiceB(b *testing.B) (*workshop.Service, workshop.Store) {
	b.Helper()
	s, err := sqlitestore.Open(b.Context(), filepath.Join(b.TempDir(), sqlitestore.FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return workshop.NewService(s, nil), s
}

// BenchmarkClassView compares a class view that reads every event
// (LoadClass, what each view did) with one page of the aggregate the
// service keeps up to date (ClassPage), on a room of 500 learners and 53,000
// events, with 10 new events before each view.
func BenchmarkClassView(b *testing.B) {
	for _, tc := range []struct {
		name string
		view func(svc *workshop.Service, roomID int64) error
	}{
		{"LoadClass", func(svc *workshop.Service, roomID int64) error {
			_, err := workshop.LoadClass(b.Context(), svc.Store(), roomID)
			return err
		}},
		{"ClassPage", func(svc *workshop.Service, roomID int64) error {
			_, err := svc.ClassPage(b.Context(), roomID, time.Now(), 0, 50, nil)
			return err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			svc, store := newServiceB(b)
			room, err := svc.CreateRoom(b.Context(), "bench-room-1", workshop.RoomSpec{Name: "R", Lessons: []string{"l1"}, Exercises: []string{"ex"}})
			if err != nil {
				b.Fatal(err)
			}
			var ls []workshop.Learner
			for i := range 500 {
				l, err := store.Join(b.Context(), room.ID, workshop.Key(fmt.Sprintf("bench-join-%d", i)), "L", workshop.NewToken(), time.Now())
				if err != nil {
					b.Fatal(err)
				}
				ls = append(ls, l)
			}
			n := 0
			add := func(count int) {
				for range count {
					l := ls[n%len(ls)]
					e := workshop.Event{RoomID: room.ID, LearnerID: l.ID, Kind: workshop.KindGoalReached, Lesson: "l1", Item: fmt.Sprintf("g%d", n%7), At: time.Now()}
					if n%5 == 0 {
						e = workshop.Event{RoomID: room.ID, LearnerID: l.ID, Kind: workshop.KindExerciseChecked, Exercise: "ex", Detail: "deliver m1 lose-ack", Source: workshop.SourceServer, At: time.Now()}
					}
					if _, _, err := store.Append(b.Context(), workshop.Key(fmt.Sprintf("bench-event-%07d", n)), e); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			add(53_000 - 500)
			first := time.Now()
			if err := tc.view(svc, room.ID); err != nil {
				b.Fatal(err)
			}
			firstView := time.Since(first)
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				add(10)
				b.StartTimer()
				if err := tc.view(svc, room.ID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(firstView.Milliseconds()), "first-view-ms")
		})
	}
}
