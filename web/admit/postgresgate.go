package admit

import (
	"context"
	"idemlab/web/site"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"idemlab/playground"
)

// Admission to a PostgreSQL ledger. A run on PostgreSQL (ledger=postgres-…)
// holds one of the server's ledgers (a schema of a bounded pool, its
// sessions open) for as long as it runs, one handler after the other. Runs
// queue for a ledger as every run queues for a slot (admission.go): the
// computation takes a ledger ticket first, before its slot, so that a run
// waiting for a ledger holds no CPU slot a SQLite run could use; at most
// ledgerWaitersPerLedger runs per ledger wait, each at most
// ledgerQueueWait. Past either bound the request is answered at once with
// the same busy 503 and Retry-After as a SQLite run that found no slot, and
// counted as refusals{reason="postgres-busy"}.
//
// The gate has as many tickets as the pool has ledgers, and a run holds at
// most one ledger at a time, so a run that has its ticket never waits in
// the pool itself (playground.PostgresLedgers still bounds any other user).
const (
	// ledgerQueueWait bounds a wait for a ledger: a click on PostgreSQL
	// takes 4–22 ms, so a wait this long means the pool is overloaded.
	ledgerQueueWait = 500 * time.Millisecond
	// ledgerWaitersPerLedger: more waiters than this per ledger would
	// wait longer than a click should, so the next is refused at once.
	ledgerWaitersPerLedger = 4
)

// LedgerGate hands out the server's PostgreSQL ledgers to runs.
type LedgerGate struct {
	holds      *holds // ledgers each client holds (holds.go)
	Tickets    chan struct{}
	Waiting    atomic.Int64
	MaxWaiting int64
	QueueWait  time.Duration
	metrics    *site.Metrics
	InUse      prometheus.Gauge
}

// NewLedgerGate is the gate of pg's ledgers, or nil without PostgreSQL.
func NewLedgerGate(pg *playground.PostgresLedgers, m *site.Metrics) *LedgerGate {
	if pg == nil {
		return nil
	}
	g := &LedgerGate{
		holds:      newHolds(),
		Tickets:    make(chan struct{}, pg.Size()),
		MaxWaiting: int64(ledgerWaitersPerLedger * pg.Size()),
		QueueWait:  ledgerQueueWait,
		metrics:    m,
		InUse: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "idemlab_postgres_ledgers_in_use", Help: "PostgreSQL ledgers held by a run now (of the pool's size, idemlab_postgres_ledgers).",
		}),
	}
	size := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "idemlab_postgres_ledgers", Help: "PostgreSQL ledgers in the server's pool: runs on PostgreSQL at once.",
	})
	size.Set(float64(pg.Size()))
	m.Registry.MustRegister(g.InUse, size)
	return g
}

// Acquire takes a ledger ticket, waiting at most queueWait behind at most
// maxWaiting others, or refuses as busy; release gives it back. The client
// ctx names (WithClient) holds one ledger for its runs at a time: a second
// run waits for its first, as long, and is then refused with 429.
func (g *LedgerGate) Acquire(ctx context.Context) (release func(), err error) {
	own, err := g.takeOwn(ctx)
	if err != nil {
		return nil, err
	}
	ticket, err := g.acquire(ctx)
	if err != nil {
		own()
		return nil, err
	}
	return func() {
		ticket()
		own()
	}, nil
}

// takeOwn counts a ledger against the client's one, waiting at most
// QueueWait for its other run to end.
func (g *LedgerGate) takeOwn(ctx context.Context) (release func(), err error) {
	client := ClientFrom(ctx)
	perAddress := max(1, cap(g.Tickets)/2)
	if release, ok := g.holds.take(client, holdLedger, ledgerHoldsPerClient, perAddress); ok {
		return release, nil
	}
	t := time.NewTimer(g.QueueWait)
	defer t.Stop()
	release, ok, err := g.holds.wait(ctx, t.C, client, holdLedger, ledgerHoldsPerClient, perAddress, true)
	if err != nil || ok {
		return release, err
	}
	g.metrics.Refused("share")
	return nil, g.holds.overShare(client, holdLedger, ledgerHoldsPerClient, "a run on PostgreSQL")
}

func (g *LedgerGate) acquire(ctx context.Context) (release func(), err error) {
	select {
	case g.Tickets <- struct{}{}:
	default:
		if g.Waiting.Add(1) > g.MaxWaiting {
			g.Waiting.Add(-1)
			return nil, g.busy()
		}
		t := time.NewTimer(g.QueueWait)
		defer t.Stop()
		select {
		case g.Tickets <- struct{}{}:
			g.Waiting.Add(-1)
		case <-t.C:
			g.Waiting.Add(-1)
			return nil, g.busy()
		case <-ctx.Done():
			g.Waiting.Add(-1)
			return nil, context.Cause(ctx)
		}
	}
	g.InUse.Inc()
	return func() {
		g.InUse.Dec()
		<-g.Tickets
	}, nil
}

// AcquireShare takes the ledgers of a check on PostgreSQL: one, waiting as
// a run waits (Acquire), then as many more as are free at once, up to its
// share (half the pool; CheckShare). The check runs on that many ledgers
// (playground.Ledger.Parallel), so it never waits in the pool behind runs
// that passed the gate, and never takes the ledgers others' clicks need.
// On release, the client ctx names pays one token per CheckCostUnit of
// ledger time (ledgers × wall time): what a check on PostgreSQL holds is
// ledgers, not CPU.
func (g *LedgerGate) AcquireShare(ctx context.Context) (release func(), ledgers int, err error) {
	client := ClientFrom(ctx)
	own, ok := g.holds.take(client, holdCheck, checkHoldsPerClient, 0)
	if !ok {
		g.metrics.Refused("share")
		return nil, 0, g.holds.overShare(client, holdCheck, checkHoldsPerClient, "a check")
	}
	first, err := g.acquire(ctx)
	if err != nil {
		own()
		return nil, 0, err
	}
	start := time.Now()
	taken := 1
	for taken < g.CheckShare() && g.tryTicket() {
		taken++
	}
	return func() {
		held := time.Since(start) * time.Duration(taken)
		g.InUse.Sub(float64(taken - 1))
		for range taken - 1 {
			<-g.Tickets
		}
		first()
		own()
		chargeFrom(ctx, float64(held/CheckCostUnit))
	}, taken, nil
}

// tryTicket takes a ticket if one is free now.
func (g *LedgerGate) tryTicket() bool {
	select {
	case g.Tickets <- struct{}{}:
		g.InUse.Inc()
		return true
	default:
		return false
	}
}

// CheckShare is the most ledgers one check takes: half the pool.
func (g *LedgerGate) CheckShare() int { return max(1, cap(g.Tickets)/2) }

// busy is the refusal when every ledger is taken: the learner sees what a
// busy SQLite run shows.
func (g *LedgerGate) busy() error {
	g.metrics.Refused("postgres-busy")
	return BusyError()
}

// ledgerGateKey carries, in a run's context, the gate its computation
// passes before taking a slot.
type ledgerGateKey struct{}

// WithLedgerGate is ctx carrying g, which the run's computation passes
// before it takes a slot (takeLedger).
func WithLedgerGate(ctx context.Context, g *LedgerGate) context.Context {
	return context.WithValue(ctx, ledgerGateKey{}, g)
}

// takeLedger takes a ledger ticket when ctx carries the gate (onLedger);
// release is a no-op otherwise.
func takeLedger(ctx context.Context) (release func(), err error) {
	g, _ := ctx.Value(ledgerGateKey{}).(*LedgerGate)
	if g == nil {
		return func() {}, nil
	}
	ledger, err := g.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	return func() {
		ledger()
		// What a run on PostgreSQL holds is a ledger: its client pays for
		// the time, as a check does (a click of 4-22 ms costs nothing more;
		// a statement that ran into its timeout, a few tokens).
		chargeFrom(ctx, float64(time.Since(start)/CheckCostUnit))
	}, nil
}
