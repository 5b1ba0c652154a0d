package playground

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// CustomQueryKey is the playground query parameter that carries a
// learner's handler source (see Counterexample.Query); web/pgstate.go
// reads the same key.
const CustomQueryKey = "handler"

// CheckResult is the checker's answer for one learner handler.
type CheckResult struct {
	Exercise string `json:"exercise"`
	Passed   bool   `json:"passed"`
	// Schedules is the number of complete schedules checked against the
	// invariants: a schedule that reaches a state already seen is not
	// checked (nor extended) again, its future being the same.
	Schedules int `json:"schedules"`
	// DistinctStates is the number of distinct (ledger, broker, workers,
	// budget) states the exploration reached.
	DistinctStates int `json:"distinct_states"`
	// NaiveSchedules is the number of complete schedules within the bounds:
	// what an enumeration without pruning checks one by one, and what "holds
	// in all N schedules" counts. It is counted on the state graph (equal
	// states have equal futures) and known when the check passed, else 0.
	NaiveSchedules int64 `json:"naive_schedules"`
	// Runs is the number of fresh ledgers the exploration used: the search
	// replays a schedule's prefix from scratch when it backtracks.
	Runs           int             `json:"runs"`
	Counterexample *Counterexample `json:"counterexample,omitempty"`
	// Error is set when the handler does not parse, or when its SQL was
	// refused or failed in every schedule; Passed is then false.
	Error *HandlerError `json:"error,omitempty"`
}

// HandlerError is a problem in the learner's handler, with its line.
type HandlerError struct {
	Line    int    `json:"line,omitempty"` // 1-based line in the handler source; 0 when not tied to a line
	Message string `json:"message"`
}

func (e *HandlerError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// Counterexample is the smallest schedule found that breaks an invariant.
type Counterexample struct {
	Scenario  string `json:"scenario"`
	Script    string `json:"script"` // canonical script text
	Events    int    `json:"events"`
	Invariant string `json:"invariant"`
	Violation string `json:"violation"` // "acc-1 balance 200, expected 150"
	// Story tells the schedule in one line:
	// "deliver msg-1 to A; A's ack is lost; redeliver msg-1 to A → acc-1 balance 200, expected 150".
	Story string `json:"story"`
	// Query opens it in the playground: scenario=…&script=…&handler=<source>.
	// handler carries the learner's handler source (at most 4 KiB, what
	// ParseHandler accepts); the playground page parses it with
	// ParseHandler ("mine") and runs it as Request.Custom, sandboxed.
	Query string `json:"query"`
	// SQLError is the first statement of the handler that failed in this
	// schedule (a constraint, say), with its line; nil when none did.
	SQLError *HandlerError `json:"sql_error,omitempty"`
}

// The checker's model. A schedule is a script of events (the playground's
// grammar) chosen by the explorer, depth first, in a fixed order: deliver
// each message in scope (to each idle worker when there are several), with
// every fault the budget still allows (lose-ack, crash-after N for every
// statement N, crash-before-ack); with Interleave, start a delivery and
// step each busy worker one statement at a time, crash a busy worker,
// expire a lease, hand out a second copy; publish again, replay, restart,
// prune, advance the clock. A schedule is complete ("settled") when no
// worker holds a message and every delivered message is acked (or
// dead-lettered): before that the broker still owes a redelivery, and a
// missing effect is not yet lost. Each settled state is checked against the
// exercise's invariants. Two schedules that reach the same state (hashed:
// clock, broker, workers, uncommitted and committed rows) have the same
// future, so the second is not extended unless it has more budget left.
// A failing schedule is shrunk (drop an event, merge steps or clock jumps,
// a started delivery made whole, earlier messages and workers) while it
// still fails, and told as a story.

// Check parses the learner's handler and checks it against every schedule
// within the exercise's bounds, in each of its scenarios. It stops at the
// first schedule that breaks an invariant and shrinks it to a minimal one.
// The answer is deterministic. A handler that does not parse, or whose SQL
// the sandbox refuses, gives a result with Error set (not an error); the
// error is for an invalid exercise, the check deadline or ctx.
func Check(ctx context.Context, ex *Exercise, handlerSource string) (*CheckResult, error) {
	return check(ctx, ex, handlerSource, true)
}

func check(ctx context.Context, ex *Exercise, source string, prune bool) (*CheckResult, error) {
	if err := ex.Validate(); err != nil {
		return nil, err
	}
	res := &CheckResult{Exercise: ex.ID}
	h, line, err := parseHandler(exerciseHandlerName, source)
	if err != nil {
		res.Error = &HandlerError{Line: line, Message: err.Error()}
		return res, nil
	}
	limit := sandboxCheckTimeout
	if !prune {
		limit = 10 * time.Minute // the naive enumeration is only measured, in tests
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	b := ex.Bounds.withDefaults()
	for _, name := range ex.Scenarios {
		sc, _ := LookupScenario(name)
		x, err := newExplorer(ctx, sc, h, b, ex.Invariants, prune)
		if err != nil {
			return nil, err
		}
		err = x.explore()
		if err == nil && x.failure != nil {
			x.ce, err = x.counterexample(source)
		}
		if x.spare != nil {
			x.spare.close()
			x.spare = nil
		}
		res.Schedules += x.schedules
		res.DistinctStates += len(x.nodes)
		res.Runs += x.runs
		if err != nil {
			if parent.Err() != nil {
				return nil, parent.Err()
			}
			if ctx.Err() == context.DeadlineExceeded {
				return nil, fmt.Errorf("the check took longer than %v; it was stopped", limit)
			}
			return nil, err
		}
		if x.refused != nil {
			res.Error = x.refused
			return res, nil
		}
		if x.ce != nil {
			res.Counterexample = x.ce
			return res, nil
		}
		if x.schedules == 0 {
			msg := "no schedule completed: every delivery of the handler failed"
			line := 0
			if x.firstError != nil {
				msg += ": " + x.firstError.Message
				line = x.firstError.Line
			}
			res.Error = &HandlerError{Line: line, Message: msg}
			return res, nil
		}
		if prune {
			res.NaiveSchedules += x.naiveCount()
		} else {
			res.NaiveSchedules += int64(x.schedules)
		}
	}
	res.Passed = true
	return res, nil
}

// explorer enumerates the schedules of one scenario depth first. A schedule
// is re-executed from a fresh ledger whenever the search backtracks (SQLite
// transactions in flight cannot be copied), and a state already reached is
// not expanded again: its future is the same.
type explorer struct {
	ctx        context.Context
	sc         *Scenario
	tmpl       *ledgerTemplate
	h          *Handler
	b          ExploreBounds
	invariants []string
	prune      bool
	msgs       []string // message ids in scope, scenario order
	workers    []string // worker names in scope

	nodes     map[exploreKey]*exploreNode
	root      exploreKey
	schedules int
	runs      int

	failure    *exploreFailure
	ce         *Counterexample
	spare      *ledger       // a finished run's ledger, reset for the next run
	refused    *HandlerError // the sandbox refused a statement: stop
	firstError *HandlerError // the first SQL error (a constraint, say)
}

type exploreKey [16]byte

type exploreNode struct {
	settled bool
	// expanded lists the budgets the node was expanded with, none covering
	// another: a later visit whose budget one of them covers (no more of
	// anything left) has nothing new to find.
	expanded []exploreBudget
	edges    []exploreEdge
	paths    map[exploreBudget]int64 // budget → settled paths from here
}

// exploreEdge is an action from a node: its event, its cost and the state it leads to.
type exploreEdge struct {
	event string
	cost  exploreBudget
	to    exploreKey
}

func (a exploreBudget) covers(b exploreBudget) bool {
	return a.events >= b.events && a.crashes >= b.crashes && a.lostAcks >= b.lostAcks && a.expiries >= b.expiries &&
		a.duplicates >= b.duplicates && a.publishes >= b.publishes && a.replays >= b.replays &&
		a.restarts >= b.restarts && a.prunes >= b.prunes
}

func (n *exploreNode) coveredBy(b exploreBudget) bool {
	for _, e := range n.expanded {
		if e.covers(b) {
			return true
		}
	}
	return false
}

func (n *exploreNode) addExpansion(b exploreBudget) {
	kept := n.expanded[:0]
	for _, e := range n.expanded {
		if !b.covers(e) {
			kept = append(kept, e)
		}
	}
	n.expanded = append(kept, b)
}

func (n *exploreNode) addEdge(e exploreEdge) {
	for _, o := range n.edges {
		if o.event == e.event {
			return
		}
	}
	n.edges = append(n.edges, e)
}

type exploreFailure struct {
	events    []Event
	invariant string
	detail    string
}

// exploreBudget is what is left of the bounds along one schedule.
type exploreBudget struct {
	events, crashes, lostAcks, expiries, duplicates, publishes, replays, restarts, prunes int
}

type exploreAction struct {
	ev   Event
	cost exploreBudget // subtracted from the budget (events is always 1)
}

var errExploreStop = errors.New("explore: stop")

func newExplorer(ctx context.Context, sc *Scenario, h *Handler, b ExploreBounds, invariants []string, prune bool) (*explorer, error) {
	tmpl, err := sc.template()
	if err != nil {
		return nil, err
	}
	x := &explorer{ctx: ctx, sc: sc, tmpl: tmpl, h: h, b: b, invariants: invariants, prune: prune,
		nodes: map[exploreKey]*exploreNode{}}
	n := b.Messages
	if n == 0 || n > len(sc.Messages) {
		n = len(sc.Messages)
	}
	for _, m := range sc.Messages[:n] {
		x.msgs = append(x.msgs, m.ID)
	}
	x.workers = sc.Workers[:min(b.Workers, len(sc.Workers))]
	return x, nil
}

func (x *explorer) budget() exploreBudget {
	b := x.b
	return exploreBudget{events: b.MaxEvents, crashes: b.Crashes, lostAcks: b.LostAcks, expiries: b.Expiries,
		duplicates: b.Duplicates, publishes: b.Publishes, replays: b.Replays, restarts: b.Restarts, prunes: b.Prunes}
}

func (a exploreBudget) minus(c exploreBudget) exploreBudget {
	return exploreBudget{a.events - 1, a.crashes - c.crashes, a.lostAcks - c.lostAcks, a.expiries - c.expiries,
		a.duplicates - c.duplicates, a.publishes - c.publishes, a.replays - c.replays, a.restarts - c.restarts, a.prunes - c.prunes}
}

// newSim builds a fresh run of the handler, as runHandler does, with every
// worker connection sandboxed.
func (x *explorer) newSim() (*sim, error) {
	x.runs++
	if l := x.spare; l != nil {
		x.spare = nil
		if s, err := x.reuse(l); err == nil {
			return s, nil
		}
		l.close()
	}
	return exploreNewSim(x.ctx, x.sc, x.tmpl, x.h)
}

// release gives a finished run's ledger back for the next run.
func (x *explorer) release(s *sim) {
	if x.spare == nil {
		x.spare = s.l
		return
	}
	s.l.close()
}

// reuse resets a released ledger to the scenario's initial rows, keeping
// its (sandboxed) connections: opening and confining connections and
// restoring is most of a fresh run's cost. Every worker's open transaction
// is rolled back, then the template is restored over the pinned connection
// with the backup API, as openLedger does.
func (x *explorer) reuse(l *ledger) (*sim, error) {
	for _, c := range l.conns {
		if c.inTx || len(c.pending) > 0 {
			execRaw(c.conn, "ROLLBACK") // "no transaction is active" is fine
		}
		c.inTx, c.pending, c.stmt, c.message = false, nil, c.stmt[:0], ""
	}
	raw := l.pinned.conn
	if sc, ok := raw.(*sandboxConn); ok {
		raw = sc.Conn
	}
	rc, ok := raw.(restoreConn)
	if !ok {
		return nil, fmt.Errorf("explore: the ledger's connection cannot restore")
	}
	b, err := rc.NewRestore(x.tmpl.uri)
	if err == nil {
		_, err = b.Step(-1)
		if ferr := b.Finish(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		return nil, err
	}
	l.committed = x.tmpl.initial.clone()
	s := newSim(x.ctx, x.sc, x.h, l)
	for _, c := range l.conns {
		if w := s.byName[c.name]; w != nil {
			w.db = c
		}
	}
	return s, nil
}

// exploreNewSim opens a fresh sandboxed ledger and a run over it.
func exploreNewSim(ctx context.Context, sc *Scenario, tmpl *ledgerTemplate, h *Handler) (*sim, error) {
	l, err := openLedger(tmpl)
	if err != nil {
		return nil, err
	}
	s := newSim(ctx, sc, h, l)
	if err := sandboxWorkers(s); err != nil {
		l.close()
		return nil, err
	}
	return s, nil
}

// step applies one event. It reports false when the event could not happen
// (the engine recorded a skip): the schedule is not a real one.
func (x *explorer) step(s *sim, ev Event) (bool, error) {
	before := len(s.steps)
	s.event++
	clear(s.changed)
	if err := s.apply(ev); err != nil {
		return false, err
	}
	for _, st := range s.steps[before:] {
		switch {
		case st.Kind == StepSkip:
			return false, nil
		case st.Kind == StepSQL && st.Error != "":
			he := &HandlerError{Line: st.Line, Message: st.Error}
			if strings.HasPrefix(st.Error, sandboxRefused) {
				x.refused = he
				return false, errExploreStop
			}
			if x.firstError == nil {
				x.firstError = he
			}
		}
	}
	return true, nil
}

// replay rebuilds the state at the end of events on a fresh ledger.
func (x *explorer) replay(events []Event) (*sim, error) {
	s, err := x.newSim()
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		ok, err := x.step(s, ev)
		if err != nil || !ok {
			x.release(s)
			if err == nil {
				err = fmt.Errorf("explore: replaying %q did not reproduce the schedule", (&Script{Events: events}).String())
			}
			return nil, err
		}
	}
	return s, nil
}

func (x *explorer) explore() error {
	s, err := x.newSim()
	if err != nil {
		return err
	}
	bud := x.budget()
	x.root = x.key(s, bud)
	x.nodes[x.root] = &exploreNode{}
	err = x.visit(nil, s, bud, x.nodes[x.root])
	if err == errExploreStop {
		return nil
	}
	return err
}

// visit expands the node reached by path; s is a live run at that node (or
// nil) and is consumed.
func (x *explorer) visit(path []Event, s *sim, bud exploreBudget, node *exploreNode) error {
	defer func() {
		if s != nil {
			x.release(s)
		}
	}()
	node.addExpansion(bud)
	if bud.events == 0 {
		return nil
	}
	var actions []exploreAction
	if s != nil {
		actions = x.actions(s, bud)
	} else {
		r, err := x.replay(path)
		if err != nil {
			return err
		}
		actions = x.actions(r, bud)
		s = r
	}
	// Siblings start from this node again: from a snapshot when no worker
	// is mid-handler (no transaction to copy), else by replaying the path.
	var snap *exploreSnapshot
	if len(actions) > 1 {
		snap = x.snapshot(s)
		defer snap.close()
	}
	for _, a := range actions {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		if s == nil && snap != nil {
			s = x.restore(snap)
		}
		if s == nil {
			r, err := x.replay(path)
			if err != nil {
				return err
			}
			s = r
		}
		child := append(path[:len(path):len(path)], a.ev)
		ok, err := x.step(s, a.ev)
		if err != nil {
			return err
		}
		if !ok {
			x.release(s)
			s = nil
			continue
		}
		nb := bud.minus(a.cost)
		k := x.key(s, nb)
		node.addEdge(exploreEdge{event: a.ev.String(), cost: a.cost, to: k})
		cn, seen := x.nodes[k]
		if seen && x.prune && cn.coveredBy(nb) {
			x.release(s)
			s = nil
			continue
		}
		if !seen {
			cn = &exploreNode{settled: x.settled(s)}
			x.nodes[k] = cn
		}
		if cn.settled && (!seen || !x.prune) {
			x.schedules++
			if inv, detail := exerciseInvariantBroken(x.invariants, x.sc, s.expected(), s.actual()); inv != "" {
				x.failure = &exploreFailure{events: child, invariant: inv, detail: detail}
				x.release(s)
				s = nil
				return errExploreStop
			}
		}
		live := s
		s = nil
		if err := x.visit(child, live, nb, cn); err != nil {
			return err
		}
	}
	return nil
}

// settled: no worker holds a message, and every message in scope that was
// delivered is acked (or dead-lettered). Only then is a schedule complete:
// before, the broker still owes a redelivery.
func (x *explorer) settled(s *sim) bool {
	for _, w := range s.workers {
		if w.job != nil {
			return false
		}
	}
	for _, id := range x.msgs {
		m := s.msgs[id]
		if m.deliveries > 0 && !m.acked && m.deliveries < s.sc.Settings.MaxDeliveries {
			return false
		}
	}
	return true
}

// actions lists the events that can happen next, in a fixed order.
func (x *explorer) actions(s *sim, bud exploreBudget) []exploreAction {
	var out []exploreAction
	add := func(ev Event, cost exploreBudget) { out = append(out, exploreAction{ev: ev, cost: cost}) }
	var idle, busy []*worker
	for _, name := range x.workers {
		w := s.byName[name]
		if w.job == nil {
			idle = append(idle, w)
		} else {
			busy = append(busy, w)
		}
	}
	// A named target only when there is a choice of worker.
	targets := func() []string {
		if len(x.workers) == 1 {
			if len(idle) == 1 {
				return []string{""}
			}
			return nil
		}
		names := make([]string, len(idle))
		for i, w := range idle {
			names[i] = w.name
		}
		return names
	}()
	for _, w := range busy {
		add(Event{Kind: EventStep, Worker: w.name}, exploreBudget{})
		if w.blockedAt > 0 {
			// Every choice may wait on a lock: finish lets the scheduler
			// and its deadlock policy decide.
			add(Event{Kind: EventFinish, Worker: w.name}, exploreBudget{})
		}
	}
	for _, id := range x.msgs {
		m := s.msgs[id]
		if m.acked || m.deliveries >= s.sc.Settings.MaxDeliveries {
			continue
		}
		holder := s.holder(m)
		leaseLive := m.deliveries > 0 && m.leaseEnd > s.now
		kind, cost := EventRedeliver, exploreBudget{}
		switch {
		case m.deliveries == 0:
			kind = EventDeliver
		case holder != nil && leaseLive:
			if bud.duplicates == 0 {
				continue
			}
			kind, cost = EventDeliver, exploreBudget{duplicates: 1}
		}
		startable := x.b.Interleave && !(kind == EventRedeliver && holder == nil && leaseLive)
		for _, w := range targets {
			if startable {
				add(Event{Kind: EventStart, Message: id, Worker: w}, cost)
			} else {
				add(Event{Kind: kind, Message: id, Worker: w}, cost)
			}
			x.faultVariants(s, bud, kind, id, w, cost, add, !startable)
		}
	}
	if bud.crashes > 0 {
		for _, w := range busy {
			add(Event{Kind: EventCrash, Worker: w.name}, exploreBudget{crashes: 1})
		}
	}
	if bud.expiries > 0 {
		for _, id := range x.msgs {
			m := s.msgs[id]
			if !m.acked && m.deliveries > 0 && m.leaseEnd > s.now && s.holder(m) != nil {
				add(Event{Kind: EventExpire, Message: id}, exploreBudget{expiries: 1})
			}
		}
	}
	if bud.publishes > 0 && (x.b.RetryWindow == 0 || s.now <= x.b.RetryWindow) {
		for _, id := range x.msgs {
			if !contains(s.log, id) {
				continue
			}
			for _, w := range targets {
				add(Event{Kind: EventPublish, Message: id, Worker: w}, exploreBudget{publishes: 1})
			}
		}
	}
	if bud.restarts > 0 {
		for _, w := range idle {
			if len(w.filter) > 0 {
				add(Event{Kind: EventRestart, Worker: w.name}, exploreBudget{restarts: 1})
			}
		}
	}
	if bud.replays > 0 && len(busy) == 0 && len(s.log) > 0 {
		add(Event{Kind: EventReplay}, exploreBudget{replays: 1})
	}
	if bud.prunes > 0 {
		add(Event{Kind: EventPrune}, exploreBudget{prunes: 1})
	}
	for _, t := range x.b.Advance {
		if s.now+t <= x.b.MaxClock {
			add(Event{Kind: EventAdvance, N: t}, exploreBudget{})
		}
	}
	return out
}

// faultVariants adds the faulty forms of an atomic delivery: a lost ack,
// and (when crashes are not already stepped one by one) a crash after each
// statement and before the ack.
func (x *explorer) faultVariants(s *sim, bud exploreBudget, kind, id, w string, cost exploreBudget, add func(Event, exploreBudget), crashes bool) {
	if bud.lostAcks > 0 {
		c := cost
		c.lostAcks++
		add(Event{Kind: kind, Message: id, Worker: w, Fault: FaultLoseAck}, c)
	}
	if bud.crashes == 0 || !crashes && x.b.Interleave {
		return
	}
	c := cost
	c.crashes++
	stmts, _ := x.h.statementsFor(s.msgs[id].m.Kind)
	for n := 1; n < len(stmts); n++ {
		add(Event{Kind: kind, Message: id, Worker: w, Fault: FaultCrashAfter, FaultAfter: n}, c)
	}
	add(Event{Kind: kind, Message: id, Worker: w, Fault: FaultCrashBeforeAck}, c)
}

// key hashes everything that decides a run's future and its invariants: the
// clock, the broker (per message: deliveries, ack, lease, whether it was
// delivered; the log), each worker (message in hand and where it is in the
// handler, transaction, uncommitted rows, lock wait, in-process filter), the
// committed rows (by value: rowids do not matter to a handler). The budget
// left is not part of it: visit compares budgets instead, so that a state
// reached again with more of some budget left is expanded again.
func (x *explorer) key(s *sim, bud exploreBudget) exploreKey {
	var b bytes.Buffer
	num := func(n int64) { b.WriteString(strconv.FormatInt(n, 10)); b.WriteByte(',') }
	str := func(v string) { b.WriteString(strconv.Quote(v)); b.WriteByte(',') }
	flag := func(v bool) {
		if v {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	num(s.now)
	b.WriteString("|msgs:")
	for i := range s.sc.Messages {
		m := s.msgs[s.sc.Messages[i].ID]
		num(int64(m.deliveries))
		num(m.leaseEnd)
		flag(m.acked)
		flag(s.delivered[m.m.ID])
	}
	b.WriteString("|log:")
	for _, id := range s.log {
		str(id)
	}
	blocked := []*worker{}
	for _, w := range s.workers {
		if w.blockedAt > 0 {
			blocked = append(blocked, w)
		}
	}
	sort.Slice(blocked, func(i, j int) bool { return blocked[i].blockedAt < blocked[j].blockedAt })
	for _, w := range s.workers {
		b.WriteString("|w:")
		str(w.name)
		ids := make([]string, 0, len(w.filter))
		for id := range w.filter {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			str(id)
		}
		for rank, o := range blocked {
			if o == w {
				num(int64(rank + 1))
			}
		}
		if j := w.job; j != nil {
			b.WriteString("job:")
			str(j.msg.m.ID)
			num(int64(j.pc))
			num(int64(j.executed))
			num(int64(j.txStart))
			str(j.fault)
			num(int64(j.faultAfter))
			num(j.leaseEnd)
			flag(j.leaseExpired)
			flag(j.filterDone)
		}
		if w.db != nil {
			flag(w.db.inTx)
			for _, ch := range w.db.pending {
				b.WriteString(ch.Table + ch.Op)
				b.WriteString(fmt.Sprint(ch.Before, ch.After))
			}
		}
	}
	for _, t := range tableOrder {
		b.WriteString("|" + t + ":")
		rows := s.l.committed[t]
		vals := make([]string, 0, len(rows))
		for _, v := range rows {
			vals = append(vals, fmt.Sprint(v...))
		}
		sort.Strings(vals)
		for _, v := range vals {
			str(v)
		}
	}
	h := fnv.New128a()
	h.Write(b.Bytes())
	var k exploreKey
	copy(k[:], h.Sum(nil))
	return k
}

// naiveCount counts the settled paths of the state graph from the root: the
// schedules an enumeration without pruning would check. Equal states have
// equal futures, so each node's count is computed once.
func (x *explorer) naiveCount() int64 {
	var count func(k exploreKey, left exploreBudget) int64
	count = func(k exploreKey, left exploreBudget) int64 {
		n := x.nodes[k]
		if n == nil || left.events == 0 {
			return 0
		}
		if p, ok := n.paths[left]; ok {
			return p
		}
		var p int64
		for _, e := range n.edges {
			if !left.covers(e.cost) {
				continue
			}
			if cn := x.nodes[e.to]; cn != nil && cn.settled {
				p++
			}
			p = min(p+count(e.to, left.minus(e.cost)), 1<<50)
		}
		if n.paths == nil {
			n.paths = map[exploreBudget]int64{}
		}
		n.paths[left] = p
		return p
	}
	return count(x.root, x.budget())
}

// evaluate runs a whole schedule on a fresh ledger and reports whether it
// is a real, settled schedule that breaks an invariant; s is returned for
// the story (the caller closes it).
func (x *explorer) evaluate(events []Event) (*sim, *exploreFailure, error) {
	s, err := x.newSim()
	if err != nil {
		return nil, nil, err
	}
	for _, ev := range events {
		ok, err := x.step(s, ev)
		if err == errExploreStop {
			x.refused = nil // a shrink candidate, not the schedule that was found
			err, ok = nil, false
		}
		if err != nil || !ok {
			x.release(s)
			return nil, nil, err
		}
	}
	if !x.settled(s) {
		x.release(s)
		return nil, nil, nil
	}
	inv, detail := exerciseInvariantBroken(x.invariants, x.sc, s.expected(), s.actual())
	if inv == "" {
		x.release(s)
		return nil, nil, nil
	}
	return s, &exploreFailure{events: events, invariant: inv, detail: detail}, nil
}

// shrinkBudget caps the runs spent on shrinking one counterexample.
const shrinkBudget = 400

// shrink makes the failing schedule minimal: it repeatedly tries, in a
// fixed order, to drop one event, to merge two steps of one worker, or to
// turn a started delivery into a whole one, and keeps the first change that
// still breaks an invariant, until no change does.
func (x *explorer) shrink(f *exploreFailure) (*exploreFailure, error) {
	runs := 0
	for {
		improved := false
		for _, cand := range x.shrinkCandidates(f.events) {
			if runs >= shrinkBudget {
				return f, nil
			}
			runs++
			s, nf, err := x.evaluate(cand)
			if err != nil {
				return nil, err
			}
			if nf != nil {
				x.release(s)
				f, improved = nf, true
				break
			}
		}
		if !improved {
			return f, nil
		}
	}
}

// scheduleRank orders schedules for shrinking: fewer events first, then
// plainer ones (deliver before redeliver before publish), then the earlier
// messages and workers of the scenario, so that the counterexample reads
// "msg-1 to A" when that shows the failure as well.
func (x *explorer) scheduleRank(evs []Event) [4]int {
	r := [4]int{len(evs)}
	for _, e := range evs {
		switch e.Kind {
		case EventRedeliver:
			r[1]++
		case EventPublish:
			r[1] += 2
		}
		for i, m := range x.sc.Messages {
			if m.ID == e.Message {
				r[2] += i
			}
		}
		for i, w := range x.sc.Workers {
			if w == e.Worker {
				r[3] += i
			}
		}
	}
	return r
}

func rankLess(a, b [4]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// shrinkCandidates lists the schedules one change away from evs that rank
// lower, lowest first.
func (x *explorer) shrinkCandidates(evs []Event) [][]Event {
	out := shrinkEdits(evs)
	used := map[string]bool{}
	for _, e := range evs {
		used[e.Message] = true
		used[e.Worker] = true
	}
	rename := func(from, to string, worker bool) []Event {
		c := append([]Event(nil), evs...)
		for i := range c {
			if worker && c[i].Worker == from {
				c[i].Worker = to
			}
			if !worker && c[i].Message == from {
				c[i].Message = to
			}
		}
		return c
	}
	for _, m := range x.msgs {
		for _, to := range x.msgs {
			if used[m] && !used[to] && to < m {
				out = append(out, rename(m, to, false))
			}
		}
	}
	for _, w := range x.workers {
		for _, to := range x.workers {
			if used[w] && !used[to] && to < w {
				out = append(out, rename(w, to, true))
			}
		}
	}
	// A message's first appearance reads best as a plain deliver.
	seen := map[string]bool{}
	for i, e := range evs {
		if !seen[e.Message] && (e.Kind == EventPublish || e.Kind == EventRedeliver) {
			c := append([]Event(nil), evs...)
			c[i].Kind = EventDeliver
			out = append(out, c)
		}
		seen[e.Message] = true
	}
	cur := x.scheduleRank(evs)
	kept := out[:0]
	for _, c := range out {
		if rankLess(x.scheduleRank(c), cur) {
			kept = append(kept, c)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return rankLess(x.scheduleRank(kept[i]), x.scheduleRank(kept[j])) })
	return kept
}

// shrinkEdits lists the schedules with one event dropped, two steps (or
// two clock jumps) merged, or a started delivery made whole.
func shrinkEdits(evs []Event) [][]Event {
	var out [][]Event
	without := func(i, n int) []Event {
		c := make([]Event, 0, len(evs)-n)
		c = append(c, evs[:i]...)
		return append(c, evs[i+n:]...)
	}
	for i := range evs {
		out = append(out, without(i, 1))
	}
	for i := 0; i+1 < len(evs); i++ {
		a, b := evs[i], evs[i+1]
		if a.Kind == EventStep && b.Kind == EventStep && a.Worker == b.Worker {
			c := without(i, 1)
			c[i].N = max(a.N, 1) + max(b.N, 1)
			out = append(out, c)
		}
		if a.Kind == EventAdvance && b.Kind == EventAdvance {
			c := without(i, 1)
			c[i].N = a.N + b.N
			out = append(out, c)
		}
	}
	// start M on W followed (anywhere later) by W's steps up to its finish:
	// a whole delivery instead.
	for i, a := range evs {
		if a.Kind != EventStart {
			continue
		}
		c := make([]Event, 0, len(evs))
		c = append(c, evs[:i]...)
		c = append(c, Event{Kind: EventDeliver, Message: a.Message, Worker: a.Worker})
		for _, e := range evs[i+1:] {
			if e.Worker == a.Worker && (e.Kind == EventStep || e.Kind == EventFinish) {
				continue
			}
			c = append(c, e)
		}
		out = append(out, c)
	}
	return out
}

// counterexample shrinks the failure and tells it.
func (x *explorer) counterexample(source string) (*Counterexample, error) {
	f, err := x.shrink(x.failure)
	if err != nil {
		return nil, err
	}
	s, nf, err := x.evaluate(f.events)
	if err != nil {
		return nil, err
	}
	if nf == nil {
		return nil, fmt.Errorf("explore: the counterexample did not reproduce")
	}
	defer x.release(s)
	script := (&Script{Events: f.events}).String()
	q := url.Values{"scenario": {x.sc.Name}, "script": {script}, CustomQueryKey: {source}}
	ce := &Counterexample{
		Scenario: x.sc.Name, Script: script, Events: len(f.events),
		Invariant: nf.invariant, Violation: nf.detail,
		Story: exploreStory(s, f.events) + x.deadLetters(s) + " → " + nf.detail,
		Query: q.Encode(),
	}
	for _, st := range s.steps {
		if st.Kind == StepSQL && st.Error != "" {
			ce.SQLError = &HandlerError{Line: st.Line, Message: cleanSQLError(st.Error)}
			break
		}
	}
	return ce, nil
}

// deadLetters tells which messages the broker gave up on.
func (x *explorer) deadLetters(s *sim) string {
	var out string
	for _, id := range x.msgs {
		if m := s.msgs[id]; !m.acked && m.deliveries >= s.sc.Settings.MaxDeliveries {
			out += fmt.Sprintf("; after %d deliveries %s goes to the dead-letter queue", m.deliveries, id)
		}
	}
	return out
}

// exploreStory tells a schedule in one line from what the run did.
func exploreStory(s *sim, events []Event) string {
	parts := make([]string, 0, len(events))
	sent := map[string]bool{}
	for i, ev := range events {
		var steps []Step
		for _, st := range s.steps {
			if st.Event == i+1 {
				steps = append(steps, st)
			}
		}
		worker, copyNote := ev.Worker, false
		for _, st := range steps {
			if st.Kind == StepDeliver {
				worker, copyNote = st.Worker, strings.Contains(st.Note, "second copy")
				break
			}
		}
		var p string
		switch ev.Kind {
		case EventDeliver:
			p = "deliver " + ev.Message + " to " + worker
			if copyNote {
				p = "the broker hands a second copy of " + ev.Message + " to " + worker
			}
		case EventRedeliver:
			p = "redeliver " + ev.Message + " to " + worker
		case EventPublish:
			p = "the producer sends " + ev.Message + " again, to " + worker
			if !sent[ev.Message] {
				p = "the producer sends " + ev.Message + " to " + worker
			}
		case EventStart:
			p = worker + " receives " + ev.Message
			if copyNote {
				p = worker + " receives a second copy of " + ev.Message
			}
		case EventStep:
			p = stepStory(ev.Worker, steps)
		case EventFinish:
			p = ev.Worker + " runs to the end"
		case EventCrash:
			p = ev.Worker + " crashes"
		case EventExpire:
			p = ev.Message + "'s lease runs out"
		case EventRestart:
			p = ev.Worker + " restarts"
		case EventReplay:
			p = "the topic is replayed from offset 0"
		case EventPrune:
			p = "the janitor prunes the dedupe table"
		case EventAdvance:
			p = fmt.Sprintf("%d %ss pass", ev.N, s.sc.TickUnit)
		default:
			p = ev.String()
		}
		switch ev.Fault {
		case FaultLoseAck:
			p += "; " + worker + "'s ack is lost"
		case FaultCrashBeforeAck:
			p += "; " + worker + " crashes before acking"
		case FaultCrashAfter:
			p += fmt.Sprintf("; %s crashes after step %d", worker, ev.FaultAfter)
		}
		parts = append(parts, p)
		if ev.Message != "" {
			sent[ev.Message] = true
		}
	}
	return strings.Join(parts, "; ")
}

func stepStory(w string, steps []Step) string {
	var lines, then []string
	for _, st := range steps {
		switch st.Kind {
		case StepSQL:
			l := strconv.Itoa(st.Line)
			if st.Error != "" {
				l += ", which fails (" + cleanSQLError(st.Error) + ")"
			}
			lines = append(lines, l)
		case StepBlocked:
			then = append(then, "waits for a lock")
		case StepAck:
			then = append(then, "acks")
		case StepAckRefused:
			then = append(then, "acks too late: the broker refuses it")
		case StepStop:
			then = append(then, "stops")
		}
	}
	var parts []string
	switch len(lines) {
	case 0:
	case 1:
		parts = append(parts, "runs line "+lines[0])
	default:
		parts = append(parts, "runs lines "+joinAnd(lines))
	}
	parts = append(parts, then...)
	if len(parts) == 0 {
		return w + " steps"
	}
	return w + " " + strings.Join(parts, ", then ")
}

func joinAnd(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// cleanSQLError drops the driver's prefix and result code from an error:
// "constraint failed: UNIQUE constraint failed: t.c (1555)" → "UNIQUE constraint failed: t.c".
func cleanSQLError(msg string) string {
	if i := strings.LastIndex(msg, " ("); i > 0 && strings.HasSuffix(msg, ")") {
		if _, err := strconv.Atoi(msg[i+2 : len(msg)-1]); err == nil {
			msg = msg[:i]
		}
	}
	for _, p := range []string{"constraint failed: ", "SQL logic error: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// exploreSnapshot is a run's state at a node where no worker holds a
// message: the ledger's pages in a memdb of their own, and the Go state.
type exploreSnapshot struct {
	keep      driver.Conn // keeps the snapshot memdb alive
	uri       string
	committed tableState
	now       int64
	event     int
	blockSeq  int
	log       []string
	delivered map[string]bool
	effects   map[string][]int
	msgs      map[string]msgState
	filters   map[string]map[string]bool
	steps     []Step
}

// snapshot copies a quiescent run; it returns nil when a worker is busy or
// a transaction is open, or when the copy fails (the caller replays).
func (x *explorer) snapshot(s *sim) *exploreSnapshot {
	for _, w := range s.workers {
		if w.job != nil || w.blockedAt > 0 {
			return nil
		}
	}
	for _, c := range s.l.conns {
		if c.inTx || len(c.pending) > 0 {
			return nil
		}
	}
	uri := memdbURI("snapshot")
	keep, err := sqliteDriver.Open(uri)
	if err != nil {
		return nil
	}
	raw := s.l.pinned.conn
	if sc, ok := raw.(*sandboxConn); ok {
		raw = sc.Conn
	}
	bc, ok := raw.(interface {
		NewBackup(string) (*sqlite.Backup, error)
	})
	if !ok {
		keep.Close()
		return nil
	}
	b, err := bc.NewBackup(uri)
	if err == nil {
		_, err = b.Step(-1)
		if ferr := b.Finish(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		keep.Close()
		return nil
	}
	snap := &exploreSnapshot{keep: keep, uri: uri, committed: s.l.committed.clone(),
		now: s.now, event: s.event, blockSeq: s.blockSeq, log: append([]string(nil), s.log...),
		delivered: map[string]bool{}, effects: map[string][]int{}, msgs: map[string]msgState{},
		filters: map[string]map[string]bool{}, steps: s.steps[:len(s.steps):len(s.steps)]}
	for k, v := range s.delivered {
		snap.delivered[k] = v
	}
	for k, v := range s.effects {
		snap.effects[k] = append([]int(nil), v...)
	}
	for k, m := range s.msgs {
		snap.msgs[k] = *m
	}
	for _, w := range s.workers {
		f := make(map[string]bool, len(w.filter))
		for id := range w.filter {
			f[id] = true
		}
		snap.filters[w.name] = f
	}
	return snap
}

func (snap *exploreSnapshot) close() {
	if snap != nil {
		snap.keep.Close()
	}
}

// restore rebuilds the run at the snapshot on the spare ledger (or a new
// one); nil when that fails (the caller replays).
func (x *explorer) restore(snap *exploreSnapshot) *sim {
	l := x.spare
	x.spare = nil
	if l == nil {
		s, err := x.newSim()
		if err != nil {
			return nil
		}
		x.runs-- // counted below
		l = s.l
	}
	x.runs++
	for _, c := range l.conns {
		if c.inTx || len(c.pending) > 0 {
			execRaw(c.conn, "ROLLBACK")
		}
		c.inTx, c.pending, c.stmt, c.message = false, nil, c.stmt[:0], ""
	}
	raw := l.pinned.conn
	if sc, ok := raw.(*sandboxConn); ok {
		raw = sc.Conn
	}
	b, err := raw.(restoreConn).NewRestore(snap.uri)
	if err == nil {
		_, err = b.Step(-1)
		if ferr := b.Finish(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		l.close()
		return nil
	}
	l.committed = snap.committed.clone()
	s := newSim(x.ctx, x.sc, x.h, l)
	for _, c := range l.conns {
		if w := s.byName[c.name]; w != nil {
			w.db = c
		}
	}
	s.now, s.event, s.blockSeq = snap.now, snap.event, snap.blockSeq
	s.log = append([]string(nil), snap.log...)
	s.steps = snap.steps
	for k, v := range snap.delivered {
		s.delivered[k] = v
	}
	for k, v := range snap.effects {
		s.effects[k] = append([]int(nil), v...)
	}
	for k, m := range snap.msgs {
		*s.msgs[k] = m
	}
	for _, w := range s.workers {
		for id := range snap.filters[w.name] {
			w.filter[id] = true
		}
	}
	return s
}
