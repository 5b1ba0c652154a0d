package web

import (
	"idemlab/web/playurl"
	"net/url"
	"strings"
	"testing"

	"idemlab/lessons"
)

const raceLesson = "/lessons/check-then-insert-race"

// lessonPostgresBlock is lesson 6's first PostgreSQL block (READ COMMITTED).
func lessonPostgresBlock(t *testing.T) *lessons.PlaygroundSpec {
	t.Helper()
	for _, spec := range builtinCourse(t).Lesson("check-then-insert-race").Playgrounds {
		if spec.Ledger == "postgres-rc" {
			return spec
		}
	}
	t.Fatal("lesson 6 has no postgres-rc block")
	return nil
}

// newCourseServer serves the built-in course.
func newCourseServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := NewServer(cfg, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// On a server without PostgreSQL ledgers, a PostgreSQL block shows its
// recorded run, labelled, with the recording's verdicts and PostgreSQL's
// own errors and waits, and no controls; it is never run on SQLite in its
// place. Its link to SQLite opens a live SQLite run of the same script,
// which makes no claim of the lesson's.
func TestLessonPage_PostgresBlockWithoutPostgresShowsItsRecording(t *testing.T) {
	spec := lessonPostgresBlock(t)
	h := newCourseServer(t, Config{}).Handler()
	doc := document(t, do(t, h, "GET", raceLesson))
	block := doc.Find("#" + spec.ID)
	if block.Find(testID("pg-recorded")).Length() != 1 || !strings.Contains(block.Find(testID("pg-recorded")).Text(), "READ COMMITTED") {
		t.Fatalf("block %s: no recorded notice naming READ COMMITTED:\n%s", spec.ID, block.Text())
	}
	if _, live := block.Attr("data-pg"); live || block.Find(testID("pg-controls")).Length() != 0 || block.Find(testID("pg-ledger-switch")).Length() != 0 {
		t.Error("the recorded block has a live playground's controls")
	}
	for _, h := range spec.Recorded.Trace.Handlers {
		got, _ := block.Find(testID("pg-verdict") + `[data-handler="` + h.Name + `"]`).Attr("data-verdict")
		if got != h.Verdict || got != spec.Expect[h.Name] {
			t.Errorf("%s: shows %q; the recording says %s, the lesson %s", h.Name, got, h.Verdict, spec.Expect[h.Name])
		}
	}
	steps := block.Find(testID("pg-steps")).Text()
	for _, want := range []string{"SQLSTATE 23505", "waits on A's transaction", "PostgreSQL makes it wait"} {
		if !strings.Contains(steps, want) {
			t.Errorf("the recorded steps lack %q", want)
		}
	}
	for _, sqliteOnly := range []string{"SQLITE_BUSY", "write lock", "BEGIN IMMEDIATE"} {
		if strings.Contains(block.Text(), sqliteOnly) {
			t.Errorf("the PostgreSQL block speaks of SQLite's %q", sqliteOnly)
		}
	}

	href, _ := block.Find(testID("pg-recorded-sqlite")).Attr("href")
	u, err := url.Parse(href)
	if err != nil || u.Query().Get("ledger") != "sqlite" || u.Query().Get("pg") != spec.ID {
		t.Fatalf("the SQLite link %q does not name ledger=sqlite for %s", href, spec.ID)
	}
	href, _, _ = strings.Cut(href, "#")
	resp := do(t, h, "GET", href)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d", href, resp.StatusCode)
	}
	live := document(t, resp).Find("#" + spec.ID)
	if _, ok := live.Attr("data-pg"); !ok || live.Find(testID("pg-recorded")).Length() != 0 {
		t.Error("the SQLite link does not open a live playground")
	}
	if live.Find(testID("playground-expect")).Length() != 0 || live.Find(testID("playground-caption")).Length() != 0 {
		t.Error("the SQLite run shows the PostgreSQL block's expectations or its caption")
	}

	// The block's own run by URL is its recording; another script on
	// PostgreSQL is a 400 in place that names -ledger-database, not a
	// SQLite run.
	place := playurl.LessonPlace("check-then-insert-race", spec, false)
	own := place.Home
	own.At = 2
	resp = do(t, h, "GET", place.QueryHref(own)+"&fragment=1")
	if doc := document(t, resp); resp.StatusCode != 200 || doc.Find(testID("pg-recorded")).Length() != 1 {
		t.Errorf("the block's own run by URL: %d, recorded %d", resp.StatusCode, doc.Find(testID("pg-recorded")).Length())
	}
	other := place.Home
	other.Events = other.Events[:3]
	resp = do(t, h, "GET", place.QueryHref(other))
	if resp.StatusCode != 400 || !strings.Contains(document(t, resp).Text(), "-ledger-database") {
		t.Errorf("another PostgreSQL script on a SQLite server: %d, want 400 naming -ledger-database", resp.StatusCode)
	}
}

// A PostgreSQL block's URLs spell the ledger only when it is not the
// block's: ledger=sqlite for its SQLite state, nothing for its own.
func TestPgURL_PostgresBlockSpellsSQLite(t *testing.T) {
	spec := lessonPostgresBlock(t)
	place := playurl.LessonPlace("check-then-insert-race", spec, false)
	onSQLite := place.Home
	onSQLite.Ledger = ""
	q := place.Query(onSQLite)
	if !strings.Contains(q, "ledger=sqlite") {
		t.Errorf("SQLite state of a PostgreSQL block: %s", q)
	}
	vals, _ := url.ParseQuery(q)
	back, redirect, err := playurl.StateFromQuery(vals, place.Home, []string{"A", "B", "C"})
	if err != nil || redirect || back.Ledger != "" {
		t.Errorf("decoded %q: ledger %q, redirect %v, %v", q, back.Ledger, redirect, err)
	}
	if q := place.Query(place.Home); strings.Contains(q, "ledger") {
		t.Errorf("the block's own state spells its ledger: %s", q)
	}
	vals.Set("ledger", "postgres-rc")
	if back, redirect, _ := playurl.StateFromQuery(vals, place.Home, []string{"A", "B", "C"}); !redirect || back.Ledger != "postgres-rc" {
		t.Errorf("ledger=postgres-rc on a postgres-rc block: redirect %v, ledger %q; want a redirect to the URL without it", redirect, back.Ledger)
	}
}

// With PostgreSQL ledgers, the same block is live: the switch shows READ
// COMMITTED current, and the run is PostgreSQL's.
func TestLessonPage_PostgresBlockLiveOnAPostgresServer(t *testing.T) {
	spec := lessonPostgresBlock(t)
	pg := testLedgers(t, 1)
	h := newCourseServer(t, Config{Ledgers: pg}).Handler()
	block := document(t, do(t, h, "GET", raceLesson)).Find("#" + spec.ID)
	if _, live := block.Attr("data-pg"); !live || block.Find(testID("pg-recorded")).Length() != 0 {
		t.Fatal("the PostgreSQL block is not live on a server with PostgreSQL")
	}
	if cur := block.Find(testID("pg-ledger-switch")+" [aria-current]").AttrOr("data-testid", ""); cur != "pg-ledger-postgres-rc" {
		t.Errorf("current ledger %q, want pg-ledger-postgres-rc", cur)
	}
	for _, h := range spec.Recorded.Trace.Handlers {
		if got := block.Find(testID("pg-verdict")+`[data-handler="`+h.Name+`"]`).AttrOr("data-verdict", ""); got != h.Verdict {
			t.Errorf("%s live: %s, recorded %s", h.Name, got, h.Verdict)
		}
	}
	// Its goals are live too: unmet at first, met at their solution, on PostgreSQL.
	for _, g := range spec.Goals {
		item := block.Find(`[data-goal="` + g.ID + `"]`)
		href, ok := item.Find(testID("pg-goal-solution")).Attr("href")
		if !ok || block.Find("[data-goal-met]").Length() != 0 {
			t.Fatalf("goal %s: no solution link, or met before the learner did anything", g.ID)
		}
		href, _, _ = strings.Cut(href, "#")
		if !strings.Contains(href, "pg="+spec.ID) || strings.Contains(href, "ledger=") {
			t.Errorf("goal %s: the solution %s leaves the block's ledger", g.ID, href)
		}
		met := document(t, do(t, h, "GET", href)).Find("#" + spec.ID + ` [data-goal-met="` + g.ID + `"]`)
		if met.Length() != 1 {
			t.Errorf("goal %s is not met at its solution %s", g.ID, href)
		}
	}
}
