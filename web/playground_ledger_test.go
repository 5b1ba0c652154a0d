package web

import (
	"encoding/json"
	"idemlab/web/site"
	"io"
	"net/url"
	"strings"
	"testing"

	"idemlab/playground"
)

const raceQuery = "scenario=concurrent-duplicate&handlers=check-then-insert,dedupe-tx&script=" +
	"start+msg-1+on+A%3B+start+msg-1+on+B%3B+step+A%3B+step+B%3B+step+A%3B+step+B%3B+finish+A%3B+finish+B"

// Without PostgreSQL ledgers, nothing changes: no switch, and a URL that
// names one is a 400 that says what the server lacks.
func TestLedgerSwitch_AbsentWithoutPostgres(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "GET", "/playground?"+raceQuery)
	if doc := document(t, resp); doc.Find(testID("pg-ledger-switch")).Length() != 0 {
		t.Error("a ledger switch without PostgreSQL ledgers")
	}
	resp = do(t, h, "GET", "/api/v1/run?"+raceQuery+"&ledger=postgres-rc")
	var body site.APIError
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 || body.Field != "ledger" || !strings.Contains(body.Error, "-ledger-database") {
		t.Errorf("%d %+v, want 400 on field ledger naming -ledger-database", resp.StatusCode, body)
	}
	resp = do(t, h, "GET", "/api/v1/run?"+raceQuery+"&ledger=oracle")
	if resp.StatusCode != 400 {
		t.Errorf("ledger=oracle: %d, want 400", resp.StatusCode)
	}
	// SQLite is the default: spelled out, the page redirects to the URL without it.
	resp = do(t, h, "GET", "/playground?"+raceQuery+"&ledger=sqlite")
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 != 3 || strings.Contains(loc, "ledger") {
		t.Errorf("ledger=sqlite: %d to %q, want a redirect to the URL without it", resp.StatusCode, loc)
	}
}

// With PostgreSQL ledgers, every playground has the switch; its links
// keep the state and name the ledger; the page and the API run on it.
func TestLedgerSwitch_RunsOnPostgres(t *testing.T) {
	pg := testLedgers(t, 2)
	h := newTestServer(t, Config{Ledgers: pg}).Handler()

	doc := document(t, do(t, h, "GET", "/playground?"+raceQuery))
	sw := doc.Find(testID("pg-ledger-switch"))
	if sw.Length() != 1 {
		t.Fatalf("%d ledger switches, want 1", sw.Length())
	}
	href, _ := sw.Find(testID("pg-ledger-postgres-rr")).Attr("href")
	u, err := url.Parse(href)
	if err != nil || u.Query().Get("ledger") != "postgres-rr" || !strings.Contains(u.Query().Get("script"), "step A") {
		t.Fatalf("the RR link %q does not keep the state on ledger=postgres-rr", href)
	}
	if cur := sw.Find(`[aria-current]`).Text(); !strings.Contains(cur, "SQLite") {
		t.Errorf("the current ledger is %q, want SQLite", cur)
	}

	resp := do(t, h, "GET", href)
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %d\n%s", href, resp.StatusCode, body)
	}
	doc = document(t, resp)
	if cur := doc.Find(testID("pg-ledger-switch") + ` [aria-current]`).Text(); !strings.Contains(cur, "RR") {
		t.Errorf("on the RR page the current ledger is %q", cur)
	}
	if strings.Contains(doc.Text(), "SQLITE_BUSY") || strings.Contains(doc.Text(), "→ BUSY") {
		t.Error("the PostgreSQL page speaks of SQLite's BUSY")
	}
	for _, a := range doc.Find(testID("pg-controls") + " a[href*='deliver']").EachIter() {
		if h, _ := a.Attr("href"); !strings.Contains(h, "ledger=postgres-rr") {
			t.Errorf("a control leaves the ledger: %s", h)
		}
	}

	resp = do(t, h, "GET", "/api/v1/run?"+raceQuery+"&ledger=postgres-rr")
	var tr playground.Trace
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	if tr.Ledger != "postgres-rr" || tr.Handlers[1].Verdict != playground.VerdictOK {
		t.Errorf("ledger %q, dedupe-tx %s", tr.Ledger, tr.Handlers[1].Verdict)
	}
	var waited, retried bool
	for _, st := range tr.Handlers[1].Steps {
		waited = waited || st.Kind == playground.StepBlocked && strings.Contains(st.Note, "waits on A's transaction")
		retried = retried || strings.Contains(st.Error, "SQLSTATE 40001")
	}
	if !waited || !retried {
		t.Errorf("dedupe-tx on REPEATABLE READ: waited %v, 40001 %v; want both", waited, retried)
	}
	// A learner's handler in SQLite's dialect is refused with the hint.
	resp = do(t, h, "GET", "/api/v1/run?"+raceQuery+"&ledger=postgres-rc&handler="+url.QueryEscape("INSERT OR IGNORE INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);"))
	var body site.APIError
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 400 || !strings.Contains(body.Error, "ON CONFLICT DO NOTHING") {
		t.Errorf("%d %+v, want 400 with the hint", resp.StatusCode, body)
	}
}
