package storetest

import (
	"errors"
	"sync"
	"testing"

	"idemlab/workshop"
)

// OpenKeySources opens n key sources on one place (one file, one database),
// as n replicas starting at once would.
type OpenKeySources func(t *testing.T, n int) []workshop.KeySource

// RunKeySource checks a workshop.KeySource: the first start keeps its key,
// every later start (of any replica) gets that key, a rotation replaces it
// for all, and replicas starting together agree on one key.
func RunKeySource(t *testing.T, open OpenKeySources) {
	t.Run("KeptAcrossStarts", func(t *testing.T) {
		srcs := open(t, 2)
		if _, err := srcs[0].InstructorKey(ctx(t), "", false); !errors.Is(err, workshop.ErrNotFound) {
			t.Fatalf("an empty source without create: %v, want ErrNotFound", err)
		}
		first, err := srcs[0].InstructorKey(ctx(t), "aaaa-first", true)
		if err != nil || first != "aaaa-first" {
			t.Fatalf("first start: %q, %v; want the fresh key kept", first, err)
		}
		for i, s := range srcs {
			got, err := s.InstructorKey(ctx(t), "bbbb-later", true)
			if err != nil || got != first {
				t.Errorf("a later start on source %d: %q, %v; want the kept %q", i, got, err, first)
			}
		}
		if err := srcs[1].SetInstructorKey(ctx(t), "cccc-rotated"); err != nil {
			t.Fatal(err)
		}
		for i, s := range srcs {
			if got, err := s.InstructorKey(ctx(t), "", false); err != nil || got != "cccc-rotated" {
				t.Errorf("after a rotation, source %d: %q, %v; want the new key", i, got, err)
			}
		}
	})
	t.Run("ConcurrentFirstStarts", func(t *testing.T) {
		srcs := open(t, 4)
		keys := make([]string, 4*len(srcs))
		var wg sync.WaitGroup
		for i := range keys {
			wg.Go(func() {
				k, err := srcs[i%len(srcs)].InstructorKey(ctx(t), workshop.NewInstructorKey(), true)
				if err != nil {
					t.Error(err)
				}
				keys[i] = k
			})
		}
		wg.Wait()
		for i, k := range keys {
			if k != keys[0] {
				t.Fatalf("start %d got %q, start 0 %q: replicas starting together disagree", i, k, keys[0])
			}
		}
	})
}
