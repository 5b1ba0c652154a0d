package admit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"

	"idemlab/internal/pgtest"
	"idemlab/playground"
	"idemlab/web/site"
)

// A learner's allowed SQL that runs past the run's time on PostgreSQL (ten
// ten-row lists joined without a condition: 10^10 rows) is the learner's limit: the computation gets a
// BudgetError it renders as a 422 in place, charged to the client, never
// the bare "context deadline exceeded" that was a 500.
func TestAdmission_SlowPostgresSQLIsTheLearners422(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race every time limit is scaled ten times and the run's own wall budget ends first; the plain run checks the 422")
	}
	var b [4]byte
	rand.Read(b[:])
	pg, err := playground.OpenPostgresLedgers(context.Background(), pgtest.LedgerDatabase(t), 1, "test_admit_"+hex.EncodeToString(b[:]))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	h, err := playground.ParseHandler("mine", "@on credit\n"+
		"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id AND EXISTS (SELECT 1 FROM "+
		"(VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) a, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) b, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) c, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) d, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) e, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) f, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) g, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) h, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) i, (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)) j "+
		"WHERE a.column1 + b.column1 + c.column1 + d.column1 + e.column1 + f.column1 + g.column1 + h.column1 + i.column1 + j.column1 < 0);\n")
	if err != nil {
		t.Fatal(err)
	}
	a := newTestAdmission()
	l, _ := frozenLimiter(DefaultShare())
	ctx := clientCtx(l, "198.51.100.20", "")
	out, _, err := a.Run(ctx, "slow-pg", false, func(ctx context.Context, budget *playground.Budget, form AnswerForm) (*Output, error) {
		_, err := playground.Run(ctx, playground.Request{Scenario: "lost-ack", Handlers: []string{}, Custom: []*playground.Handler{h},
			Budget: budget, Ledger: playground.Ledger{Postgres: pg, Isolation: playground.IsolationReadCommitted}})
		if err == nil {
			return nil, errors.New("the run ended without meeting a limit")
		}
		limit, msg, ok := BudgetMessage(err, a.RenderCap)
		if !ok {
			return nil, err
		}
		return &Output{Status: http.StatusUnprocessableEntity, Refusal: limit, ContentType: site.JsonContentType, Body: form.Payload([]byte(msg))}, nil
	})
	if err != nil {
		t.Fatalf("a slow statement on PostgreSQL: %v; want a 422 answer", err)
	}
	if out.Status != http.StatusUnprocessableEntity || out.Refusal != playground.LimitStatementTime {
		t.Errorf("status %d, refusal %q; want 422 and %q", out.Status, out.Refusal, playground.LimitStatementTime)
	}
	if _, cached := a.Cache.Get("slow-pg"); cached {
		t.Error("the answer was cached: PostgreSQL's time depends on other learners' locks")
	}
}
