package web

import (
	"encoding/json"
	"idemlab/web/exercise"
	"idemlab/web/site"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"idemlab/playground"
)

// Without PostgreSQL ledgers the exercise form offers no choice, and a
// check that names a PostgreSQL ledger (or no ledger at all) is a 400 on
// the field ledger that says what is wrong.
func TestExerciseCheck_LedgerWithoutPostgres(t *testing.T) {
	h := exerciseServer(t).Handler()
	if doc := document(t, do(t, h, "GET", "/exercises/race-check-then-insert")); doc.Find(testID("exercise-ledger")).Length() != 0 {
		t.Error("a ledger choice without PostgreSQL ledgers")
	}
	for _, c := range []struct{ ledger, want string }{
		{"postgres-rc", "-ledger-database"},
		{"oracle", `unknown ledger "oracle"; ledgers are sqlite, postgres-rc`},
	} {
		form := url.Values{"exercise": {"race-check-then-insert"}, "handler": {"SELECT 1;"}, "ledger": {c.ledger}}
		resp := postForm(t, h, "/api/v1/check", form)
		var body site.APIError
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 400 || body.Field != "ledger" || !strings.Contains(body.Error, c.want) {
			t.Errorf("ledger=%s: %d %+v, want 400 on field ledger saying %q", c.ledger, resp.StatusCode, body, c.want)
		}
		resp = postForm(t, h, "/exercises/race-check-then-insert/check", form)
		if doc := document(t, resp); resp.StatusCode != 400 || !strings.Contains(doc.Find(testID("exercise-result")).Text(), c.want) || doc.Find(testID("exercise-editor")).Text() != "SELECT 1;" {
			t.Errorf("form, ledger=%s: %d, want a 400 page that keeps the handler and says %q", c.ledger, resp.StatusCode, c.want)
		}
	}
}

// exercisePostgresServer is the course's server with PostgreSQL ledgers
// of its own. Its checks may take a minute: these tests judge answers,
// not speed (BenchmarkCheck_Postgres does), on a machine shared with
// other suites.
func exercisePostgresServer(t *testing.T) *Server {
	t.Helper()
	saved := exercise.ExerciseCheckTimeout
	exercise.ExerciseCheckTimeout = time.Minute
	t.Cleanup(func() { exercise.ExerciseCheckTimeout = saved })
	pg := testLedgers(t, 4)
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler), Ledgers: pg}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// With PostgreSQL ledgers the exercise form offers every ledger; a check
// on one answers PostgreSQL's verdict, its counterexample replays in the
// playground on the same ledger, and the same POST twice gives the same
// answer byte for byte.
func TestExerciseCheck_OnPostgres(t *testing.T) {
	s := exercisePostgresServer(t)
	h := s.Handler()
	doc := document(t, do(t, h, "GET", "/exercises/race-check-then-insert"))
	var names []string
	for _, o := range doc.Find(testID("exercise-ledger") + " option").EachIter() {
		v, _ := o.Attr("value")
		names = append(names, v)
	}
	if strings.Join(names, ",") != strings.Join(playground.LedgerNames(), ",") {
		t.Errorf("the ledger choice offers %v", names)
	}

	// A check outside any transaction: on PostgreSQL at READ COMMITTED
	// both copies pass the check and both credit. (A check inside the
	// transaction holds there: the second copy's INSERT fails with 23505,
	// it is not acked, and its redelivery finds the id.)
	handler := "@on credit\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\n" +
		"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n" +
		"INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n"
	form := url.Values{"exercise": {"race-check-then-insert"}, "handler": {handler}, "ledger": {"postgres-rc"}}
	first := readBody(t, postForm(t, h, "/api/v1/check", form))
	second := readBody(t, postForm(t, h, "/api/v1/check", form))
	if first != second {
		t.Errorf("the same POST twice gave two answers:\n%s\n%s", first, second)
	}
	got := decodeCheck(t, first)
	if got.Passed || got.Counterexample == nil {
		t.Fatalf("got %+v", got)
	}
	if !strings.Contains(got.HTML, "breaks it on PostgreSQL, READ COMMITTED") {
		t.Errorf("the result does not name the ledger: %s", got.HTML)
	}
	u, err := url.Parse(got.Playground)
	if err != nil || u.Query().Get("ledger") != "postgres-rc" {
		t.Fatalf("the replay link %q leaves the ledger", got.Playground)
	}
	_, query, _ := strings.Cut(got.Playground, "?")
	replay := do(t, h, "GET", "/api/v1/run?"+query)
	var tr playground.Trace
	if err := json.NewDecoder(replay.Body).Decode(&tr); err != nil || replay.StatusCode != 200 {
		t.Fatalf("the replay %s: %d %v", query, replay.StatusCode, err)
	}
	learner := tr.Handlers[len(tr.Handlers)-1]
	if tr.Ledger != "postgres-rc" || learner.OK || learner.Verdict != playground.VerdictDuplicate {
		t.Errorf("the replay runs on %q and judges the handler %s (ok %v), want duplicate-effect", tr.Ledger, learner.Verdict, learner.OK)
	}

	// The form without JavaScript keeps the chosen ledger.
	page := document(t, postForm(t, h, "/exercises/race-check-then-insert/check", form))
	if v, _ := page.Find(testID("exercise-ledger") + " option[selected]").Attr("value"); v != "postgres-rc" {
		t.Errorf("the result page selects %q", v)
	}
	if page.Find(testID("exercise-counterexample")).Length() != 1 {
		t.Error("the result page has no counterexample")
	}

	// SQLite-only syntax on PostgreSQL: the handler error names the line
	// and PostgreSQL's way, as any handler that does not parse.
	form.Set("handler", "@on credit\nBEGIN IMMEDIATE;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n")
	bad := decodeCheck(t, readBody(t, postForm(t, h, "/api/v1/check", form)))
	if bad.Error == nil || bad.Error.Line != 2 || !strings.Contains(bad.Error.Message, "BEGIN IMMEDIATE is SQLite's") {
		t.Errorf("got %+v", bad.Error)
	}
}

// FuzzCheckEndpoint_Ledger: whatever the ledger field says, the check
// endpoint answers 200 or 400 with JSON, never a 500 or a panic; a 400
// names the field ledger.
func FuzzCheckEndpoint_Ledger(f *testing.F) {
	for _, name := range append(playground.LedgerNames(), "", "oracle", "postgres", "POSTGRES-RC", "sqlite\x00", "postgres-rc postgres-rr") {
		f.Add(name)
	}
	s := exerciseServer(f)
	h := s.handle(newExerciseChecker(s, 64).ServeCheckAPI)
	f.Fuzz(func(t *testing.T, ledger string) {
		resp := postForm(t, h, "/api/v1/check", url.Values{"exercise": {"dedupe-credit"}, "handler": {"@on credit\nSELECT 1;\n"}, "ledger": {ledger}})
		body := readBody(t, resp)
		var e site.APIError
		switch {
		case resp.StatusCode == 200:
		case resp.StatusCode == 400 && json.Unmarshal([]byte(body), &e) == nil && e.Field == "ledger":
		default:
			t.Fatalf("ledger %q: %d %s", ledger, resp.StatusCode, body)
		}
		if !json.Valid([]byte(body)) {
			t.Fatalf("not JSON: %s", body)
		}
	})
}
