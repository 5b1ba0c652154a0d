package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"idemlab/internal/pgtest"
	"idemlab/playground"
)

// testLedgers opens a pool of size PostgreSQL ledgers of the test's own.
func testLedgers(t testing.TB, size int) *playground.PostgresLedgers {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	pg, err := playground.OpenPostgresLedgers(context.Background(), pgtest.Database(t), size, "test_web_"+hex.EncodeToString(b[:]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	return pg
}

// With the one ledger of a pool of 1 taken, a run on PostgreSQL is refused
// as busy (503, Retry-After, the page a busy SQLite run gets) as a page, a
// fragment and JSON, while SQLite runs go on; the refusals are counted as
// postgres-busy. Once the ledger is free, the same request succeeds.
func TestLedgerGate_BusyPoolAnswers503ThenTheRetrySucceeds(t *testing.T) {
	s := newTestServer(t, Config{Ledgers: testLedgers(t, 1)})
	s.ledgerGate.QueueWait = 10 * time.Millisecond
	s.adm.Budget.Wall = time.Minute // a loaded machine must not turn the 200s below into busy 503s
	h := s.Handler()
	release, err := s.ledgerGate.Acquire(context.Background()) // another learner's run holds the ledger
	if err != nil {
		t.Fatal(err)
	}
	page := "/playground?" + raceQuery + "&ledger=postgres-rc"
	resp := do(t, h, "GET", page)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("page: status %d, Retry-After %q; want 503 and 2", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if msg := document(t, resp).Find(testID("error-message")).Text(); !strings.Contains(msg, "try again in 2 seconds") {
		t.Errorf("page says %q", msg)
	}
	resp = do(t, h, "GET", page+"&fragment=1")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("fragment: status %d, Retry-After %q; want 503 and 2", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp = do(t, h, "GET", "/api/v1/run?"+raceQuery+"&ledger=postgres-serializable")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" || !strings.Contains(string(b), `"error":"The server is busy`) {
		t.Errorf("API: status %d, Retry-After %q, body %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if resp := do(t, h, "GET", "/playground?"+raceQuery); resp.StatusCode != http.StatusOK {
		t.Errorf("SQLite while the PostgreSQL pool is busy: %d, want 200", resp.StatusCode)
	}
	if got := testutil.ToFloat64(s.metrics.Refusals.WithLabelValues("postgres-busy")); got != 3 {
		t.Errorf(`refusals{reason="postgres-busy"} = %v, want 3`, got)
	}
	if got := testutil.ToFloat64(s.metrics.Refusals.WithLabelValues("busy")); got != 0 {
		t.Errorf(`refusals{reason="busy"} = %v, want 0: no slot was short`, got)
	}
	if got := testutil.ToFloat64(s.ledgerGate.InUse); got != 1 {
		t.Errorf("ledgers in use %v, want 1", got)
	}
	if n := s.adm.Cache.Len(); n != 1 {
		t.Errorf("%d answers cached, want only the SQLite one: a refusal is never kept", n)
	}

	release()
	resp = do(t, h, "GET", page)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the retry after the ledger was freed: %d, want 200", resp.StatusCode)
	}
	if cur := document(t, resp).Find(testID("pg-ledger-switch") + ` [aria-current]`).Text(); !strings.Contains(cur, "PostgreSQL RC") {
		t.Errorf("the retried page's current ledger is %q", cur)
	}
	if got := testutil.ToFloat64(s.ledgerGate.InUse); got != 0 {
		t.Errorf("ledgers in use after the run %v, want 0", got)
	}
}

// Runs queue for a ledger: a run that finds the pool taken waits, and
// runs as soon as the ledger is given back within its wait.
func TestLedgerGate_AWaitingRunGetsTheFreedLedger(t *testing.T) {
	s := newTestServer(t, Config{Ledgers: testLedgers(t, 1)})
	s.ledgerGate.QueueWait = time.Minute // only the release can end the wait
	s.adm.Budget.Wall = time.Minute
	h := s.Handler()
	release, err := s.ledgerGate.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *http.Response, 1)
	go func() { done <- do(t, h, "GET", "/api/v1/run?"+raceQuery+"&ledger=postgres-rr") }()
	for s.ledgerGate.Waiting.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if got := testutil.ToFloat64(s.metrics.RunsInFlight); got != 0 {
		t.Errorf("a run waiting for a ledger holds %v slots, want 0", got)
	}
	release()
	resp := <-done
	var tr playground.Trace
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != http.StatusOK || tr.Ledger != "postgres-rr" {
		t.Fatalf("%d %v ledger %q, want 200 on postgres-rr", resp.StatusCode, err, tr.Ledger)
	}
}

// When as many runs wait as the pool may queue, the next is refused at
// once, without waiting (its wait here would outlast the test).
func TestLedgerGate_FullQueueRefusesAtOnce(t *testing.T) {
	s := newTestServer(t, Config{Ledgers: testLedgers(t, 1)})
	s.ledgerGate.QueueWait = time.Hour
	s.ledgerGate.MaxWaiting = 0
	release, err := s.ledgerGate.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	resp := do(t, s.Handler(), "GET", "/api/v1/run?"+raceQuery+"&ledger=postgres-rc")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// /metrics shows the pool's size and use, and the postgres-busy refusals.
func TestLedgerGate_Metrics(t *testing.T) {
	s := newTestServer(t, Config{Ledgers: testLedgers(t, 2)})
	b, _ := io.ReadAll(do(t, s.Handler(), "GET", "/metrics").Body)
	for _, want := range []string{"idemlab_postgres_ledgers 2", "idemlab_postgres_ledgers_in_use 0", `idemlab_refusals_total{reason="postgres-busy"} 0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// A check on PostgreSQL takes its share of the pool, half of it, and only
// ledgers free at once past its first: with every ledger taken by runs it
// gets the checker's busy answer (the handler kept, Retry-After), counted
// as postgres-busy; with one taken it runs on two of the four, so that
// another learner's run on PostgreSQL meanwhile finds the fourth at once,
// while its own client's second check is refused.
func TestLedgerGate_ACheckTakesItsShareOfThePool(t *testing.T) {
	s := exercisePostgresServer(t)
	s.ledgerGate.QueueWait = 10 * time.Millisecond
	s.adm.Budget.Wall = time.Minute
	h := s.Handler()
	form := url.Values{"exercise": {"race-check-then-insert"}, "handler": {"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;"}, "ledger": {"postgres-rc"}}
	var runs []func()
	for range cap(s.ledgerGate.Tickets) { // runs hold every ledger
		release, err := s.ledgerGate.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, release)
	}
	resp := postForm(t, h, "/exercises/race-check-then-insert/check", form)
	doc := document(t, resp)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || doc.Find(testID("exercise-editor")).Text() != form.Get("handler") {
		t.Errorf("a check while runs hold every ledger: %d, Retry-After %q; want the busy page keeping the handler", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := testutil.ToFloat64(s.metrics.Refusals.WithLabelValues("postgres-busy")); got != 1 {
		t.Errorf(`refusals{reason="postgres-busy"} = %v, want 1`, got)
	}
	if got := testutil.ToFloat64(s.ledgerGate.InUse); got != float64(len(runs)) {
		t.Errorf("ledgers in use after the refused check %v, want the runs' %d: a refusal gives back what it took", got, len(runs))
	}
	for _, release := range runs[1:] {
		release()
	}

	checkDone := make(chan *http.Response, 1)
	go func() { checkDone <- postForm(t, h, "/api/v1/check", form) }()
	share := s.ledgerGate.CheckShare()
	for testutil.ToFloat64(s.ledgerGate.InUse) != float64(1+share) {
		time.Sleep(time.Millisecond) // the check holds its share (else the test times out)
	}
	other, err := s.ledgerGate.Acquire(context.Background())
	if err != nil {
		t.Errorf("another run while the check holds its share of the pool: %v; want a ledger at once", err)
	} else {
		other()
	}
	// The same client's second check, on PostgreSQL or SQLite, is refused
	// at once: one check at a time.
	for _, ledger := range []string{"postgres-rr", "sqlite"} {
		second := url.Values{"exercise": {"race-check-then-insert"}, "handler": {form.Get("handler")}, "ledger": {ledger}}
		resp := postForm(t, h, "/api/v1/check", second)
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "You already have a check running") {
			t.Errorf("the client's second check (%s) while its first runs: %d %s; want 429 saying its check runs", ledger, resp.StatusCode, b)
		}
	}
	resp = <-checkDone
	var got struct {
		Passed bool `json:"passed"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK || got.Passed {
		t.Errorf("the check on its share: %d %v passed=%v; want 200 and a failure (the handler adds every copy)", resp.StatusCode, err, got.Passed)
	}
	runs[0]()
	if got := testutil.ToFloat64(s.ledgerGate.InUse); got != 0 {
		t.Errorf("ledgers in use after the check %v, want 0", got)
	}
}
