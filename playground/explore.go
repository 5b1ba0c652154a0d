package playground

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// explorer enumerates the schedules of one scenario depth first. A schedule
// is re-executed from a fresh ledger whenever the search backtracks (SQLite
// transactions in flight cannot be copied), and a state already reached is
// not expanded again: its future is the same.
type explorer struct {
	ctx        context.Context
	sc         *Scenario
	tmpl       *ledgerImage
	h          *Handler
	b          ExploreBounds
	invariants []string
	prune      bool
	msgs       []string // message ids in scope, scenario order
	workers    []string // worker names in scope
	// lg is the database runs use: SQLite (the zero Ledger), or PostgreSQL
	// sessions stepped as the PostgreSQL playground steps them
	// (explore_pg.go).
	lg Ledger
	// frontierDepth, when set, stops the search at schedules of that many
	// events and hands each new state there to frontier instead of
	// expanding it: the PostgreSQL check explores those subtrees in
	// parallel (explore_pg.go).
	frontierDepth int
	frontier      func(exploreItem)
	// shared, with index, lets the subtrees of a parallel search skip the
	// states a lower-numbered subtree explores (explore_pg.go).
	shared *exploreShared
	index  int
	marks  map[*sim]pgQuietMark // each live PostgreSQL run's last quiet state (explore_pg.go)
	quiet  []pgQuietState       // the quiet states on the path being explored, deepest last (explore_pg_replay.go)

	// fresh runs every schedule on a new ledger, from its first event: no
	// snapshot, no reused ledger. Each state is then a fresh replay's by
	// construction; the check falls back to it if a counterexample found
	// the quick way does not reproduce (checkBounds).
	fresh bool
	// shrinking: evaluate refuses schedules beyond the bounds (outOfBounds).
	shrinking bool
	// onState, when set (tests), is shown every state the search reaches,
	// with the schedule that reached it.
	onState func(path []Event, s *sim)

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
	if x.lg.Postgres != nil {
		return x.pgNewSim(x.tmpl)
	}
	if x.fresh {
		return exploreNewSim(x.ctx, x.sc, x.tmpl, x.h)
	}
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
	if s.l.pg != nil {
		delete(x.marks, s)
		s.l.pg.holdsNothing = nil
		s.l.pg.release()
		return
	}
	if x.spare == nil && !x.fresh {
		x.spare = s.l
		return
	}
	releaseLedger(s.l, true)
}

// reuse resets a released ledger to the scenario's initial rows, keeping
// its (sandboxed) connections, and starts a run over it.
func (x *explorer) reuse(l *ledger) (*sim, error) {
	if err := l.resetRows(x.tmpl); err != nil {
		return nil, err
	}
	return x.resume(l), nil
}

// resume starts a run over a reset ledger whose worker connections are
// open already.
func (x *explorer) resume(l *ledger) *sim {
	s := newSim(x.ctx, x.sc, x.h, l)
	for _, w := range s.workers {
		if c := l.openedConn(w.name); c != nil {
			w.db = c
		}
	}
	return s
}

// exploreNewSim opens a fresh sandboxed ledger and a run over it.
func exploreNewSim(ctx context.Context, sc *Scenario, tmpl *ledgerImage, h *Handler) (*sim, error) {
	l, err := acquireLedger(tmpl, true)
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
	x.pgMark(s)
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
	s, from := x.pgReplayFrom(events)
	if s == nil {
		var err error
		if s, err = x.newSim(); err != nil {
			return nil, err
		}
	}
	for _, ev := range events[from:] {
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
	err = x.visit(nil, s, bud, x.root, x.nodes[x.root])
	if err == errExploreStop {
		return nil
	}
	return err
}

// visit expands the node at (reached by path); s is a live run at that
// node (or nil) and is consumed.
func (x *explorer) visit(path []Event, s *sim, bud exploreBudget, at exploreKey, node *exploreNode) error {
	defer func() {
		if s != nil {
			x.release(s)
		}
	}()
	x.expand(node, at, bud)
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
	if len(actions) > 1 || x.lg.Postgres != nil {
		snap = x.snapshot(s)
		defer snap.close()
	}
	if snap != nil && x.lg.Postgres != nil {
		x.quiet = append(x.quiet, pgQuietState{path: path, snap: snap})
		defer func() { x.quiet = x.quiet[:len(x.quiet)-1] }()
	}
	for _, a := range actions {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		if x.frontier != nil && len(path) == 0 && x.mirrored([]Event{a.ev}) {
			continue // left out of a parallel search (explore_pg.go)
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
		if x.onState != nil {
			x.onState(child, s)
		}
		nb := bud.minus(a.cost)
		k := x.childKey(s, nb, at, a.ev)
		node.addEdge(exploreEdge{event: a.ev.String(), cost: a.cost, to: k})
		cn, seen, covered := x.enter(s, k, nb)
		if covered {
			x.release(s)
			s = nil
			continue
		}
		if !seen || !x.prune {
			if cn.settled {
				x.schedules++
			}
			if inv, detail := x.judge(child, s, cn.settled); inv != "" {
				x.failure = &exploreFailure{events: child, invariant: inv, detail: detail}
				x.release(s)
				s = nil
				return errExploreStop
			}
		}
		live := s
		s = nil
		if x.frontier != nil && len(child) == x.frontierDepth {
			x.expand(cn, k, nb)
			x.release(live)
			x.frontier(exploreItem{path: child, bud: nb, key: k})
			continue
		}
		if err := x.visit(child, live, nb, k, cn); err != nil {
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
		for _, c := range s.msgs[id].copies {
			if c.deliveries > 0 && c.owed() && c.deliveries < s.sc.Settings.MaxDeliveries {
				return false
			}
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
		if pgStillWaits(w) {
			// Stepping it would only say it still waits: the same state.
			add(Event{Kind: EventFinish, Worker: w.name}, exploreBudget{})
			continue
		}
		add(Event{Kind: EventStep, Worker: w.name, N: invisibleRun(w)}, exploreBudget{})
		if w.blockedAt > 0 {
			// Every choice may wait on a lock: finish lets the scheduler
			// decide.
			add(Event{Kind: EventFinish, Worker: w.name}, exploreBudget{})
		}
	}
	for _, id := range x.msgs {
		m := s.msgs[id]
		c := s.target(m) // the copy deliver and redeliver act on
		if len(m.copies) > 0 && (c == nil || c.deliveries >= s.sc.Settings.MaxDeliveries) {
			continue
		}
		var holder *worker
		leaseLive := false
		if c != nil {
			holder, leaseLive = s.holder(c), c.deliveries > 0 && c.leaseEnd > s.now
		}
		kind, cost := EventRedeliver, exploreBudget{}
		switch {
		case c == nil:
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
			for _, c := range s.leased(s.msgs[id]) {
				if c.leaseEnd > s.now && s.holder(c) != nil {
					add(Event{Kind: EventExpire, Message: id}, exploreBudget{expiries: 1})
					break
				}
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
	if bud.replays > 0 && len(busy) == 0 && len(s.log) > 0 && (x.b.ReplayWindow == 0 || s.now <= x.b.ReplayWindow) {
		add(Event{Kind: EventReplay}, exploreBudget{replays: 1})
	}
	if bud.prunes > 0 {
		add(Event{Kind: EventPrune}, exploreBudget{prunes: 1})
	}
	// The clock jumps between deliveries, not under a running handler: a
	// handler takes seconds, the jumps are hours or days (a lease that runs
	// out under a slow handler is an expiry, not a jump). Nor while the
	// broker owes a copy: it redelivers within a lease, so a copy comes
	// back days later only as a retry (publish) or a replay, each within
	// its window.
	for _, t := range x.b.Advance {
		if s.now+t <= x.b.MaxClock && len(busy) == 0 && !x.owesACopy(s) {
			add(Event{Kind: EventAdvance, N: t}, exploreBudget{})
		}
	}
	return out
}

// owesACopy: a copy of a message in scope was delivered and is neither
// acked nor dead-lettered.
func (x *explorer) owesACopy(s *sim) bool {
	for _, id := range x.msgs {
		for _, c := range s.msgs[id].copies {
			if c.deliveries > 0 && c.owed() {
				return true
			}
		}
	}
	return false
}

// invisibleRun is how many steps the explorer's next "step W" runs: one,
// plus the steps next to it that no other event can tell apart from
// running at once (a partial-order reduction). A deferred BEGIN takes no
// lock and reads nothing until the statement after it; a COMMIT or
// ROLLBACK of a transaction that wrote nothing only ends a snapshot,
// which in WAL mode no other connection waits on. Any event between such
// a step and the next one has the same outcome before it, and a crash
// right after it leaves the state a crash before it leaves; so the
// step runs together with the next one, and the schedules that differ only
// there are not enumerated twice. 0 means 1 (the script's "step W").
func invisibleRun(w *worker) int64 {
	j := w.job
	if w.blockedAt > 0 {
		return 0
	}
	n := int64(1)
	for pc := j.pc; pc < len(j.stmts); pc++ {
		st := j.stmts[pc]
		switch {
		case st.Verb == "BEGIN" && !st.Immediate:
		case pc == j.pc && isTxEnd(st.Verb) && w.db != nil && w.db.pg == nil && w.db.inTransaction() && !w.db.holdsWriteLock():
			// Not on PostgreSQL: a transaction that only read may hold
			// row locks (FOR UPDATE) or, under SERIALIZABLE, conflicts.
		default:
			pc = len(j.stmts)
			continue
		}
		n++
	}
	if n == 1 {
		return 0
	}
	return n
}

func isTxEnd(verb string) bool { return verb == "COMMIT" || verb == "END" || verb == "ROLLBACK" }

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
