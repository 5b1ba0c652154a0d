package workshop_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"idemlab/workshop"
	"idemlab/workshop/storetest"
)

func TestKeyFile_Conformance(t *testing.T) {
	storetest.RunKeySource(t, func(t *testing.T, n int) []workshop.KeySource {
		path := filepath.Join(t.TempDir(), "state", workshop.KeyFileName)
		srcs := make([]workshop.KeySource, n)
		for i := range srcs {
			srcs[i] = workshop.KeyFile(path)
		}
		return srcs
	})
}

func TestKeyFile_KeptForTheOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), workshop.KeyFileName)
	src := workshop.KeyFile(path)
	key := workshop.NewInstructorKey()
	if _, err := src.InstructorKey(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if m := info.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", when, m)
		}
	}
	check("made")
	if err := src.SetInstructorKey(t.Context(), workshop.NewInstructorKey()); err != nil {
		t.Fatal(err)
	}
	check("rotated")
}

// A key from before a restart still opens the gate after it: the restarted
// server reads the kept key instead of drawing one.
func TestInstructorGate_KeyFromBeforeARestartStillWorks(t *testing.T) {
	src := workshop.KeyFile(filepath.Join(t.TempDir(), workshop.KeyFileName))
	start := func() *workshop.InstructorGate {
		key, err := src.InstructorKey(t.Context(), workshop.NewInstructorKey(), true)
		if err != nil {
			t.Fatal(err)
		}
		return workshop.NewInstructorGate(key, src, nil)
	}
	before := start()
	link := before.Key()
	if ok, _ := before.Check(t.Context(), "10.0.0.1", link); !ok {
		t.Fatal("the gate refuses its own key")
	}
	after := start() // the restart
	if ok, _ := after.Check(t.Context(), "10.0.0.1", link); !ok {
		t.Error("the key from before the restart is refused after it")
	}
}

func TestInstructorGate_LimitsWrongKeysPerClient(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	key := workshop.NewInstructorKey()
	g := workshop.NewInstructorGate(key, nil, clock)
	ctx := context.Background()
	for i := range workshop.KeyAttemptsBurst {
		if ok, retry := g.Check(ctx, "attacker", "wrong"); ok || retry != 0 {
			t.Fatalf("attempt %d: ok %t retry %v; want a plain refusal", i, ok, retry)
		}
	}
	ok, retry := g.Check(ctx, "attacker", key)
	if ok || retry <= 0 || retry > workshop.KeyAttemptEvery {
		t.Fatalf("after %d wrong keys even the right one: ok %t retry %v; want refused for up to %v", workshop.KeyAttemptsBurst, ok, retry, workshop.KeyAttemptEvery)
	}
	if ok, _ := g.Check(ctx, "instructor", key); !ok {
		t.Error("another client with the right key is refused")
	}
	mu.Lock()
	now = now.Add(workshop.KeyAttemptEvery)
	mu.Unlock()
	if ok, _ := g.Check(ctx, "attacker", key); !ok {
		t.Error("a client that waited is still refused")
	}
}

func TestInstructorGate_ARotationReachesARunningGate(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	src := workshop.KeyFile(filepath.Join(t.TempDir(), workshop.KeyFileName))
	old, _ := src.InstructorKey(t.Context(), workshop.NewInstructorKey(), true)
	g := workshop.NewInstructorGate(old, src, clock)
	rotated := workshop.NewInstructorKey()
	if err := src.SetInstructorKey(t.Context(), rotated); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if ok, _ := g.Check(t.Context(), "a", rotated); !ok {
		t.Error("the rotated key is refused a minute after the rotation")
	}
	if ok, _ := g.Check(t.Context(), "a", old); ok {
		t.Error("the old key still opens the gate after the rotation")
	}
}

func TestCheckInstructorKey(t *testing.T) {
	for key, ok := range map[string]bool{
		workshop.NewInstructorKey():           true,
		"3F2A9C0B7D1E4A6F8B2C5D0E9A1B3C7D":    true,  // upper case is hexadecimal too
		"0123456789abcdef":                    false, // 64 bits
		"kill-test-instructor-key-abcdefgh":   false, // not hexadecimal
		"00000000000000000000000000000000":    false,
		"01230123012301230123012301230123":    false, // 4 distinct digits
		"0123456789abcdeffffffffff0123456789": false, // f 10 times in a row
	} {
		if err := workshop.CheckInstructorKey(key); (err == nil) != ok {
			t.Errorf("CheckInstructorKey(%q) = %v, want ok %t", key, err, ok)
		}
	}
	for range 10000 {
		if k := workshop.NewInstructorKey(); workshop.CheckInstructorKey(k) != nil {
			t.Fatalf("a drawn key %s is refused: %v", k, workshop.CheckInstructorKey(k))
		}
	}
}
