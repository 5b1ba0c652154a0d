package sqlitestore_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
	"idemlab/workshop/storetest"
)

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) workshop.Store {
		s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), sqlitestore.FileName))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Several stores on one file, as several processes on one machine: SQLite
// serializes their writers, the unique constraints keep one effect per key.
func TestStore_ConformanceSharedDatabase(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T, n int) []workshop.Store {
		path := filepath.Join(t.TempDir(), sqlitestore.FileName)
		var stores []workshop.Store
		for range n {
			s, err := sqlitestore.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			stores = append(stores, s)
		}
		return stores
	})
}

func TestOpen_WritesNothingUntilARoomIsCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, sqlitestore.FileName)
	s, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RoomByCode(t.Context(), "KQ7-M4P"); err != workshop.ErrNotFound {
		t.Fatalf("RoomByCode: %v", err)
	}
	if _, err := s.Rooms(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("reads created %s (%v); a server without rooms must write nothing", dir, err)
	}
	if _, err := s.CreateRoom(t.Context(), "room-key-1", workshop.RoomSpec{Name: "R"}, "KQ7-M4P", time.Now()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("after CreateRoom: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("database mode %v, want 0600 (it holds resume tokens)", fi.Mode().Perm())
	}
}

func TestOpen_ReopensAndKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqlitestore.FileName)
	s, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	room, err := s.CreateRoom(t.Context(), "room-key-1", workshop.RoomSpec{Name: "R"}, "KQ7-M4P", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.RoomByCode(t.Context(), "KQ7-M4P"); err != nil || got.ID != room.ID {
		t.Fatalf("after reopening: %+v, %v", got, err)
	}
}

// rawDB opens the file without the store, to tamper with it.
func rawDB(t *testing.T, path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpen_MigrationsChecked(t *testing.T) {
	for _, tc := range []struct {
		name, tamper, want string
	}{
		{"NewerVersion", `INSERT INTO schema_migrations VALUES (99, 'from_the_future', 0)`, "newer Idemlab"},
		{"RenamedMigration", `UPDATE schema_migrations SET name = 'other' WHERE version = 1`, "never change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), sqlitestore.FileName)
			s, err := sqlitestore.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateRoom(t.Context(), "room-key-1", workshop.RoomSpec{Name: "R"}, "KQ7-M4P", time.Now()); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if _, err := rawDB(t, path).Exec(tc.tamper); err != nil {
				t.Fatal(err)
			}
			_, err = sqlitestore.Open(t.Context(), path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open of a tampered database: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestBackupFile_ConsistentCopyWhileServing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sqlitestore.FileName)
	s, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	svc := workshop.NewService(s, nil)
	room, err := svc.CreateRoom(t.Context(), "room-key-1", workshop.RoomSpec{Name: "R"})
	if err != nil {
		t.Fatal(err)
	}
	_, ada, err := svc.Join(t.Context(), room.Code, "join-key-1", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	// Writers keep going while the backup runs.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int)
	go func() {
		n := 0
		for ctx.Err() == nil {
			e := workshop.Event{Kind: workshop.KindHandRaised}
			if n%2 == 1 {
				e.Kind = workshop.KindHandLowered
			}
			if _, _, err := svc.Record(ctx, ada, workshop.Key(strings.Repeat("k", 8)+string(rune('a'+n%26))+time.Now().Format("150405.000000000")), e); err == nil {
				n++
			}
		}
		done <- n
	}()
	time.Sleep(50 * time.Millisecond)
	dest := filepath.Join(dir, "copy.db")
	if err := sqlitestore.BackupFile(t.Context(), path, dest); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if err := sqlitestore.BackupFile(t.Context(), path, dest); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a backup over an existing file: %v, want refused", err)
	}
	copyStore, err := sqlitestore.Open(t.Context(), dest)
	if err != nil {
		t.Fatalf("opening the backup: %v", err)
	}
	defer copyStore.Close()
	if got, err := copyStore.RoomByCode(t.Context(), room.Code); err != nil || got.ID != room.ID {
		t.Errorf("the backup's room: %+v, %v", got, err)
	}
}

func TestStore_CheckpointsInTheBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqlitestore.FileName)
	s, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	room, err := s.CreateRoom(t.Context(), "room-key-0001", workshop.RoomSpec{Name: "R"}, "AAA-AAA", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	for i := range 600 { // well past the 1,000 pages SQLite would checkpoint at in a commit
		e := workshop.Event{RoomID: room.ID, Kind: workshop.KindChaos, Detail: strings.Repeat("x", 1000), At: time.Now()}
		if _, _, err := s.Append(t.Context(), workshop.Key("push-key-"+strconv.Itoa(i)), e); err != nil {
			t.Fatal(err)
		}
	}
	// The commits leave the rows in the WAL; the checkpointer copies them
	// into the database file within a moment.
	for deadline := time.Now().Add(10 * time.Second); size() < before+500_000; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes (%d before 600 KB of events): nothing checkpointed it", size(), before)
		}
	}
}

// A backup restored over the database (the file copied back) hands out no
// event id that the server handed out before the restore: a class view
// resuming after the last id it saw still gets every new event.
func TestRestoredBackup_NeverReusesEventIDs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sqlitestore.FileName)
	s, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	svc := workshop.NewService(s, nil)
	room, err := svc.CreateRoom(t.Context(), "room-key-1", workshop.RoomSpec{Name: "R"})
	if err != nil {
		t.Fatal(err)
	}
	_, ada, err := svc.Join(t.Context(), room.Code, "join-key-1", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "backup.db")
	if err := s.Backup(t.Context(), backup); err != nil {
		t.Fatal(err)
	}
	var seen int64 // the last id a class view saw before the restore
	for i := range 5 {
		e, _, err := svc.Record(t.Context(), ada, workshop.Key("after-backup-"+strconv.Itoa(i)), workshop.Event{Kind: workshop.KindHandRaised})
		if err != nil {
			t.Fatal(err)
		}
		seen = e.ID
	}
	s.Close()
	// The restore: the backup copied over the database, as the docs say.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	restored, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	svc = workshop.NewService(restored, nil)
	e, _, err := svc.Record(t.Context(), ada, "after-restore-1", workshop.Event{Kind: workshop.KindHandRaised})
	if err != nil {
		t.Fatal(err)
	}
	if e.ID <= seen {
		t.Errorf("the first event after the restore has id %d, not above %d, which a view already saw", e.ID, seen)
	}
	evs, err := restored.Events(t.Context(), room.ID, seen, false, 100)
	if err != nil || len(evs) != 1 || evs[0].ID != e.ID {
		t.Errorf("events after %d: %+v, %v; want the new one", seen, evs, err)
	}
}
