package playground

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// replayLoop is a script that makes the broker work hard: every publish
// grows the log that every following replay delivers again.
func replayLoop(n int) string {
	var b strings.Builder
	b.WriteString("deliver msg-1; deliver msg-2; deliver msg-3")
	for i := 0; i < n; i++ {
		b.WriteString("; publish msg-1; replay")
	}
	return b.String()
}

// slowHandler is a learner handler whose last statement is a cross join
// of 256 rows four ways: it runs until the sandbox stops it.
var slowHandler = "@on credit\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n" +
	strings.Repeat("INSERT INTO processed_messages SELECT message_id || '.' || (SELECT count(*) FROM processed_messages), :now FROM processed_messages;\n", 8) +
	"SELECT count(*) FROM processed_messages a, processed_messages b, processed_messages c, processed_messages d;\n"

func TestBudget_EachLimitStopsTheRunWithItsMessage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		req    Request
		budget Budget
		limit  string
		want   string
	}{
		{"deliveries", Request{Scenario: "topic-replay", Script: replayLoop(20)}, Budget{Deliveries: 50}, LimitDeliveries, "stopped after 50 deliveries"},
		{"steps", Request{Scenario: "topic-replay", Script: replayLoop(20)}, Budget{Steps: 100}, LimitSteps, "stopped after 100 steps"},
		{"rows", Request{Scenario: "topic-replay", Script: replayLoop(20)}, Budget{RowsChanged: 30}, LimitRows, "changing 30 rows"},
		{"trace bytes", Request{Scenario: "topic-replay", Script: replayLoop(20)}, Budget{TraceBytes: 16 << 10}, LimitTraceBytes, "reached 16 KiB"},
		{"cpu", Request{Scenario: "topic-replay", Script: replayLoop(90)}, Budget{CPU: 20 * time.Millisecond}, LimitCPU, "20ms of CPU time"},
		{"wall", Request{Scenario: "topic-replay", Script: replayLoop(90)}, Budget{Wall: 20 * time.Millisecond}, LimitWall, "stopped after 20ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Budget = &tc.budget
			tr, err := Run(context.Background(), tc.req)
			var be *BudgetError
			if !errors.As(err, &be) {
				t.Fatalf("Run = %v, %v; want a *BudgetError", tr != nil, err)
			}
			if be.Limit != tc.limit || !strings.Contains(be.Error(), tc.want) {
				t.Errorf("error = %q (limit %s); want limit %s and %q", be.Error(), be.Limit, tc.limit, tc.want)
			}
		})
	}
}

func TestBudget_StatementCPULowersTheSandboxDeadline(t *testing.T) {
	mine, err := ParseHandler("mine", slowHandler)
	if err != nil {
		t.Fatal(err)
	}
	b := Budget{StatementCPU: 5 * time.Millisecond}
	tr, err := Run(context.Background(), Request{Scenario: "lost-ack", Handlers: []string{"increment"}, Custom: []*Handler{mine}, Script: "deliver msg-1", Budget: &b})
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, st := range tr.Handlers[1].Steps {
		if st.Error != "" {
			msg = st.Error
			break
		}
	}
	if !strings.Contains(msg, "ran longer than 5 ms of CPU time") {
		t.Errorf("the slow statement's error is %q; want the 5 ms statement deadline", msg)
	}
}

func TestBudget_DefaultStopsTheWorstScriptsQuickly(t *testing.T) {
	b := DefaultBudget()
	start := time.Now()
	_, err := Run(context.Background(), Request{Scenario: "topic-replay", Script: replayLoop(98), Budget: &b})
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("the longest replay loop ran to the end under the default budget (err %v)", err)
	}
	t.Logf("stopped at %s after %v", be.Limit, time.Since(start))
}

func TestBudget_UsageReportsWhatTheRunUsed(t *testing.T) {
	b := Budget{CPU: time.Minute}
	var u Usage
	if _, err := Run(context.Background(), Request{Scenario: "topic-replay", Script: replayLoop(5), Budget: &b, Usage: &u}); err != nil {
		t.Fatal(err)
	}
	if u.Deliveries < 20 || u.Steps <= u.Deliveries || u.CPU <= 0 || u.Wall < u.CPU/2 {
		t.Errorf("usage %+v; want the deliveries, more steps, and CPU and wall time", u)
	}
}

func TestBudget_NilBudgetRunsUnlimited(t *testing.T) {
	if _, err := Run(context.Background(), Request{Scenario: "topic-replay", Script: replayLoop(10)}); err != nil {
		t.Fatal(err)
	}
}

// A run on PostgreSQL is not metered by its thread's CPU clock (its work is
// the database's, on other goroutines and processes, and pinning its
// goroutine to a thread costs a handoff per statement): a CPU budget no
// run could keep stops the SQLite run and not the PostgreSQL one, whose
// Usage reports no CPU; the other limits hold it.
func TestBudget_PostgresRunIsNotMeteredByThreadCPU(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	for _, tc := range []struct {
		ledger    string
		wantLimit string
	}{
		{"sqlite", LimitCPU},
		{"postgres-rc", ""},
	} {
		t.Run(tc.ledger, func(t *testing.T) {
			lg, err := ParseLedger(tc.ledger, pg)
			if err != nil {
				t.Fatal(err)
			}
			b := DefaultBudget()
			b.CPU = time.Nanosecond
			b.Wall = time.Hour // a loaded machine must not cross the wall first
			var u Usage
			_, err = Run(context.Background(), Request{Scenario: "topic-replay", Script: replayLoop(20), Ledger: lg, Budget: &b, Usage: &u})
			var be *BudgetError
			switch {
			case tc.wantLimit == "" && err != nil:
				t.Fatalf("Run = %v; want it to finish within its other limits", err)
			case tc.wantLimit != "" && (!errors.As(err, &be) || be.Limit != tc.wantLimit):
				t.Fatalf("Run = %v; want the %s limit", err, tc.wantLimit)
			}
			if tc.wantLimit == "" && u.CPU != 0 {
				t.Errorf("Usage.CPU = %v on PostgreSQL; want 0 (not metered)", u.CPU)
			}
		})
	}
}
