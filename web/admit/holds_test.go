package admit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"idemlab/web/site"

	"idemlab/playground"
)

// clientCtx is the context of a request from address (and seat, if any),
// naming its client as the web layer does.
func clientCtx(l *RateLimiter, address, seat string) context.Context {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = address + ":4000"
	if seat != "" {
		r = r.WithContext(WithSeat(r.Context(), seat))
	}
	return l.WithClient(r)
}

// status is the HTTP status of an admission error (0: none).
func status(err error) int {
	var se *site.Error
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// Eight checks at once from one client: one runs, seven are refused with
// 429 at once; meanwhile another client's check and a click of a third
// both run.
func TestAdmission_EightChecksFromOneClientDoNotStarveOthers(t *testing.T) {
	a := newTestAdmission()
	attacker := clientCtx(a.Limiter, "192.0.2.66", "")
	hold := make(chan struct{})
	var running sync.WaitGroup
	running.Add(1)
	results := make(chan error, 8)
	go func() {
		_, err := a.Check(attacker, time.Minute, func(ctx context.Context) error {
			running.Done()
			<-hold
			return nil
		})
		results <- err
	}()
	running.Wait()
	for range 7 {
		go func() {
			_, err := a.Check(attacker, time.Minute, func(ctx context.Context) error { <-hold; return nil })
			results <- err
		}()
	}
	for range 7 {
		if err := <-results; status(err) != http.StatusTooManyRequests {
			t.Fatalf("a second check of one client: %v; want a 429", err)
		}
	}
	if _, err := a.Check(clientCtx(a.Limiter, "198.51.100.1", ""), time.Minute, func(ctx context.Context) error { return nil }); err != nil {
		t.Errorf("another client's check: %v", err)
	}
	_, source, err := a.Run(clientCtx(a.Limiter, "198.51.100.2", ""), "click", true, answer("ok"))
	if err != nil || source != "miss" {
		t.Errorf("a third client's click: %v (%s)", err, source)
	}
	close(hold)
	if err := <-results; err != nil {
		t.Errorf("the one check that ran: %v", err)
	}
}

// answer is a computation that answers body at once.
func answer(body string) ComputeFunc {
	return func(ctx context.Context, _ *playground.Budget, form AnswerForm) (*Output, error) {
		return &Output{Status: http.StatusOK, ContentType: site.HTMLContentType, Body: form.Payload([]byte(body))}, nil
	}
}

// blocked is a computation that waits for release, after saying it
// started.
func blocked(started chan<- struct{}, release <-chan struct{}) ComputeFunc {
	return func(ctx context.Context, _ *playground.Budget, form AnswerForm) (*Output, error) {
		started <- struct{}{}
		<-release
		return &Output{Status: http.StatusOK, ContentType: site.HTMLContentType, Body: form.Payload([]byte("slow"))}, nil
	}
}

// One client holds at most a quarter of the slots and one address half:
// past its share a run waits for the client's own, then gets 429, while
// another address still finds a slot.
func TestAdmission_OneClientHoldsAtMostItsShareOfSlots(t *testing.T) {
	a := newTestAdmission()
	a.Slots = make(chan struct{}, 8)
	a.QueueWait = 50 * time.Millisecond
	perClient, perAddress := runShare(8)
	if perClient != 2 || perAddress != 4 {
		t.Fatalf("share of 8 slots: %d per client, %d per address; want 2 and 4", perClient, perAddress)
	}
	started, release := make(chan struct{}, 16), make(chan struct{})
	defer close(release)
	seat := func(s string) context.Context { return clientCtx(a.Limiter, "203.0.113.5", s) }
	// Seat a holds its 2; seat b 2 more: the address's 4.
	for i, ctx := range []context.Context{seat("a"), seat("a"), seat("b"), seat("b")} {
		go a.Run(ctx, "slow"+string(rune('0'+i)), true, blocked(started, release))
		<-started
	}
	if _, _, err := a.Run(seat("a"), "a-third", true, answer("x")); status(err) != http.StatusTooManyRequests || !strings.Contains(err.Error(), "You already have") {
		t.Errorf("seat a's third run at once: %v; want a 429 that blames its own runs", err)
	}
	_, _, err := a.Run(seat("c"), "c-first", true, answer("x"))
	if status(err) != http.StatusTooManyRequests || !strings.Contains(err.Error(), "Others at your address") {
		t.Errorf("seat c's first run, its address at half the slots: %v; want a 429 that blames the address's others", err)
	}
	if _, _, err := a.Run(clientCtx(a.Limiter, "198.51.100.9", ""), "other", true, answer("x")); err != nil {
		t.Errorf("another address's run: %v; want it answered", err)
	}
	if _, _, err := a.Run(context.Background(), "nobody", true, answer("x")); err != nil {
		t.Errorf("a run that names no client: %v; want it answered", err)
	}
}

// A run past its share that sees its client's own run end in time runs.
func TestAdmission_RunPastItsShareWaitsForItsOwn(t *testing.T) {
	a := newTestAdmission()
	a.Slots = make(chan struct{}, 4) // 1 per client
	a.QueueWait = 5 * time.Second
	ctx := clientCtx(a.Limiter, "198.51.100.3", "")
	started, release := make(chan struct{}, 1), make(chan struct{})
	go a.Run(ctx, "first", true, blocked(started, release))
	<-started
	time.AfterFunc(20*time.Millisecond, func() { close(release) })
	if _, _, err := a.Run(ctx, "second", true, answer("x")); err != nil {
		t.Errorf("the second run, once the first ended: %v", err)
	}
}

// A check is charged by the CPU it used: one token per CheckCostUnit.
func TestAdmission_CheckIsChargedByItsCPU(t *testing.T) {
	a := newTestAdmission()
	l, _ := frozenLimiter(DefaultShare())
	a.Limiter = l
	ctx := clientCtx(l, "198.51.100.4", "")
	l.Take("198.51.100.4", 1) // the check's own token, as the web layer takes it
	took, err := a.Check(ctx, time.Minute, func(ctx context.Context) error {
		// 350 ms of CPU, on a loaded machine seconds of wall time.
		for c0, _ := playground.ThreadCPU(); ; {
			if c, ok := playground.ThreadCPU(); !ok || c-c0 >= int64(350*time.Millisecond) {
				return nil
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	tokens := l.buckets["198.51.100.4"].tokens
	// 19 left after its token; 350 ms of CPU costs 3 more, however long
	// it took on a loaded machine.
	if tokens != 16 {
		t.Errorf("after a check of %v: %v tokens; want 19 less one per %v of its CPU", took, tokens, CheckCostUnit)
	}
}

// A check with every slot taken is ErrCheckBusy; one past its timeout
// wraps context.DeadlineExceeded.
func TestAdmission_CheckBusyAndTimedOut(t *testing.T) {
	a := newTestAdmission()
	a.Slots = make(chan struct{}, 1)
	a.Slots <- struct{}{}
	if _, err := a.Check(context.Background(), time.Minute, func(context.Context) error { return nil }); !errors.Is(err, ErrCheckBusy) {
		t.Errorf("with no slot free: %v; want ErrCheckBusy", err)
	}
	<-a.Slots
	_, err := a.Check(context.Background(), 10*time.Millisecond, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("past its timeout: %v; want DeadlineExceeded", err)
	}
}

// A run stopped by its own deadline (not its budget, not its client) is the
// busy 503, never an error that would be a 500.
func TestAdmission_RunPastItsDeadlineIsBusy(t *testing.T) {
	a := newTestAdmission()
	a.Budget.Wall = 10*time.Millisecond - time.Second // the deadline is the wall budget and a second
	_, _, err := a.Run(context.Background(), "slow", true, func(ctx context.Context, _ *playground.Budget, _ AnswerForm) (*Output, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if status(err) != http.StatusServiceUnavailable {
		t.Errorf("a run past its deadline: %v; want the busy 503", err)
	}
}

// PostgreSQL's time run out is the learner's limit: BudgetMessage says
// so, for a 422 in place, and the answer is not cached.
func TestBudgetMessage_StatementTimeIsTheLearners(t *testing.T) {
	limit, msg, ok := BudgetMessage(&playground.BudgetError{Limit: playground.LimitStatementTime, Max: int64(2 * time.Second)}, renderCap)
	if !ok || limit != playground.LimitStatementTime || msg == "" {
		t.Errorf("BudgetMessage: %q, %q, %v; want the statement-time limit", limit, msg, ok)
	}
}

// testGate is a gate of size tickets, as NewLedgerGate makes one.
func testGate(size int) *LedgerGate {
	return &LedgerGate{holds: newHolds(), Tickets: make(chan struct{}, size), MaxWaiting: int64(4 * size), QueueWait: 30 * time.Millisecond,
		metrics: site.NewMetrics(), InUse: prometheus.NewGauge(prometheus.GaugeOpts{Name: "in_use"})}
}

// A check on PostgreSQL takes at most half the pool, and only ledgers
// free at once past its first; a client's second check is a 429.
func TestLedgerGate_CheckTakesItsShareOfThePool(t *testing.T) {
	l := NewShareLimiter(DefaultShare(), false)
	for _, tc := range []struct {
		name        string
		size, taken int
		wantLedgers int
		wantRefusal bool
	}{
		{name: "FreePoolOfFour", size: 4, taken: 0, wantLedgers: 2},
		{name: "FreePoolOfEight", size: 8, taken: 0, wantLedgers: 4},
		{name: "ThreeOfFourTaken", size: 4, taken: 3, wantLedgers: 1},
		{name: "PoolOfOne", size: 1, taken: 0, wantLedgers: 1},
		{name: "AllTaken", size: 2, taken: 2, wantRefusal: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testGate(tc.size)
			for range tc.taken {
				g.Tickets <- struct{}{}
			}
			ctx := clientCtx(l, "198.51.100.5", tc.name)
			release, n, err := g.AcquireShare(ctx)
			if tc.wantRefusal {
				if status(err) != http.StatusServiceUnavailable {
					t.Fatalf("with the pool taken: %v; want the busy 503", err)
				}
				return
			}
			if err != nil || n != tc.wantLedgers {
				t.Fatalf("ledgers %d, err %v; want %d", n, err, tc.wantLedgers)
			}
			if _, _, err := g.AcquireShare(ctx); status(err) != http.StatusTooManyRequests {
				t.Errorf("the client's second check: %v; want 429", err)
			}
			release()
			if got := len(g.Tickets); got != tc.taken {
				t.Errorf("%d tickets out after the check; want %d", got, tc.taken)
			}
		})
	}
}

// A client's runs hold one ledger: its second run waits for its first and
// is refused with 429, while another client takes a ledger.
func TestLedgerGate_ARunsClientHoldsOneLedger(t *testing.T) {
	l := NewShareLimiter(DefaultShare(), false)
	g := testGate(4)
	ctx := clientCtx(l, "198.51.100.6", "")
	release, err := g.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Acquire(ctx); status(err) != http.StatusTooManyRequests {
		t.Errorf("the client's second ledger: %v; want 429", err)
	}
	other, err := g.Acquire(clientCtx(l, "198.51.100.7", ""))
	if err != nil {
		t.Errorf("another client: %v", err)
	} else {
		other()
	}
	release()
	again, err := g.Acquire(ctx)
	if err != nil {
		t.Errorf("after its first was given back: %v", err)
	} else {
		again()
	}
}
