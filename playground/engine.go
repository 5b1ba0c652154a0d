package playground

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// Run executes the script once per handler, each against a fresh ledger
// (or a reused one reset to be indistinguishable from it: pool.go), and
// returns the trace. The result is a pure function of the request:
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
	if err := req.Ledger.check(handlers); err != nil {
		return nil, err
	}
	if req.Ledger.Postgres != nil {
		t.Ledger = req.Ledger.Name()
	}
	m := newMeter(req.Budget) // one budget for every handler of the run (budget.go)
	defer m.stop(req.Usage)
	for i, h := range handlers {
		ht, refusals, err := runHandler(ctx, m, sc, tmpl, req.Ledger.forLedger(h), script, req.Seed, i, req.Probe, req.Ledger)
		if req.Ledger.Postgres != nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, &BudgetError{Limit: LimitStatementTime, Max: int64(pgStatementTimeout)}
		}
		if err != nil {
			return nil, err
		}
		t.Handlers = append(t.Handlers, ht)
		t.Refusals = agreeOnRefusals(t.Refusals, refusals, i == 0)
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

// agreeOnRefusals folds one handler's answers to a probe into the answers
// so far: an event is refused only if every handler's run refuses it.
func agreeOnRefusals(sofar, next []string, first bool) []string {
	if first {
		return next
	}
	for i := range sofar {
		if next[i] == "" {
			sofar[i] = ""
		}
	}
	return sofar
}

// answerProbe asks the run's current state about each probed event.
func (s *sim) answerProbe(p *Probe) []string {
	out := make([]string, len(p.Events))
	for i, ev := range p.Events {
		out[i] = s.refusal(ev)
	}
	return out
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
	meter   *meter // the run's budget; nil: none (the checker has its own bounds)

	delivered map[string]bool
	fx        *effectLedger // per message, how many times its effect is in the ledger
	// effectPending: a commit changed a business figure; the step being
	// recorded next is the one that made it.
	effectPending bool
	// effectApplied: that commit also put another application of its
	// message's effect in the ledger (Step.applied).
	effectApplied bool
	changed       map[string]bool // rows changed in the current event
	blockSeq      int
	part          *partition // a Kafka-style partition and its consumer group (offsets.go); nil: a queue

	// referenceAll's figures and applies, for refFor delivered messages.
	refFigs    []Figure
	refApplies map[string]bool
	refFor     int
}

type worker struct {
	name      string
	db        *dbConn
	filter    map[string]bool // the in-process filter's ids; nil until the first (remember)
	job       *job
	blockedAt int // >0 while the worker waits on a lock: the order it blocked in
}

type job struct {
	msg          *brokerCopy
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
	retries      int  // @retry-on retries so far (retry.go)
	backoff      bool // the retry after SQLITE_BUSY waits for the write lock (retry.go)
	batch        bool // a record of a polled batch (offsets.go): no ack
}

// msgState is one message id at the broker: the copies the producer
// published (and replay sent again), oldest first.
type msgState struct {
	m      *Message
	copies []*brokerCopy
}

// brokerCopy is one broker record of a message. Each publish makes a new
// one, independent of the others as a retried webhook is: its own
// deliveries, lease and ack, so acking one copy leaves another owed. A
// duplicate handed out while a copy is leased (deliver, start) is the same
// record delivered twice: either ack deletes it.
type brokerCopy struct {
	m          *Message
	n          int // 1 for the first copy, 2 for the next one published…
	deliveries int
	acked      bool
	dead       bool // moved to the dead-letter queue
	leaseEnd   int64
}

// owed: the broker still has this copy to deliver (not acked, not dead-lettered).
func (c *brokerCopy) owed() bool { return !c.acked && !c.dead }

// label is the copy number a step shows: 0 (none) for the first copy.
func (c *brokerCopy) label() int {
	if c.n > 1 {
		return c.n
	}
	return 0
}

// newCopy adds a broker record for a new publish of the message.
func (m *msgState) newCopy() *brokerCopy {
	c := &brokerCopy{m: m.m, n: len(m.copies) + 1}
	m.copies = append(m.copies, c)
	return c
}

// deleted: every copy was acked (the broker holds none of them).
func (m *msgState) deleted() bool {
	for _, c := range m.copies {
		if !c.acked {
			return false
		}
	}
	return len(m.copies) > 0
}

// firstOwed is the oldest copy still owed, or nil.
func (m *msgState) firstOwed() *brokerCopy {
	for _, c := range m.copies {
		if c.owed() {
			return c
		}
	}
	return nil
}

// firstDead is the oldest dead-lettered copy, or nil.
func (m *msgState) firstDead() *brokerCopy {
	for _, c := range m.copies {
		if c.dead {
			return c
		}
	}
	return nil
}

// target is the copy that deliver, start and redeliver act on: the oldest
// owed copy no worker holds (one the broker is waiting to hand out again),
// else the oldest owed copy; nil when no copy is owed.
func (s *sim) target(m *msgState) *brokerCopy {
	for _, c := range m.copies {
		if c.owed() && s.holder(c) == nil {
			return c
		}
	}
	return m.firstOwed()
}

// newSim sets up one handler's run on ledger l: the scenario's workers, idle
// and with empty filters, and its messages, none delivered yet. Run and the
// exercise checker both start from it.
func newSim(ctx context.Context, sc *Scenario, h *Handler, l *ledger) *sim {
	s := &sim{
		ctx: ctx, sc: sc, h: h, l: l,
		byName: map[string]*worker{}, msgs: map[string]*msgState{},
		delivered: map[string]bool{}, fx: newEffectLedger(sc), changed: map[string]bool{},
	}
	for _, name := range sc.Workers {
		w := &worker{name: name}
		s.workers = append(s.workers, w)
		s.byName[name] = w
	}
	for i := range sc.Messages {
		s.msgs[sc.Messages[i].ID] = &msgState{m: &sc.Messages[i]}
	}
	l.onCommit = s.committed
	s.part = newPartition(s)
	return s
}

func runHandler(ctx context.Context, m *meter, sc *Scenario, tmpl *ledgerImage, h *Handler, script *Script, seed int64, index int, probe *Probe, lg Ledger) (*HandlerTrace, []string, error) {
	var l *ledger
	var err error
	if lg.Postgres != nil {
		l, err = lg.acquire(ctx, tmpl)
	} else {
		l, err = acquireLedger(tmpl, !isBuiltinHandler(h))
	}
	if err != nil {
		return nil, nil, err
	}
	ok := false // the run ended normally: its ledger may be reused
	defer func() {
		if l.pg != nil {
			l.pg.release()
		} else {
			releaseLedger(l, ok)
		}
	}()
	s := newSim(ctx, sc, h, l)
	s.meter = m
	s.steps = make([]Step, 0, min(8*len(script.Events), 512))
	if seed != 0 {
		s.rng = rand.New(rand.NewPCG(uint64(seed), uint64(index)))
	}
	if !isBuiltinHandler(h) {
		// A learner's handler: its worker connections are sandboxed (sandbox.go).
		if err := sandboxWorkers(s); err != nil {
			return nil, nil, err
		}
	}
	ht := &HandlerTrace{Name: h.Name, Description: h.Description, Idempotent: h.Idempotent, Why: h.Why, workers: sc.Workers}
	for _, m := range sc.Messages {
		ht.messages = append(ht.messages, m.ID)
	}
	expectedFor := -1 // how many messages had been delivered when Expected was last computed
	var refusals []string
	if probe != nil && probe.At == 0 {
		refusals = s.answerProbe(probe)
	}
	var j judgement // the verdict after the latest event
	for i, ev := range script.Events {
		if err := s.over(); err != nil {
			return nil, nil, err
		}
		s.event = i + 1
		first := len(s.steps)
		clear(s.changed)
		if err := s.apply(ev); err != nil {
			return nil, nil, err
		}
		f := Frame{Event: i + 1, Tick: s.now, StepCount: len(s.steps) - first, Changed: []string{}}
		if prev := len(ht.Frames) - 1; prev >= 0 && len(s.changed) == 0 {
			// Nothing committed during the event: share the previous
			// figures and rows (they are never modified).
			f.Actual, f.Ledger = ht.Frames[prev].Actual, ht.Frames[prev].Ledger
		} else {
			var prevLedger []TableRows
			if prev >= 0 {
				prevLedger = ht.Frames[prev].Ledger
			}
			f.Actual, f.Ledger = s.actual(), s.snapshotAfter(prevLedger)
			s.meter.chargeSnapshot(f.Ledger)
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
		// The verdict at this frame: the engine's per-message rule, on the
		// run as it stands after the event.
		j = s.judge(f.Actual)
		f.Verdict, f.Effects = j.Verdict, j.Effects
		if len(j.DeadLettered)+len(j.InFlight) > 0 {
			f.Unsettled = append(append([]MessageOutcome(nil), j.DeadLettered...), j.InFlight...)
		}
		f.Partition = s.partitionFrame()
		ht.Frames = append(ht.Frames, f)
		if probe != nil && probe.At == i+1 {
			refusals = s.answerProbe(probe)
		}
	}
	ht.Steps = s.steps
	if ht.Steps == nil {
		ht.Steps = []Step{}
	}
	last := ht.Frames[len(ht.Frames)-1]
	ht.Expected, ht.Actual, ht.Ledger = last.Expected, last.Actual, last.Ledger
	s.verdict(ht, script, j) // nothing changed since the last frame's judgement
	if testHookBeforeClose != nil && l.pg == nil {
		testHookBeforeClose(l)
	}
	ok = true
	return ht, refusals, nil
}

// record appends a step, filling index, event and tick.
func (s *sim) record(st Step) *Step {
	st.Index = len(s.steps) + 1
	st.Event = s.event
	st.Tick = s.now
	st.Effect, s.effectPending = s.effectPending, false
	st.applied, s.effectApplied = s.effectApplied, false
	s.steps = append(s.steps, st)
	s.meter.charge(&s.steps[len(s.steps)-1])
	return &s.steps[len(s.steps)-1]
}

func (s *sim) skip(w, msg, note string) {
	s.record(Step{Kind: StepSkip, Worker: w, Message: msg, Note: note})
}

// refusal says why ev cannot happen now, or "" when it can. It changes
// nothing: apply records a refused event as a skip step with this note, and
// a probe (Request.Probe) asks it of events a learner might add next.
func (s *sim) refusal(ev Event) string {
	if note, ok := s.partitionRefusal(ev); ok {
		return note
	}
	switch ev.Kind {
	case EventDeliver, EventRedeliver, EventPublish, EventStart, EventRedrive:
		m := s.msgs[ev.Message]
		id := m.m.ID
		if ev.Kind == EventRedrive && m.firstDead() == nil {
			return id + " is not in the dead-letter queue"
		}
		none := ev.Kind != EventPublish && ev.Kind != EventRedrive && len(m.copies) > 0 && s.target(m) == nil
		switch {
		case ev.Kind == EventRedeliver && len(m.copies) == 0:
			return id + " was never delivered; use deliver " + id
		case none && !m.deleted():
			return id + " is in the dead-letter queue: the broker does not deliver it again; publish " + id + " or replay sends it again"
		case none && ev.Kind == EventRedeliver:
			return id + " was acked, so the broker deleted it; publish " + id + " or replay sends it again"
		case none:
			return id + " was already acked; publish " + id + " or replay sends it again"
		}
		if ev.Worker != "" {
			if w := s.byName[ev.Worker]; w.job != nil {
				return fmt.Sprintf("%s is busy with %s; finish or crash it first", w.name, w.job.msg.m.ID)
			}
			return ""
		}
		for _, w := range s.workers {
			if w.job == nil {
				return ""
			}
		}
		return "every worker is busy"
	case EventStep:
		if s.byName[ev.Worker].job == nil {
			return ev.Worker + " has no message in hand; start one first (start MSG on " + ev.Worker + ")"
		}
	case EventFinish:
		if s.byName[ev.Worker].job == nil {
			return ev.Worker + " has no message in hand"
		}
	case EventExpire:
		m := s.msgs[ev.Message]
		if len(s.leased(m)) == 0 {
			return m.m.ID + " has no lease running"
		}
	case EventReplay:
		if len(s.log) == 0 {
			return "nothing has been published yet"
		}
	}
	return ""
}

func (s *sim) apply(ev Event) error {
	if note := s.refusal(ev); note != "" {
		s.skip(ev.Worker, ev.Message, note)
		return nil
	}
	switch ev.Kind {
	case EventDeliver, EventRedeliver, EventPublish, EventStart, EventRedrive:
		w := s.deliver(ev)
		if w != nil && ev.Kind != EventStart {
			return s.runToCompletion(w)
		}
	case EventStep:
		w := s.byName[ev.Worker]
		n := max(ev.N, 1)
		for i := int64(0); i < n; i++ {
			if w.job == nil {
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
		return s.runToCompletion(s.byName[ev.Worker])
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
	case EventPoll:
		return s.poll(ev)
	case EventRebalance:
		return s.rebalance(ev)
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
// could not (the reason is recorded as a skip step). publish makes a new
// copy; deliver, start and redeliver act on the copy target picks (the
// first delivery makes copy 1).
func (s *sim) deliver(ev Event) *worker {
	m := s.msgs[ev.Message]
	id := m.m.ID
	var c *brokerCopy
	switch ev.Kind {
	case EventRedrive:
		c = m.firstDead()
	case EventPublish:
	default:
		c = s.target(m)
	}
	note := ""
	switch ev.Kind {
	case EventDeliver, EventStart:
		switch {
		case c != nil && s.holder(c) != nil && c.leaseEnd > s.now:
			note = fmt.Sprintf("%s is still leased to %s: the broker hands out a second copy", id, s.holder(c).name)
		case c != nil && s.holder(c) != nil:
			note = fmt.Sprintf("%s's lease ran out while %s still runs it: the broker delivers it again", id, s.holder(c).name)
		}
	case EventPublish:
		if len(m.copies) > 0 {
			note = fmt.Sprintf("the producer publishes %s again: copy %d, a broker record of its own with the same id (its own lease and ack)", id, len(m.copies)+1)
		}
	case EventRedrive:
		note = "an operator redrives " + id + " from the dead-letter queue: it is delivered again, its delivery count starting over"
	}
	w := s.pickWorker(ev.Worker, id)
	if w == nil {
		return nil
	}
	if ev.Kind == EventRedrive {
		c.dead, c.deliveries = false, 0
	}
	if c == nil {
		c = m.newCopy()
	}
	if ev.Kind == EventPublish || !contains(s.log, id) {
		s.log = append(s.log, id)
	}
	if ev.Kind == EventRedeliver && c.leaseEnd > s.now {
		from := s.now
		s.now = c.leaseEnd
		s.record(Step{Kind: StepClock, Message: id, Note: fmt.Sprintf("the clock jumps from tick %d to %d, the end of %s's lease", from, s.now, id)})
		s.leasesRanOut(from)
	}
	if c != nil && c.leaseEnd <= s.now {
		s.waitOutBackoff(c) // backoff.go
	}
	if c.deliveries >= s.sc.Settings.MaxDeliveries {
		c.dead = true
		s.record(Step{Kind: StepDeadLetter, Message: id, Copy: c.label(), Note: fmt.Sprintf("%s was delivered %d times: the broker moves it to the dead-letter queue", id, c.deliveries)})
		return nil
	}
	s.start(w, c, ev.Fault, ev.FaultAfter, note)
	return w
}

func (s *sim) start(w *worker, c *brokerCopy, fault string, faultAfter int, note string) {
	c.deliveries++
	c.leaseEnd = s.now + s.sc.Settings.LeaseTicks
	s.delivered[c.m.ID] = true
	stmts, ok := s.h.statementsFor(c.m.Kind)
	if !ok {
		note = strings.TrimPrefix(note+"; the handler has no statements for kind "+c.m.Kind, "; ")
	}
	w.job = &job{msg: c, attempt: c.deliveries, stmts: stmts, fault: fault, faultAfter: faultAfter, leaseEnd: c.leaseEnd}
	s.record(Step{Kind: StepDeliver, Worker: w.name, Message: c.m.ID, Attempt: c.deliveries, Copy: c.label(), Note: note})
}

// holder returns a worker running the copy, if any.
func (s *sim) holder(c *brokerCopy) *worker {
	for _, w := range s.workers {
		if w.job != nil && w.job.msg == c {
			return w
		}
	}
	return nil
}

// holderOf returns a worker running any copy of the message, if any.
func (s *sim) holderOf(m *msgState) *worker {
	for _, w := range s.workers {
		if w.job != nil && w.job.msg.m == m.m {
			return w
		}
	}
	return nil
}

// leased lists the message's owed copies whose lease is running (or that
// a worker still holds).
func (s *sim) leased(m *msgState) []*brokerCopy {
	var out []*brokerCopy
	for _, c := range m.copies {
		if c.owed() && c.deliveries > 0 && (c.leaseEnd > s.now || s.holder(c) != nil) {
			out = append(out, c)
		}
	}
	return out
}

// leasesRanOut records the leases that ended while the clock moved past them.
func (s *sim) leasesRanOut(from int64) {
	for i := range s.sc.Messages {
		for _, c := range s.msgs[s.sc.Messages[i].ID].copies {
			if c.deliveries == 0 || !c.owed() || c.leaseEnd <= from || c.leaseEnd > s.now {
				continue
			}
			holder := ""
			if w := s.holder(c); w != nil {
				holder = w.name
				w.job.leaseExpired = true
			}
			s.record(Step{Kind: StepLeaseExpired, Worker: holder, Message: c.m.ID, Copy: c.label(), Note: fmt.Sprintf("%s's lease ended at tick %d: the broker may deliver it again", c.m.ID, c.leaseEnd)})
		}
	}
	for _, w := range s.workers {
		if w.job != nil && w.job.leaseEnd <= s.now {
			w.job.leaseExpired = true
		}
	}
}

// expire ends the lease of every copy of the message that has one running.
func (s *sim) expire(m *msgState) {
	id := m.m.ID
	names := []string{}
	copies := s.leased(m)
	for _, c := range copies {
		c.leaseEnd = s.now
		for _, w := range s.workers {
			if w.job != nil && w.job.msg == c {
				w.job.leaseExpired = true
				w.job.leaseEnd = min(w.job.leaseEnd, s.now)
				names = append(names, w.name)
			}
		}
	}
	note := id + "'s lease runs out: the broker may deliver it again"
	if len(names) > 0 {
		note += "; " + strings.Join(names, ", ") + " is still running: its ack deletes the message only if no one receives it first"
	}
	st := Step{Kind: StepLeaseExpired, Message: id, Copy: copies[0].label(), Note: note}
	if len(names) > 0 {
		st.Worker = names[0]
	}
	s.record(st)
}

func (s *sim) replay() error {
	ids := append([]string(nil), s.log...)
	for _, id := range ids {
		w := s.pickWorker("", id)
		if w == nil {
			return nil
		}
		s.start(w, s.msgs[id].newCopy(), "", 0, "replay from offset 0")
		if err := s.over(); err != nil {
			return err
		}
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
	if res.Waiting { // PostgreSQL: a worker's transaction holds rows it would delete
		res = s.pgJanitorGivesUp(janitor, res)
	}
	st := Step{Kind: StepPrune, Worker: "janitor", SQL: q, Args: []Arg{{"cutoff", cutoff}},
		Note: fmt.Sprintf("delete dedupe rows older than %d ticks", older)}
	if res.Err != nil {
		st.Error = res.Err.Error()
		st.SQLState = pgSQLState(res.Err)
		st.Note = "prune could not run: a worker holds the write lock"
		if s.l.pg != nil { // PostgreSQL locks rows, not the database
			st.Note = "prune could not run: a worker's open transaction holds rows it would delete, and the janitor does not wait for it"
		}
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
