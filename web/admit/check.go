package admit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"idemlab/playground"
)

// Checks. A check explores every schedule of an exercise and may use
// seconds of CPU, so it is admitted as a run is and charged as a run is:
//
//   - it takes a slot (the same slots as runs), waiting for one at most
//     QueueWait as a run does; past that ErrCheckBusy, which the checker
//     answers by keeping the learner's handler and asking for a retry;
//   - its client holds one check at a time: a second while the first runs
//     is refused at once with 429 (five checks fired at once are one check
//     and four refusals, never five checks one after the other);
//   - the clients of one address (the seats of a room behind one NAT)
//     together hold at most half the slots: past that a check waits, as
//     long, for one of theirs to end, so that a class pressing Check at
//     once is served in turn while another address still finds slots;
//   - afterwards its client pays one token per CheckCostUnit of the CPU it
//     used (measured on its thread; its wall time where no thread clock is
//     known), and a check on PostgreSQL one per CheckCostUnit of ledger
//     time it held (LedgerGate.AcquireShare) instead: its work is the
//     database's, on other goroutines, which no thread clock here sees.
//
// A check's client pays by a unit ten times a run's: a check that takes a
// second costs a learner 10 tokens (5 s of their share at 2 a second),
// and one that takes its whole 5 s costs 50, so that eight checks at once
// from one client are one at a time, each paid for, while others' checks
// and clicks still find slots.

// CheckCostUnit is the CPU (or ledger) time a check's client pays one token
// for. A variable only so that race-detector builds can scale it, as they
// scale AdmissionCostUnit.
var CheckCostUnit = 100 * time.Millisecond

// ErrCheckBusy: every slot is busy.
var ErrCheckBusy = errors.New("every slot is busy")

// CheckOptions say where a check runs.
type CheckOptions struct {
	// Slots are the slots it takes one of; nil: the admission's own (a
	// server's checker uses those, so that checks and runs share them).
	Slots chan struct{}
	// Timeout ends the check.
	Timeout time.Duration
	// Ledger: the check runs on PostgreSQL ledgers, which its client pays
	// for (LedgerGate.AcquireShare); its CPU is not metered here, and its
	// goroutine is not pinned to a thread for a clock that would miss it.
	Ledger bool
}

// Check runs one check (run) for the client ctx names, in one of the
// admission's slots and within timeout, and charges the client (CheckWith).
func (a *Admission) Check(ctx context.Context, timeout time.Duration, run func(context.Context) error) (took time.Duration, err error) {
	return a.CheckWith(ctx, CheckOptions{Timeout: timeout}, run)
}

// CheckWith runs one check (run) for the client ctx names, in a slot and
// within the timeout, and charges the client. It returns the check's wall
// time; run's error, wrapping context.DeadlineExceeded when the timeout
// stopped it; ErrCheckBusy when no slot was free in time; or a 429
// (*site.Error) when the client already has a check running, or its
// address its share of the slots.
func (a *Admission) CheckWith(ctx context.Context, o CheckOptions, run func(context.Context) error) (took time.Duration, err error) {
	slots := o.Slots
	if slots == nil {
		slots = a.Slots
	}
	share, err := a.takeShare(ctx, holdCheck, "a check")
	if err != nil {
		return 0, err
	}
	defer share()
	if err := a.checkSlot(ctx, slots); err != nil {
		return 0, err
	}
	a.metrics.RunsInFlight.Inc()
	defer func() {
		a.metrics.RunsInFlight.Dec()
		<-slots
	}()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if o.Ledger {
		start := time.Now()
		err = run(ctx)
		took = time.Since(start)
	} else {
		// A check on SQLite runs on this goroutine; locked to its thread,
		// the thread's clock is the check's CPU.
		runtime.LockOSThread()
		cpu0, cpuOK := playground.ThreadCPU()
		start := time.Now()
		err = run(ctx)
		took = time.Since(start)
		cpu1, cpuOK1 := playground.ThreadCPU()
		runtime.UnlockOSThread()
		cpu := took
		if cpuOK && cpuOK1 {
			cpu = time.Duration(cpu1 - cpu0)
		}
		chargeFrom(ctx, float64(cpu/CheckCostUnit))
	}
	a.metrics.ObserveCheck(took)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return took, fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
	}
	return took, err
}

// checkSlot takes one of slots, waiting at most QueueWait behind at most
// admissionMaxWaiting others, as a run does; ErrCheckBusy past that.
func (a *Admission) checkSlot(ctx context.Context, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	if a.waiting.Add(1) > admissionMaxWaiting {
		a.waiting.Add(-1)
		a.metrics.Refused("busy")
		return ErrCheckBusy
	}
	defer a.waiting.Add(-1)
	t := time.NewTimer(a.QueueWait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return nil
	case <-t.C:
		a.metrics.Refused("busy")
		return ErrCheckBusy
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
