package pgstore_test

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/internal/pgtest"
	"idemlab/workshop"
	"idemlab/workshop/pgstore"
)

// psqlURL is url with its search_path as libpq spells it (psql knows no
// search_path parameter).
func psqlURL(t *testing.T, pgxURL string) string {
	u, err := url.Parse(pgxURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if sp := q.Get("search_path"); sp != "" {
		q.Del("search_path")
		q.Set("options", "-csearch_path="+sp)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func TestBackupFile_ConsistentCopyWhileServingRestoresWithPsql(t *testing.T) {
	src := pgtest.Database(t)
	s := open(t, src)
	defer s.Close()
	t0 := time.Now()
	room, err := s.CreateRoom(t.Context(), "room-key-0001", workshop.RoomSpec{Name: "R", Lessons: []string{"l1"}}, "AAA-AAA", t0)
	if err != nil {
		t.Fatal(err)
	}
	// Learners keep joining (a learner and their joined event in one
	// transaction) and sending events while the backup runs.
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				l, err := s.Join(t.Context(), room.ID, workshop.Key(fmt.Sprintf("join-%d-%05d", w, i)), "L", workshop.Token(fmt.Sprintf("token-%d-%05d-abcdefghijklmnop", w, i)), t0)
				if err != nil {
					t.Error(err)
					return
				}
				e := workshop.Event{RoomID: room.ID, LearnerID: l.ID, Kind: workshop.KindExerciseChecked, Exercise: "ex", Detail: "replay", Playground: "scenario=x", At: t0}
				if _, _, err := s.Append(t.Context(), workshop.Key(fmt.Sprintf("event-%d-%05d", w, i)), e); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	dest := filepath.Join(t.TempDir(), "workshop.sql")
	if err := pgstore.BackupFile(t.Context(), src, dest); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if err := pgstore.BackupFile(t.Context(), src, dest); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a backup over an existing file: %v, want refused", err)
	}

	psql, err := exec.LookPath("psql")
	if err != nil {
		psql = "/usr/lib/postgresql/15/bin/psql"
	}
	restored := pgtest.Database(t)
	out, err := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "-f", dest, psqlURL(t, restored)).CombinedOutput()
	if err != nil {
		t.Fatalf("psql restoring the backup: %v\n%s", err, out)
	}
	r := open(t, restored) // its migrations are found applied
	defer r.Close()
	learners, err := r.Learners(t.Context(), room.ID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := r.Events(t.Context(), room.ID, 0, false, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	joined, checked := 0, 0
	for _, e := range evs {
		switch e.Kind {
		case workshop.KindJoined:
			joined++
		case workshop.KindExerciseChecked:
			checked++
			if e.Playground != "scenario=x" {
				t.Fatalf("restored event %+v lost its playground", e)
			}
		}
	}
	all, _ := s.Learners(t.Context(), room.ID)
	t.Logf("backup: %d learners of %d by the end, %d checks, %d bytes", len(learners), len(all), checked, fileSize(t, dest))
	if len(learners) == 0 || len(learners) >= len(all) || joined != len(learners) || checked < len(learners)-3 || checked > len(learners) {
		t.Errorf("restored %d learners, %d joined events, %d checks (%d learners by the end): not one snapshot taken while writers ran", len(learners), joined, checked, len(all))
	}
	// Ids go on from where the copy left them: never one handed out twice.
	l, err := r.Join(t.Context(), room.ID, "join-after-restore", "New", "token-after-restore-abcdefghijkl", t0)
	if err != nil || l.ID <= learners[len(learners)-1].ID {
		t.Errorf("a learner joining the restored store: %+v, %v; want an id past %d", l, err, learners[len(learners)-1].ID)
	}
	// Events too, past every id the source handed out after the backup: a
	// class view that saw those resumes after them.
	srcEvents, err := s.Events(t.Context(), room.ID, 0, false, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	seen := srcEvents[len(srcEvents)-1].ID
	e, _, err := r.Append(t.Context(), "event-after-restore", workshop.Event{RoomID: room.ID, LearnerID: l.ID, Kind: workshop.KindHandRaised, At: time.Now()})
	if err != nil || e.ID <= seen {
		t.Errorf("an event in the restored store: id %d, %v; want past %d, the source's last", e.ID, err, seen)
	}
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
