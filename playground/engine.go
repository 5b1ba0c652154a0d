package playground

import (
	"context"
	"database/sql/driver"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// Run executes the script once per handler, each against a fresh ledger,
// and returns the trace. The result is a pure function of the request:
// the same request gives a byte-identical JSON encoding. Bad input is an
// *InputError; anything else is an internal error (or ctx's error).
func Run(ctx context.Context, req Request) (*Trace, error) {
	sc, handlers, script, err := req.resolve()
	if err != nil {
		return nil, err
	}
	tmpl, err := sc.template()
	if err != nil {
		return nil, err
	}
	t := &Trace{
		Scenario: sc.Name, Title: sc.Title, Script: script.String(), Seed: req.Seed,
		TickUnit: sc.TickUnit, Settings: sc.Settings, Workers: sc.Workers, Messages: sc.Messages,
	}
	for i, h := range handlers {
		ht, err := runHandler(ctx, sc, tmpl, h, script, req.Seed, i)
		if err != nil {
			return nil, err
		}
		t.Handlers = append(t.Handlers, ht)
	}
	t.Events = make([]EventInfo, len(script.Events))
	for i, ev := range script.Events {
		t.Events[i] = EventInfo{Index: i + 1, Text: ev.String(), Kind: ev.Kind, Worker: ev.Worker, Message: ev.Message}
		if len(t.Handlers) > 0 {
			t.Events[i].Tick = t.Handlers[0].Frames[i].Tick
		}
	}
	return t, nil
}

// testHookBeforeClose lets tests compare the change-hook mirror with
// SQLite's own rows before a ledger is closed.
var testHookBeforeClose func(*ledger)

type outcome int

const (
	progressed outcome = iota
	blocked
	finished // the job ended (ack, crash, abort…)
)

// sim is one handler's run: broker, workers, clock and ledger.
type sim struct {
	ctx     context.Context
	sc      *Scenario
	h       *Handler
	l       *ledger
	rng     *rand.Rand // nil with seed 0: plain worker order
	now     int64
	event   int
	workers []*worker
	byName  map[string]*worker
	msgs    map[string]*msgState
	log     []string // published message ids, in order: what replay reads
	steps   []Step

	delivered map[string]bool
	effects   map[string][]int // message → steps whose commit changed a business figure
	changed   map[string]bool  // rows changed in the current event
	blockSeq  int
}

type worker struct {
	name      string
	db        *dbConn
	filter    map[string]bool
	job       *job
	blockedAt int // >0 while the worker waits on a lock: the order it blocked in
}

type job struct {
	msg          *msgState
	attempt      int
	stmts        []*statement
	pc           int // next statement
	executed     int
	txStart      int // pc of the open transaction's BEGIN
	fault        string
	faultAfter   int
	leaseEnd     int64
	leaseExpired bool
	filterDone   bool
}

type msgState struct {
	m          *Message
	deliveries int
	acked      bool
	leaseEnd   int64
}

// newSim sets up one handler's run on ledger l: the scenario's workers, idle
// and with empty filters, and its messages, none delivered yet. Run and the
// exercise checker both start from it.
func newSim(ctx context.Context, sc *Scenario, h *Handler, l *ledger) *sim {
	s := &sim{
		ctx: ctx, sc: sc, h: h, l: l,
		byName: map[string]*worker{}, msgs: map[string]*msgState{},
		delivered: map[string]bool{}, effects: map[string][]int{}, changed: map[string]bool{},
	}
	for _, name := range sc.Workers {
		w := &worker{name: name, filter: map[string]bool{}}
		s.workers = append(s.workers, w)
		s.byName[name] = w
	}
	for i := range sc.Messages {
		s.msgs[sc.Messages[i].ID] = &msgState{m: &sc.Messages[i]}
	}
	l.onCommit = s.committed
	return s
}

func runHandler(ctx context.Context, sc *Scenario, tmpl *ledgerImage, h *Handler, script *Script, seed int64, index int) (*HandlerTrace, error) {
	l, err := openLedger(tmpl)
	if err != nil {
		return nil, err
	}
	defer l.close()
	s := newSim(ctx, sc, h, l)
	s.steps = make([]Step, 0, min(8*len(script.Events), 512))
	if seed != 0 {
		s.rng = rand.New(rand.NewPCG(uint64(seed), uint64(index)))
	}
	if !isBuiltinHandler(h) {
		// A learner's handler: its worker connections are sandboxed (sandbox.go).
		if err := sandboxWorkers(s); err != nil {
			return nil, err
		}
	}
	ht := &HandlerTrace{Name: h.Name, Description: h.Description, Idempotent: h.Idempotent, Why: h.Why}
	expectedFor := -1 // how many messages had been delivered when Expected was last computed
	for i, ev := range script.Events {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.event = i + 1
		first := len(s.steps)
		clear(s.changed)
		if err := s.apply(ev); err != nil {
			return nil, err
		}
		f := Frame{Event: i + 1, Tick: s.now, StepCount: len(s.steps) - first, Changed: []string{}}
		if prev := len(ht.Frames) - 1; prev >= 0 && len(s.changed) == 0 {
			// Nothing committed during the event: share the previous
			// figures and rows (they are never modified).
			f.Actual, f.Ledger = ht.Frames[prev].Actual, ht.Frames[prev].Ledger
		} else {
			f.Actual, f.Ledger = s.actual(), l.snapshot()
		}
		if prev := len(ht.Frames) - 1; prev >= 0 && len(s.delivered) == expectedFor {
			f.Expected = ht.Frames[prev].Expected
		} else {
			f.Expected, expectedFor = s.expected(), len(s.delivered)
		}
		if f.StepCount > 0 {
			f.FirstStep = first + 1
		}
		for k := range s.changed {
			f.Changed = append(f.Changed, k)
		}
		sort.Strings(f.Changed)
		ht.Frames = append(ht.Frames, f)
	}
	ht.Steps = s.steps
	if ht.Steps == nil {
		ht.Steps = []Step{}
	}
	last := ht.Frames[len(ht.Frames)-1]
	ht.Expected, ht.Actual, ht.Ledger = last.Expected, last.Actual, last.Ledger
	s.verdict(ht, script)
	if testHookBeforeClose != nil {
		testHookBeforeClose(l)
	}
	return ht, nil
}

// record appends a step, filling index, event and tick.
func (s *sim) record(st Step) *Step {
	st.Index = len(s.steps) + 1
	st.Event = s.event
	st.Tick = s.now
	s.steps = append(s.steps, st)
	return &s.steps[len(s.steps)-1]
}

func (s *sim) skip(w, msg, note string) {
	s.record(Step{Kind: StepSkip, Worker: w, Message: msg, Note: note})
}

func (s *sim) apply(ev Event) error {
	switch ev.Kind {
	case EventDeliver, EventRedeliver, EventPublish, EventStart:
		w := s.deliver(ev)
		if w != nil && ev.Kind != EventStart {
			return s.runToCompletion(w)
		}
	case EventStep:
		w := s.byName[ev.Worker]
		n := max(ev.N, 1)
		for i := int64(0); i < n; i++ {
			if w.job == nil {
				if i == 0 {
					s.skip(w.name, "", w.name+" has no message in hand; start one first (start MSG on "+w.name+")")
				}
				break
			}
			out, err := s.stepWorker(w)
			if err != nil {
				return err
			}
			if out == blocked {
				break // the learner decides what runs next
			}
		}
	case EventFinish:
		w := s.byName[ev.Worker]
		if w.job == nil {
			s.skip(w.name, "", w.name+" has no message in hand")
			return nil
		}
		return s.runToCompletion(w)
	case EventCrash:
		return s.crash(s.byName[ev.Worker], StepCrash, "crash: "+ev.Worker+" dies; its in-process memory is gone")
	case EventRestart:
		return s.crash(s.byName[ev.Worker], StepRestart, "restart: "+ev.Worker+" starts again with an empty in-process filter")
	case EventExpire:
		s.expire(s.msgs[ev.Message])
	case EventReplay:
		return s.replay()
	case EventPrune:
		return s.prune(ev)
	case EventAdvance:
		from := s.now
		s.now += ev.N
		s.record(Step{Kind: StepClock, Note: fmt.Sprintf("the clock moves from tick %d to %d", from, s.now)})
		s.leasesRanOut(from)
	}
	return nil
}

// pickWorker returns the named worker, or the first idle one.
func (s *sim) pickWorker(name, msg string) *worker {
	if name != "" {
		w := s.byName[name]
		if w.job != nil {
			s.skip(name, msg, fmt.Sprintf("%s is busy with %s; finish or crash it first", name, w.job.msg.m.ID))
			return nil
		}
		return w
	}
	for _, w := range s.workers {
		if w.job == nil {
			return w
		}
	}
	s.skip("", msg, "every worker is busy")
	return nil
}

// deliver hands a message to a worker; it returns nil when the broker
// could not (the reason is recorded as a skip step).
func (s *sim) deliver(ev Event) *worker {
	m := s.msgs[ev.Message]
	id := m.m.ID
	note := ""
	switch ev.Kind {
	case EventRedeliver:
		if m.deliveries == 0 {
			s.skip(ev.Worker, id, id+" was never delivered; use deliver "+id)
			return nil
		}
		if m.acked {
			s.skip(ev.Worker, id, id+" was acked, so the broker deleted it; publish "+id+" or replay sends it again")
			return nil
		}
	case EventDeliver, EventStart:
		if m.acked {
			s.skip(ev.Worker, id, id+" was already acked; publish "+id+" or replay sends it again")
			return nil
		}
		if s.holder(m) != nil {
			note = fmt.Sprintf("%s is still leased to %s: the broker hands out a second copy", id, s.holder(m).name)
		}
	case EventPublish:
		note = "the producer publishes " + id + " again: a new copy with the same id"
	}
	w := s.pickWorker(ev.Worker, id)
	if w == nil {
		return nil
	}
	if ev.Kind == EventPublish {
		m.acked, m.deliveries = false, 0
		s.log = append(s.log, id)
	} else if !contains(s.log, id) {
		s.log = append(s.log, id)
	}
	if ev.Kind == EventRedeliver && m.leaseEnd > s.now {
		from := s.now
		s.now = m.leaseEnd
		s.record(Step{Kind: StepClock, Message: id, Note: fmt.Sprintf("the clock jumps from tick %d to %d, the end of %s's lease", from, s.now, id)})
		s.leasesRanOut(from)
	}
	if m.deliveries >= s.sc.Settings.MaxDeliveries {
		s.record(Step{Kind: StepDeadLetter, Message: id, Note: fmt.Sprintf("%s was delivered %d times: the broker moves it to the dead-letter queue", id, m.deliveries)})
		return nil
	}
	s.start(w, m, ev.Fault, ev.FaultAfter, note)
	return w
}

func (s *sim) start(w *worker, m *msgState, fault string, faultAfter int, note string) {
	m.deliveries++
	m.leaseEnd = s.now + s.sc.Settings.LeaseTicks
	s.delivered[m.m.ID] = true
	stmts, ok := s.h.statementsFor(m.m.Kind)
	if !ok {
		note = strings.TrimPrefix(note+"; the handler has no statements for kind "+m.m.Kind, "; ")
	}
	w.job = &job{msg: m, attempt: m.deliveries, stmts: stmts, fault: fault, faultAfter: faultAfter, leaseEnd: m.leaseEnd}
	s.record(Step{Kind: StepDeliver, Worker: w.name, Message: m.m.ID, Attempt: m.deliveries, Note: note})
}

// holder returns a worker running the message, if any.
func (s *sim) holder(m *msgState) *worker {
	for _, w := range s.workers {
		if w.job != nil && w.job.msg == m {
			return w
		}
	}
	return nil
}

// leasesRanOut records the leases that ended while the clock moved past them.
func (s *sim) leasesRanOut(from int64) {
	for i := range s.sc.Messages {
		m := s.msgs[s.sc.Messages[i].ID]
		if m.deliveries == 0 || m.acked || m.leaseEnd <= from || m.leaseEnd > s.now {
			continue
		}
		holder := ""
		if w := s.holder(m); w != nil {
			holder = w.name
			w.job.leaseExpired = true
		}
		s.record(Step{Kind: StepLeaseExpired, Worker: holder, Message: m.m.ID, Note: fmt.Sprintf("%s's lease ended at tick %d: the broker may deliver it again", m.m.ID, m.leaseEnd)})
	}
	for _, w := range s.workers {
		if w.job != nil && w.job.leaseEnd <= s.now {
			w.job.leaseExpired = true
		}
	}
}

func (s *sim) expire(m *msgState) {
	id := m.m.ID
	if m.deliveries == 0 || m.acked || (m.leaseEnd <= s.now && s.holder(m) == nil) {
		s.skip("", id, id+" has no lease running")
		return
	}
	m.leaseEnd = s.now
	names := []string{}
	for _, w := range s.workers {
		if w.job != nil && w.job.msg == m {
			w.job.leaseExpired = true
			w.job.leaseEnd = min(w.job.leaseEnd, s.now)
			names = append(names, w.name)
		}
	}
	note := id + "'s lease runs out: the broker may deliver it again"
	if len(names) > 0 {
		note += "; " + strings.Join(names, ", ") + " is still running, and its ack will be refused"
	}
	st := Step{Kind: StepLeaseExpired, Message: id, Note: note}
	if len(names) > 0 {
		st.Worker = names[0]
	}
	s.record(st)
}

func (s *sim) replay() error {
	ids := append([]string(nil), s.log...)
	if len(ids) == 0 {
		s.skip("", "", "nothing has been published yet")
		return nil
	}
	for _, id := range ids {
		w := s.pickWorker("", id)
		if w == nil {
			return nil
		}
		m := s.msgs[id]
		m.acked = false
		s.start(w, m, "", 0, "replay from offset 0")
		if err := s.runToCompletion(w); err != nil {
			return err
		}
	}
	return nil
}

func (s *sim) prune(ev Event) error {
	older := s.sc.Settings.RetentionTicks
	if ev.OlderThan {
		older = ev.N
	}
	cutoff := s.now - older
	const q = "DELETE FROM processed_messages WHERE processed_at < :cutoff"
	janitor, err := s.l.janitorConn()
	if err != nil {
		return err
	}
	res := janitor.exec(s.ctx, q, []driver.NamedValue{{Name: "cutoff", Ordinal: 1, Value: cutoff}}, false)
	st := Step{Kind: StepPrune, Worker: "janitor", SQL: q, Args: []Arg{{"cutoff", cutoff}},
		Note: fmt.Sprintf("delete dedupe rows older than %d ticks", older)}
	if res.Err != nil {
		st.Error = res.Err.Error()
		st.Note = "prune could not run: a worker holds the write lock"
	} else {
		st.RowsAffected = ptr(res.Rows)
		st.Changes = s.changes(res.Changes, false)
		for i := range st.Changes {
			st.Changes[i].Committed = true
		}
	}
	s.record(st)
	return nil
}

// runToCompletion runs w to its ack (or crash). When w is blocked by a lock,
// the scheduler steps another worker that has a message in hand; when every
// such worker is blocked, breakDeadlock rolls one back.
func (s *sim) runToCompletion(w *worker) error {
	for n := 0; w.job != nil; n++ {
		if n > maxSchedulerRuns {
			s.record(Step{Kind: StepNote, Worker: w.name, Note: "the scheduler gave up: no worker could make progress"})
			return nil
		}
		out, err := s.stepWorker(w)
		if err != nil {
			return err
		}
		if out != blocked {
			continue
		}
		moved := false
		for _, o := range s.schedulerOrder(w) {
			s.record(Step{Kind: StepNote, Worker: o.name, Note: fmt.Sprintf("%s waits for a lock: the scheduler runs %s", w.name, o.name)})
			out, err := s.stepWorker(o)
			if err != nil {
				return err
			}
			if out != blocked {
				moved = true
				break
			}
		}
		if !moved {
			if !s.breakDeadlock() {
				s.record(Step{Kind: StepNote, Worker: w.name, Note: "the scheduler gave up: the lock holder cannot run"})
				return nil
			}
		}
	}
	return nil
}

// schedulerOrder lists the other workers with a message in hand: those not
// blocked first, in worker order (rotated by the seed when one is given).
func (s *sim) schedulerOrder(except *worker) []*worker {
	var free, waiting []*worker
	for _, o := range s.workers {
		if o == except || o.job == nil {
			continue
		}
		if o.blockedAt > 0 {
			waiting = append(waiting, o)
		} else {
			free = append(free, o)
		}
	}
	if s.rng != nil && len(free) > 1 {
		k := s.rng.IntN(len(free))
		free = append(free[k:], free[:k]...)
	}
	return append(free, waiting...)
}

// breakDeadlock applies the deadlock policy: of the blocked workers inside a
// transaction, the one that blocked last is rolled back and retries its
// transaction from BEGIN. It reports false when nobody can be rolled back.
func (s *sim) breakDeadlock() bool {
	var victim *worker
	for _, o := range s.workers {
		if o.job != nil && o.blockedAt > 0 && o.db != nil && o.db.inTransaction() && (victim == nil || o.blockedAt > victim.blockedAt) {
			victim = o
		}
	}
	if victim == nil {
		return false
	}
	st := s.rollback(victim)
	st.Kind = StepDeadlock
	st.Note = fmt.Sprintf("every worker waits for another's lock: %s blocked last, so its transaction is rolled back and retried from statement %d", victim.name, victim.job.txStart+1)
	victim.job.pc = victim.job.txStart
	victim.blockedAt = 0
	return true
}

// rollback rolls back w's open transaction and records the step (not yet
// given a kind by the caller).
func (s *sim) rollback(w *worker) *Step {
	st := Step{Worker: w.name, SQL: "ROLLBACK"}
	if w.job != nil {
		st.Message, st.Attempt = w.job.msg.m.ID, w.job.attempt
	}
	res := w.db.exec(s.ctx, "ROLLBACK", nil, false)
	w.db.setInTransaction(false)
	if res.Err != nil {
		st.Error = res.Err.Error()
	}
	st.Reverted = s.changes(res.Reverted, false)
	return s.record(st)
}

// stepWorker runs w's next step: a statement, or the ack after the last one.
func (s *sim) stepWorker(w *worker) (outcome, error) {
	j := w.job
	if !j.filterDone {
		j.filterDone = true
		if s.h.Filter && w.filter[j.msg.m.ID] {
			s.record(Step{Kind: StepFilterHit, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt,
				Note: w.name + "'s in-process filter has seen " + j.msg.m.ID + ": skip to the ack"})
			j.pc = len(j.stmts)
			return progressed, nil
		}
	}
	if j.pc >= len(j.stmts) {
		s.finishJob(w)
		return finished, nil
	}
	if w.db == nil {
		db, err := s.l.conn(w.name)
		if err != nil {
			return 0, err
		}
		w.db = db
	}
	stmt := j.stmts[j.pc]
	args, nargs := s.bind(stmt, j.msg.m)
	w.db.runsFor(j.msg.m.ID)
	res := w.db.exec(s.ctx, stmt.SQL, nargs, stmt.isQuery())
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	st := Step{Kind: StepSQL, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt,
		Statement: j.pc + 1, Line: stmt.Line, SQL: stmt.SQL, Args: args}
	if res.Busy {
		st.Kind = StepBlocked
		st.Error = res.Err.Error()
		st.Note = w.name + " waits: another connection holds a lock it needs"
		s.blockSeq++
		w.blockedAt = s.blockSeq
		s.record(st)
		return blocked, nil
	}
	w.blockedAt = 0
	if res.Err != nil {
		st.Error = res.Err.Error()
		s.record(st)
		s.record(Step{Kind: StepAbort, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt,
			Note: "the handler failed: no ack, so the broker delivers " + j.msg.m.ID + " again after its lease"})
		if w.db.inTransaction() {
			r := s.rollback(w)
			r.Kind, r.Note = StepRollback, "the failed handler's transaction rolls back"
		}
		w.job = nil
		return finished, nil
	}
	switch stmt.Verb {
	case "BEGIN":
		w.db.setInTransaction(true)
		j.txStart = j.pc
	case "COMMIT", "END", "ROLLBACK":
		w.db.setInTransaction(false)
	}
	if stmt.isQuery() {
		st.RowsFound = ptr(res.Found)
	} else if !isTxVerb(stmt.Verb) {
		st.RowsAffected = ptr(res.Rows)
	}
	st.Changes = s.changes(res.Changes, w.db.inTransaction())
	if stmt.Verb == "COMMIT" || stmt.Verb == "END" {
		st.Changes = s.changes(res.Committed, false)
	}
	if len(res.Committed) > 0 {
		for i := range st.Changes {
			st.Changes[i].Committed = true
		}
	}
	st.Reverted = s.changes(res.Reverted, false)
	s.record(st)
	j.pc++
	j.executed++
	if stmt.Guard == GuardStopIfNoRows && res.Rows == 0 || stmt.Guard == GuardStopIfFound && res.Found > 0 {
		why := "found a row: " + j.msg.m.ID + " was handled before; stop and ack"
		if stmt.Guard == GuardStopIfNoRows {
			why = "no rows changed: " + j.msg.m.ID + " was handled before; stop and ack"
		}
		if w.db.inTransaction() {
			r := s.rollback(w)
			r.Kind, r.Note = StepStop, why
		} else {
			s.record(Step{Kind: StepStop, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Note: why})
		}
		j.pc = len(j.stmts)
	}
	if j.fault == FaultCrashAfter && j.executed == j.faultAfter {
		return finished, s.crash(w, StepCrash, fmt.Sprintf("crash-after %d: %s dies after statement %d", j.faultAfter, w.name, j.executed))
	}
	return progressed, nil
}

// finishJob is the step after the last statement: remember the id in the
// filter, then ack (or the fault that replaces the ack).
func (s *sim) finishJob(w *worker) {
	j := w.job
	id := j.msg.m.ID
	base := Step{Worker: w.name, Message: id, Attempt: j.attempt}
	if s.h.Filter {
		w.filter[id] = true
	}
	switch {
	case j.fault == FaultCrashBeforeAck:
		s.crash(w, StepCrash, "crash-before-ack: "+w.name+" dies after its last statement, before acking")
		return
	case j.fault == FaultCrashAfter && j.executed < j.faultAfter:
		base.Note = fmt.Sprintf("crash-after %d did not fire: the handler ran %d statements; ", j.faultAfter, j.executed)
	}
	w.job = nil
	switch {
	case j.fault == FaultLoseAck:
		base.Kind = StepAckLost
		base.Note += "the ack never reaches the broker: " + id + " stays unacked until its lease ends"
	case j.leaseExpired || s.now >= j.leaseEnd:
		base.Kind = StepAckRefused
		base.Note += fmt.Sprintf("the lease ended at tick %d: the broker refuses the late ack", j.leaseEnd)
	default:
		base.Kind = StepAck
		base.Note += "the broker deletes " + id
		j.msg.acked = true
	}
	base.Note = strings.TrimSuffix(base.Note, "; ")
	s.record(base)
}

// crash kills (or restarts) a worker: its open transaction is rolled back,
// its message is neither processed further nor acked, its filter is lost.
func (s *sim) crash(w *worker, kind, note string) error {
	st := Step{Kind: kind, Worker: w.name, Note: note}
	if w.job != nil {
		st.Message, st.Attempt = w.job.msg.m.ID, w.job.attempt
	} else if len(w.filter) > 0 {
		st.Note += fmt.Sprintf(" (%d ids forgotten)", len(w.filter))
	}
	s.record(st)
	if w.job != nil && w.db != nil && w.db.inTransaction() {
		r := s.rollback(w)
		r.Kind, r.Note = StepRollback, "the connection closes: the open transaction rolls back"
	}
	w.job = nil
	w.blockedAt = 0
	w.filter = map[string]bool{}
	return nil
}

func (s *sim) bind(st *statement, m *Message) ([]Arg, []driver.NamedValue) {
	args := make([]Arg, len(st.Params))
	nargs := make([]driver.NamedValue, len(st.Params))
	for i, p := range st.Params {
		var v any
		switch p {
		case "message_id":
			v = m.ID
		case "amount":
			v = m.Amount
		case "balance":
			v = m.Balance
		case "account_id":
			v = nullable(m.AccountID)
		case "order_id":
			v = nullable(m.OrderID)
		case "now":
			v = s.now
		}
		args[i] = Arg{Name: p, Value: v}
		nargs[i] = driver.NamedValue{Name: p, Ordinal: i + 1, Value: v}
	}
	return args, nargs
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func ptr(n int64) *int64 { return &n }

// changes converts hook records for the trace.
func (s *sim) changes(rcs []rowChange, pending bool) []Change {
	if len(rcs) == 0 {
		return nil
	}
	out := make([]Change, len(rcs))
	for i, rc := range rcs {
		c := Change{Table: rc.Table, Op: rc.Op, Pending: pending}
		cols := tableColumns[rc.Table]
		if rc.Before != nil {
			c.Before = rowMap(cols, rc.Before)
			c.Key = rowKey(rc.Table, rc.OldRowID, rc.Before)
		}
		if rc.After != nil {
			c.After = rowMap(cols, rc.After)
			c.Key = rowKey(rc.Table, rc.NewRowID, rc.After)
		}
		out[i] = c
	}
	return out
}

func rowMap(cols []string, vals []any) map[string]any {
	m := make(map[string]any, len(cols))
	for i, c := range cols {
		if i < len(vals) {
			m[c] = vals[i]
		}
	}
	return m
}

// committed is told about every commit: it marks changed rows for the
// frame and counts, per message, the commits that changed a business figure.
func (s *sim) committed(changes []rowChange) {
	effective := map[string]bool{}
	for _, ch := range changes {
		if ch.After != nil {
			s.changed[ch.Table+"/"+rowKey(ch.Table, ch.NewRowID, ch.After)] = true
		} else {
			s.changed[ch.Table+"/"+rowKey(ch.Table, ch.OldRowID, ch.Before)] = true
		}
		if ch.Message != "" && isBusinessChange(ch) {
			effective[ch.Message] = true
		}
	}
	for id := range effective {
		// The commit belongs to the step being recorded next.
		s.effects[id] = append(s.effects[id], len(s.steps)+1)
	}
}

func isBusinessChange(ch rowChange) bool {
	switch ch.Table {
	case "accounts", "orders":
		if ch.Op != "update" {
			return true
		}
		return fmt.Sprint(ch.Before[1]) != fmt.Sprint(ch.After[1])
	case "shipments":
		return true
	}
	return false
}

// expected applies each message delivered so far exactly once, in publish
// order, to the initial ledger: the scenario's reference semantics.
func (s *sim) expected() []Figure {
	balances := map[string]int64{}
	states := map[string]string{}
	shipped := map[string]int64{}
	for _, a := range s.sc.Accounts {
		balances[a.ID] = a.Balance
	}
	for _, o := range s.sc.Orders {
		states[o.ID] = o.State
	}
	for _, m := range s.sc.Messages {
		if !s.delivered[m.ID] {
			continue
		}
		switch m.Kind {
		case KindCredit:
			balances[m.AccountID] += m.Amount
		case KindShip:
			states[m.OrderID] = "shipped"
			shipped[m.OrderID] = 1
		}
	}
	out := make([]Figure, 0, len(s.sc.Accounts)+len(s.sc.Orders))
	for _, a := range s.sc.Accounts {
		out = append(out, Figure{Table: "accounts", Key: a.ID, Value: balances[a.ID]})
	}
	for _, o := range s.sc.Orders {
		out = append(out, Figure{Table: "orders", Key: o.ID, Value: shipped[o.ID], State: states[o.ID]})
	}
	return out
}

// actual reads the same figures from the committed ledger.
func (s *sim) actual() []Figure {
	byID := func(table, id string) []any {
		for _, v := range s.l.rows(table) {
			if fmt.Sprint(v[0]) == id {
				return v
			}
		}
		return nil
	}
	out := make([]Figure, 0, len(s.sc.Accounts)+len(s.sc.Orders))
	for _, a := range s.sc.Accounts {
		f := Figure{Table: "accounts", Key: a.ID}
		if v := byID("accounts", a.ID); v != nil {
			f.Value, _ = v[1].(int64)
		}
		out = append(out, f)
	}
	for _, o := range s.sc.Orders {
		f := Figure{Table: "orders", Key: o.ID, State: "(deleted)"}
		if v := byID("orders", o.ID); v != nil {
			f.State = fmt.Sprint(v[1])
		}
		for _, sh := range s.l.rows("shipments") {
			if fmt.Sprint(sh[0]) == o.ID {
				f.Value++
			}
		}
		out = append(out, f)
	}
	return out
}

// verdict compares the final ledger with the expected one and, when they
// differ, explains the difference per message.
func (s *sim) verdict(ht *HandlerTrace, script *Script) {
	ht.Violations = []Violation{}
	ht.OK = figuresEqual(ht.Expected, ht.Actual)
	ht.Verdict = VerdictOK
	if ht.OK {
		return
	}
	for _, m := range s.sc.Messages {
		if !s.delivered[m.ID] {
			continue
		}
		switch eff := s.effects[m.ID]; {
		case len(eff) > 1:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictDuplicate, MessageID: m.ID, Step: eff[1],
				Detail: fmt.Sprintf("%s applied %d times", m.ID, len(eff))})
		case len(eff) == 0:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictLost, MessageID: m.ID, Step: s.skippedAt(m.ID),
				Detail: m.ID + " never applied"})
		}
	}
	// A figure below what is expected with no lost message means an effect
	// was overwritten (a stale absolute value written after a newer one):
	// blame the newest delivered message on that figure.
	for i := range ht.Expected {
		e, a := ht.Expected[i], ht.Actual[i]
		if e == a || (a.Value > e.Value && a.State == e.State) {
			continue
		}
		newest := ""
		for _, m := range s.sc.Messages {
			if s.delivered[m.ID] && figureOf(m) == e.Table+"/"+e.Key {
				newest = m.ID
			}
		}
		if newest == "" || hasViolation(ht.Violations, VerdictLost, newest) {
			continue
		}
		ht.Violations = append(ht.Violations, Violation{Kind: VerdictLost, MessageID: newest, Step: s.lastWriteStep(e),
			Detail: fmt.Sprintf("%s's effect was overwritten: %s, expected %s", newest, a, e)})
	}
	// The verdict follows the first figure that differs: above the expected
	// value is a duplicate effect, below (or a wrong state) a lost one.
	ht.Verdict = VerdictLost
	for i := range ht.Expected {
		if e, a := ht.Expected[i], ht.Actual[i]; e != a {
			if a.Value > e.Value {
				ht.Verdict = VerdictDuplicate
			}
			break
		}
	}
	if len(ht.Violations) == 0 {
		ht.Violations = append(ht.Violations, Violation{Kind: ht.Verdict, Step: len(s.steps), Detail: "the ledger differs from the expected one"})
	}
	sort.SliceStable(ht.Violations, func(i, j int) bool {
		a, b := ht.Violations[i], ht.Violations[j]
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.Kind == ht.Verdict && b.Kind != ht.Verdict
	})
	for i := range ht.Violations {
		if st := ht.Violations[i].Step; st > 0 {
			ht.Violations[i].Event = s.steps[st-1].Event
		}
	}
	v := ht.Violations[0]
	d := &Divergence{Step: v.Step, Event: v.Event, MessageID: v.MessageID, Kind: v.Kind, Detail: v.Detail}
	if v.Event > 0 {
		d.EventText = script.Events[v.Event-1].String()
	}
	ht.FirstDivergence = d
}

func (s *sim) lastStepOf(id string) int {
	for i := len(s.steps) - 1; i >= 0; i-- {
		if s.steps[i].Message == id {
			return i + 1
		}
	}
	return len(s.steps)
}

// skippedAt is where a handler decided a message needed no work (a guard or
// the filter), else the message's last step.
func (s *sim) skippedAt(id string) int {
	for i := len(s.steps) - 1; i >= 0; i-- {
		if st := s.steps[i]; st.Message == id && (st.Kind == StepStop || st.Kind == StepFilterHit) {
			return i + 1
		}
	}
	return s.lastStepOf(id)
}

// lastWriteStep is the last step whose changes touched the figure's row.
func (s *sim) lastWriteStep(f Figure) int {
	for i := len(s.steps) - 1; i >= 0; i-- {
		for _, c := range s.steps[i].Changes {
			if c.Table == f.Table && c.Key == f.Key || f.Table == "orders" && c.Table == "shipments" && c.After["order_id"] == f.Key {
				return i + 1
			}
		}
	}
	return len(s.steps)
}

func figureOf(m Message) string {
	if m.Kind == KindShip {
		return "orders/" + m.OrderID
	}
	return "accounts/" + m.AccountID
}

func hasViolation(vs []Violation, kind, id string) bool {
	for _, v := range vs {
		if v.Kind == kind && v.MessageID == id {
			return true
		}
	}
	return false
}

func figuresEqual(a, b []Figure) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
