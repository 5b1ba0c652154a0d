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
// maxWaiting others, or refuses as busy; release gives it back.
func (g *LedgerGate) Acquire(ctx context.Context) (release func(), err error) {
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

// AcquireAll takes every ticket, for a check on PostgreSQL, which runs
// on up to the whole pool at once (playground/explore_pg.go): without its
// tickets, runs that passed the gate would wait in the pool behind it until
// their deadline. It waits at most queueWait in all, counted as one
// waiter, and gives back what it took when refused.
func (g *LedgerGate) AcquireAll(ctx context.Context) (release func(), err error) {
	taken := 0
	giveBack := func() {
		for range taken {
			<-g.Tickets
		}
	}
	if g.Waiting.Add(1) > g.MaxWaiting {
		g.Waiting.Add(-1)
		return nil, g.busy()
	}
	defer g.Waiting.Add(-1)
	t := time.NewTimer(g.QueueWait)
	defer t.Stop()
	for taken < cap(g.Tickets) {
		select {
		case g.Tickets <- struct{}{}:
			taken++
		case <-t.C:
			giveBack()
			return nil, g.busy()
		case <-ctx.Done():
			giveBack()
			return nil, context.Cause(ctx)
		}
	}
	g.InUse.Add(float64(taken))
	return func() {
		g.InUse.Sub(float64(taken))
		giveBack()
	}, nil
}

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
	return g.Acquire(ctx)
}
