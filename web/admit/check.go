package admit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Checks. A check explores every schedule of an exercise and may use
// seconds of CPU, so it is admitted as a run is and charged as a run is:
//
//   - it takes a slot of the admission's (the same slots as runs) at once
//     or not at all: ErrCheckBusy, which the checker answers by keeping the
//     learner's handler and asking for a retry;
//   - its client holds one check at a time (a second is a 429), and the
//     clients of one address together at most half the slots;
//   - afterwards its client pays one token per CheckCostUnit of the CPU it
//     used (measured on its thread; its wall time where no thread clock is
//     known), and a check on PostgreSQL one per CheckCostUnit of ledger
//     time it held (LedgerGate.AcquireShare).
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

// ErrCheckBusy: every slot is taken.
var ErrCheckBusy = errors.New("every slot is busy")

// Check runs one check (run) for the client ctx names, in a slot and within
// timeout, and charges the client. It returns the check's wall time; run's
// error, wrapping context.DeadlineExceeded when the timeout stopped it;
// ErrCheckBusy when no slot was free; or a 429 (*site.Error) when the
// client already has a check running.
func (a *Admission) Check(ctx context.Context, timeout time.Duration, run func(context.Context) error) (took time.Duration, err error) {
	share, err := a.takeShare(ctx, holdCheck, "a check")
	if err != nil {
		return 0, err
	}
	defer share()
	select {
	case a.Slots <- struct{}{}:
	default:
		a.metrics.Refused("busy")
		return 0, ErrCheckBusy
	}
	a.metrics.RunsInFlight.Inc()
	defer func() {
		a.metrics.RunsInFlight.Dec()
		<-a.Slots
	}()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The check runs on this goroutine; locked to its thread, the thread's
	// clock is the check's CPU (a PostgreSQL check's own goroutines wait
	// for the database, which its ledger time pays for).
	runtime.LockOSThread()
	cpu0, cpuOK := threadCPU()
	start := time.Now()
	err = run(ctx)
	took = time.Since(start)
	cpu1, cpuOK1 := threadCPU()
	runtime.UnlockOSThread()
	cpu := took
	if cpuOK && cpuOK1 {
		cpu = time.Duration(cpu1 - cpu0)
	}
	chargeFrom(ctx, float64(cpu/CheckCostUnit))
	a.metrics.ObserveCheck(took)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return took, fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
	}
	return took, err
}
