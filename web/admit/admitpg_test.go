package admit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"testing"

	"idemlab/internal/pgtest"
	"idemlab/playground"
	"idemlab/web/site"
)

// A learner's allowed SQL that runs past the run's time on PostgreSQL (a
// join without a condition) is the learner's limit: the computation gets a
// BudgetError it renders as a 422 in place, charged to the client, never
// the bare "context deadline exceeded" that was a 500.
func TestAdmission_SlowPostgresSQLIsTheLearners422(t *testing.T) {
	var b [4]byte
	rand.Read(b[:])
	pg, err := playground.OpenPostgresLedgers(context.Background(), pgtest.Database(t), 1, "test_admit_"+hex.EncodeToString(b[:]))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	h, err := playground.ParseHandler("mine", "@on credit\n"+
		"SELECT count(*) FROM accounts a1, accounts a2, accounts a3, accounts a4, accounts a5, accounts a6, accounts a7, "+
		"accounts a8, accounts a9, accounts a10, accounts a11, accounts a12, accounts a13, accounts a14;\n"+
		"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n")
	if err != nil {
		t.Fatal(err)
	}
	a := newTestAdmission()
	l, _ := frozenLimiter(DefaultShare())
	ctx := clientCtx(l, "198.51.100.20", "")
	out, _, err := a.Run(ctx, "slow-pg", false, func(ctx context.Context, budget *playground.Budget, form AnswerForm) (*Output, error) {
		_, err := playground.Run(ctx, playground.Request{Scenario: "lost-ack", Handlers: []string{}, Custom: []*playground.Handler{h},
			Budget: budget, Ledger: playground.Ledger{Postgres: pg, Isolation: playground.IsolationReadCommitted}})
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
