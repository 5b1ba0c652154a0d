package pgstore_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/internal/pgtest"
	"idemlab/workshop"
	"idemlab/workshop/pgstore"
	"idemlab/workshop/storetest"
)

func open(t *testing.T, url string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) workshop.Store { return open(t, pgtest.Database(t)) })
}

func TestStore_ConformanceSharedDatabase(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T, n int) []workshop.Store {
		url := pgtest.Database(t)
		var stores []workshop.Store
		for range n {
			stores = append(stores, open(t, url))
		}
		return stores
	})
}

func TestOpen_MigrationsChecked(t *testing.T) {
	for _, tc := range []struct {
		name, tamper, want string
	}{
		{"NewerVersion", `INSERT INTO schema_migrations VALUES (99, 'from_the_future', now())`, "newer Idemlab"},
		{"RenamedMigration", `UPDATE schema_migrations SET name = 'other' WHERE version = 1`, "never change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := pgtest.Database(t)
			open(t, url).Close()
			open(t, url).Close() // a second start finds everything applied
			conn, err := pgx.Connect(t.Context(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(t.Context(), tc.tamper); err != nil {
				t.Fatal(err)
			}
			_, err = pgstore.Open(t.Context(), url)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open of a tampered database: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestOpen_UnreachableStopsTheStart(t *testing.T) {
	_, err := pgstore.Open(t.Context(), "postgres://idemlab@127.0.0.1:1/nothing?connect_timeout=2")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("Open of an unreachable database: %v, want an error naming it", err)
	}
}

// TestListen_WakesAnotherReplica: a follower served by one store's service
// sees, within a second, an event appended through another store's.
func TestListen_WakesAnotherReplica(t *testing.T) {
	url := pgtest.Database(t)
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	svcA, svcB := workshop.NewService(a, nil), workshop.NewService(b, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go b.Listen(ctx, svcB.Hub(), discardLogger())
	room, err := svcA.CreateRoom(ctx, "room-key-1", workshop.RoomSpec{Name: "R"})
	if err != nil {
		t.Fatal(err)
	}
	_, ada, err := svcA.Join(ctx, room.Code, "join-key-1", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan workshop.Event, 100)
	go svcB.Follow(ctx, room.ID, 0, false, func(evs []workshop.Event) error {
		for _, e := range evs {
			got <- e
		}
		return nil
	})
	if e := <-got; e.Kind != workshop.KindJoined {
		t.Fatalf("first event %v, want joined", e.Kind)
	}
	time.Sleep(200 * time.Millisecond) // the follower waits on its signal now
	sent := time.Now()
	if _, _, err := svcA.Record(ctx, ada, "event-key-1", workshop.Event{Kind: workshop.KindHandRaised}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		if e.Kind != workshop.KindHandRaised {
			t.Fatalf("event %v, want hand_raised", e.Kind)
		}
		t.Logf("seen on the other replica after %v", time.Since(sent))
	case <-time.After(time.Second):
		t.Fatal("the other replica's follower did not see the event within 1 s")
	}
}

// TestListen_ReconnectsAndCatchesUp kills the listener's connection from
// the server side; events committed meanwhile reach the follower after it
// reconnects.
func TestListen_ReconnectsAndCatchesUp(t *testing.T) {
	url := pgtest.Database(t)
	// Its own application_name, so that only this test's listener is cut
	// (tests of other packages may be listening on the cluster too).
	appName := strings.ReplaceAll(strings.ToLower(t.Name()), "/", "_")
	a, b := open(t, url), open(t, url+"&application_name="+appName)
	defer a.Close()
	defer b.Close()
	svcA, svcB := workshop.NewService(a, nil), workshop.NewService(b, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go b.Listen(ctx, svcB.Hub(), discardLogger())
	room, err := svcA.CreateRoom(ctx, "room-key-1", workshop.RoomSpec{Name: "R"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan workshop.Event, 100)
	go svcB.Follow(ctx, room.ID, 0, true, func(evs []workshop.Event) error {
		for _, e := range evs {
			got <- e
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var killed int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE 'LISTEN%'`, appName).Scan(&killed); err != nil || killed == 0 {
		t.Fatalf("terminating the listener: %d, %v", killed, err)
	}
	for i := range 3 {
		if _, _, err := svcA.Push(ctx, room.ID, workshop.Key("chaos-key-"+string(rune('a'+i))), workshop.Event{Kind: workshop.KindChaos, Detail: "lose-ack"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		select {
		case e := <-got:
			if e.Kind != workshop.KindChaos {
				t.Fatalf("event %v, want chaos", e.Kind)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("push %d did not arrive within 5 s of the listener's reconnection", i)
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestStore_KeySource(t *testing.T) {
	storetest.RunKeySource(t, func(t *testing.T, n int) []workshop.KeySource {
		url := pgtest.Database(t)
		var srcs []workshop.KeySource
		for range n {
			s := open(t, url)
			t.Cleanup(func() { s.Close() })
			srcs = append(srcs, s)
		}
		return srcs
	})
}
