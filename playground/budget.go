package playground

import (
	"fmt"
	"runtime"
	"time"
)

// Budget caps the work of one run (every handler of a Request together). It
// is checked while the run goes, at every step, so work stops at the limit
// rather than after it. A zero field means no limit on that measure; a nil
// Request.Budget means no budget at all (the CLI's choice, not the server's).
type Budget struct {
	// Deliveries counts every message the broker hands to a worker,
	// including each copy a replay sends again.
	Deliveries int
	// Steps counts trace steps (statements, acks, notes…).
	Steps int
	// StatementCPU is the CPU time one statement of a learner's handler
	// may use (the sandbox's deadline); it only ever lowers the sandbox's own.
	StatementCPU time.Duration
	// CPU is the CPU time of the whole run, on the run's own thread.
	CPU time.Duration
	// Wall is the wall-clock time of the whole run.
	Wall time.Duration
	// RowsChanged counts rows inserted, updated or deleted.
	RowsChanged int64
	// TraceBytes caps the estimated size of the trace (steps and ledger
	// snapshots), so that a run cannot fill the server's memory.
	TraceBytes int64
}

// DefaultBudget is what the server gives one run. Every built-in lesson
// state fits far inside it (lessons lint checks: a few milliseconds each); a
// script of replays that would make 80,000 steps stops at its 1,000th
// delivery. A -race binary allows ten times the CPU and wall time
// (sandboxSlowdown), as it does a statement: the same run, the same answer.
func DefaultBudget() Budget {
	return Budget{
		Deliveries:   1000,
		Steps:        10000,
		StatementCPU: sandboxStatementTimeout,
		CPU:          250 * time.Millisecond * sandboxSlowdown,
		Wall:         time.Second * sandboxSlowdown,
		RowsChanged:  5000,
		TraceBytes:   8 << 20,
	}
}

// Budget limits, as BudgetError.Limit names them.
const (
	LimitDeliveries = "deliveries"
	LimitSteps      = "steps"
	LimitCPU        = "cpu"
	LimitWall       = "wall"
	LimitRows       = "rows"
	LimitTraceBytes = "trace-bytes"
	// LimitStatementTime: on PostgreSQL, the learner's SQL ran past the
	// run's time (a statement timeout, or the run's deadline cancelled a
	// statement). There the time is the learner's statements', not the
	// machine's load, so it is the learner's limit (a 422), not "busy".
	LimitStatementTime = "statement-time"
)

// BudgetError is a run stopped at a limit of its Budget. Limit names the
// limit (LimitDeliveries…); Error says it in the learner's terms.
type BudgetError struct {
	Limit string
	Max   int64 // the limit's value: a count, bytes, or nanoseconds
}

func (e *BudgetError) Error() string {
	switch e.Limit {
	case LimitDeliveries:
		return fmt.Sprintf("the run stopped after %d deliveries, the most one run may make (each replay delivers every copy published so far); shorten the script or replay less often", e.Max)
	case LimitSteps:
		return fmt.Sprintf("the run stopped after %d steps, the most one run may take; shorten the script", e.Max)
	case LimitCPU:
		return fmt.Sprintf("the run stopped after %v of CPU time, the most one run may use; shorten the script or make the handler's statements touch fewer rows", time.Duration(e.Max))
	case LimitWall:
		return fmt.Sprintf("the run stopped after %v, the longest one run may take; shorten the script", time.Duration(e.Max))
	case LimitRows:
		return fmt.Sprintf("the run stopped after changing %d rows, the most one run may change; shorten the script or make the handler write fewer rows", e.Max)
	case LimitTraceBytes:
		return fmt.Sprintf("the run stopped when its trace reached %d KiB, the largest one run may record; shorten the script", e.Max>>10)
	case LimitStatementTime:
		return fmt.Sprintf("the run stopped: the handler's SQL on PostgreSQL ran out of time (a statement may take %v); look for a statement that reads many rows, such as a join without a condition, or that waits long for a lock", time.Duration(e.Max))
	}
	return "the run stopped at its budget (" + e.Limit + ")"
}

// meter counts one run's use of its budget. A nil *meter counts nothing.
type meter struct {
	b          Budget
	deliveries int
	steps      int
	rows       int64
	bytes      int64
	began      time.Time
	cpuStart   int64 // the run's thread's CPU time (threadCPU) at the start, when cpuOK
	cpuOK      bool
	err        *BudgetError // the first limit crossed
}

// newMeter starts metering a run. When the budget caps CPU time, the run's
// goroutine is locked to its thread so that the thread's clock is the run's
// (the run reads it on that thread, at its checks); stop unlocks it.
//
// A run on PostgreSQL ledgers (onPostgres) is not metered by CPU and not
// pinned: its work is the database's, which no thread clock here sees,
// and its goroutine spends the run waiting for the database's answers,
// each of which would have to wake that one thread (a handoff per
// statement). Its cost is bounded by its other limits, PostgreSQL's own
// statement timeout, and the ledger time its client pays for.
func newMeter(b *Budget, onPostgres bool) *meter {
	if b == nil {
		return nil
	}
	m := &meter{b: *b, began: time.Now()}
	if onPostgres {
		m.b.CPU = 0
	}
	if m.b.CPU > 0 {
		runtime.LockOSThread()
		m.cpuStart, m.cpuOK = threadCPU()
	}
	return m
}

// Usage is what a run used of its budget.
type Usage struct {
	Deliveries int
	Steps      int
	CPU        time.Duration // 0 when the budget does not cap CPU, or the run is on PostgreSQL (the clock is not read)
	Wall       time.Duration
}

// stop ends the metering and reports the use into u, if not nil.
func (m *meter) stop(u *Usage) {
	if m == nil {
		return
	}
	if u != nil {
		*u = Usage{Deliveries: m.deliveries, Steps: m.steps, Wall: time.Since(m.began)}
		if now, ok := threadCPU(); ok && m.cpuOK {
			u.CPU = time.Duration(now - m.cpuStart)
		}
	}
	if m.b.CPU > 0 {
		runtime.UnlockOSThread()
	}
}

func (m *meter) cross(limit string, max int64) {
	if m.err == nil {
		m.err = &BudgetError{Limit: limit, Max: max}
	}
}

// charge counts a recorded step: the step itself, a delivery, rows changed
// and the step's share of the trace.
func (m *meter) charge(st *Step) {
	if m == nil {
		return
	}
	m.steps++
	if m.b.Steps > 0 && m.steps > m.b.Steps {
		m.cross(LimitSteps, int64(m.b.Steps))
	}
	if st.Kind == StepDeliver {
		m.deliveries++
		if m.b.Deliveries > 0 && m.deliveries > m.b.Deliveries {
			m.cross(LimitDeliveries, int64(m.b.Deliveries))
		}
	}
	if st.RowsAffected != nil && *st.RowsAffected > 0 {
		m.rows += *st.RowsAffected
		if m.b.RowsChanged > 0 && m.rows > m.b.RowsChanged {
			m.cross(LimitRows, m.b.RowsChanged)
		}
	}
	n := 96 + len(st.SQL) + len(st.Note) + len(st.Error) + 32*len(st.Args)
	for _, c := range st.Changes {
		n += 64 + 32*(len(c.Before)+len(c.After))
	}
	for _, c := range st.Reverted {
		n += 64 + 32*(len(c.Before)+len(c.After))
	}
	m.addBytes(int64(n))
}

// chargeSnapshot counts a new ledger snapshot kept in a frame.
func (m *meter) chargeSnapshot(tables []TableRows) {
	if m == nil {
		return
	}
	n := 0
	for _, t := range tables {
		n += 64
		for _, r := range t.Rows {
			n += 48 + len(r.Key) + 24*len(r.Values)
		}
	}
	m.addBytes(int64(n))
}

func (m *meter) addBytes(n int64) {
	m.bytes += n
	if m.b.TraceBytes > 0 && m.bytes > m.b.TraceBytes {
		m.cross(LimitTraceBytes, m.b.TraceBytes)
	}
}

// check reports the first limit crossed, looking at the clocks too. The
// CPU clock is a system call; the wall clock is not, and a thread cannot
// have used more CPU time than the wall time since its CPU clock was first
// read (after began), so the CPU clock is read only once the run has taken
// longer than its CPU limit in wall time, and then at every check: a run
// that finishes within its CPU limit of wall time (almost every run) never
// reads it, and a runaway one is stopped at the first check past the limit.
func (m *meter) check() error {
	if m == nil {
		return nil
	}
	if m.err == nil {
		wall := time.Since(m.began)
		if m.b.Wall > 0 && wall > m.b.Wall {
			m.cross(LimitWall, int64(m.b.Wall))
		}
		if m.cpuOK && wall > m.b.CPU {
			if now, ok := threadCPU(); ok && time.Duration(now-m.cpuStart) > m.b.CPU {
				m.cross(LimitCPU, int64(m.b.CPU))
			}
		}
	}
	if m.err != nil {
		return m.err
	}
	return nil
}

// statementTimeout is the sandbox deadline of one learner statement.
func (m *meter) statementTimeout() time.Duration {
	if m != nil && m.b.StatementCPU > 0 {
		return min(m.b.StatementCPU, sandboxStatementTimeout)
	}
	return sandboxStatementTimeout
}

// over reports why the run must stop now: its context ended (the client
// went away, the deadline passed) or it crossed a limit of its budget.
func (s *sim) over() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	return s.meter.check()
}

// ThreadCPU is the CPU time the calling OS thread has used (the caller
// holds runtime.LockOSThread while it compares two readings); false where
// the clock is not read (off Linux). The web layer charges a check by it.
func ThreadCPU() (int64, bool) { return threadCPU() }
