package lessons

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"idemlab/internal/pgtest"
	"idemlab/playground"
)

// TestPostgresBlocks_MatchTheirRecordings proves every PostgreSQL block of
// the built-in course on a real server (its expect claims and goals, as
// `idemlab lint -ledger-database` does) and compares each block's committed
// recording with the run made again, byte for byte: a recording that a
// change to the engine or the lesson left stale fails here, in CI. With
// -update it writes the recordings.
func TestPostgresBlocks_MatchTheirRecordings(t *testing.T) {
	url := pgtest.LedgerDatabase(t)
	var b [4]byte
	rand.Read(b[:])
	pg, err := playground.OpenPostgresLedgers(context.Background(), url, 1, "test_lessons_"+hex.EncodeToString(b[:]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	course, err := Load(Embedded(), Options{Ledgers: pg, DisplayRoot: "lessons"})
	if err != nil {
		t.Fatalf("the course on PostgreSQL:\n%v", err)
	}
	n := 0
	for _, l := range course.Lessons {
		for _, spec := range l.Playgrounds {
			if spec.Ledger == "" {
				continue
			}
			n++
			data, err := RecordLive(context.Background(), spec, pg)
			if err != nil {
				t.Fatalf("%s %s: %v", l.Slug, spec.ID, err)
			}
			again, err := RecordLive(context.Background(), spec, pg)
			if err != nil || !bytes.Equal(data, again) {
				t.Errorf("%s %s: the same block twice gave different traces (%v)", l.Slug, spec.ID, err)
			}
			file := filepath.FromSlash(RecordingPath(l.Slug, spec.ID))
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if spec.Recorded == nil {
				t.Errorf("%s %s: no recording %s; run this test with -update", l.Slug, spec.ID, file)
				continue
			}
			if !bytes.Equal(data, spec.Recorded.data) {
				t.Errorf("%s %s: the recording %s is stale: the run on PostgreSQL differs; run this test with -update and read the diff", l.Slug, spec.ID, file)
			}
		}
	}
	if n < 4 {
		t.Errorf("%d PostgreSQL blocks in the built-in course, want lessons 6 (two), 12 and 13", n)
	}
}

// Without a server, a PostgreSQL block is checked against its recording:
// its claims must be the recording's, and the recording of its very run.
func TestLoad_PostgresBlockAgainstItsRecording(t *testing.T) {
	course, err := Load(Embedded(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var spec *PlaygroundSpec
	for _, l := range course.Lessons {
		for _, p := range l.Playgrounds {
			if p.Ledger == "postgres-rc" && l.Slug == "check-then-insert-race" {
				spec = p
			}
		}
	}
	if spec == nil || spec.Recorded == nil {
		t.Fatal("lesson 6 has no recorded postgres-rc block")
	}
	rec, err := os.ReadFile(filepath.FromSlash(spec.Recorded.Path))
	if err != nil {
		t.Fatal(err)
	}
	block := func(extra string) string {
		return "---\ntitle: A\nsummary: S.\norder: 1\nminutes: 1\nobjectives: [O.]\n---\n\n# A\n\n```playground\nscenario: concurrent-duplicate\nhandlers: [check-then-insert, dedupe-tx]\nledger: postgres-rc\n" +
			"caption: C.\n" + extra + "```\n"
	}
	const script = "script: start msg-1 on A; start msg-1 on B; step A 2; step B 2; finish A; finish B\n"
	cases := []struct {
		name      string
		md        string
		recording bool
		want      string // "" = loads
	}{
		{"matches", block(script + "expect: {check-then-insert: duplicate-effect, dedupe-tx: ok}\n"), true, ""},
		{"wrong claim", block(script + "expect: {check-then-insert: ok}\n"), true,
			"01-a.md:17: expect: lesson claims check-then-insert: ok but PostgreSQL (postgres-rc) shows duplicate-effect"},
		{"another run", block("script: start msg-1 on A; start msg-1 on B; finish A; finish B\n"), true,
			"01-a.md:14: ledger: the recording recorded/a.pg-1.json is of another run (its script is start msg-1 on A; start msg-1 on B; step A 2; step B 2; finish A; finish B)"},
		{"no recording", block(script), false,
			"01-a.md:14: ledger: postgres-rc runs on PostgreSQL and has no recording (recorded/a.pg-1.json)"},
		{"unknown ledger", strings.Replace(block(script), "postgres-rc", "postgres-read-committed", 1), false,
			"01-a.md:14: playground: unknown ledger \"postgres-read-committed\" (want sqlite, postgres-rc, postgres-rr or postgres-serializable)"},
		{"typo", strings.Replace(block(script), "postgres-rc", "postgres-serialisable", 1), false,
			"01-a.md:14: playground: unknown ledger \"postgres-serialisable\": did you mean \"postgres-serializable\"?"},
		{"not a string", strings.Replace(block(script), "postgres-rc", "[postgres-rc]", 1), false,
			"01-a.md:14: playground: ledger must be a string, not a list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{"01-a.md": {Data: []byte(c.md)}}
			if c.recording {
				fsys["recorded/a.pg-1.json"] = &fstest.MapFile{Data: rec}
			}
			_, err := Load(fsys, Options{})
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("Load: %v\nwant a report starting %q", err, c.want)
			}
		})
	}
}

// A recording that is not a trace (hand-edited, from another version of
// the engine) is a problem that says how to record it again.
func TestLoad_BrokenRecordingSaysHowToRecordAgain(t *testing.T) {
	md := "---\ntitle: A\nsummary: S.\norder: 1\nminutes: 1\nobjectives: [O.]\n---\n\n# A\n\n```playground\nscenario: lost-ack\nhandlers: [increment, dedupe-tx]\nledger: postgres-rr\nscript: deliver msg-1\ncaption: C.\n```\n"
	for _, rec := range []string{"", "{", `{"scenario": "lost-ack", "colour": 1}`, `{"scenario": "nope"}`, `{"scenario": "lost-ack", "events": [{}], "handlers": [{"name": "x"}]}`, `{"scenario": "lost-ack"} {}`} {
		_, err := Load(fstest.MapFS{"01-a.md": {Data: []byte(md)}, "recorded/a.pg-1.json": {Data: []byte(rec)}}, Options{})
		if err == nil || !strings.Contains(err.Error(), "01-a.md:14: ledger: recording recorded/a.pg-1.json: ") || !strings.Contains(err.Error(), "-update") {
			t.Errorf("recording %q: %v", rec, err)
		}
	}
}
