package playground

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Checking an exercise on PostgreSQL. The explorer (explore.go) is the
// same; what differs is where its runs happen and what it may assume:
//
//   - Runs are PostgreSQL ledgers from the server's pool (pgledger.go),
//     their workers real sessions stepped one statement at a time
//     (pgsession.go), exactly as the PostgreSQL playground steps them, so a
//     counterexample replays there to the same break.
//   - Equal states, equal futures, holds only where no transaction is open:
//     then PostgreSQL's state is its committed rows, which the key hashes.
//     With a transaction open, its snapshot, its row locks (FOR UPDATE) and
//     SERIALIZABLE's read dependencies depend on the order statements ran,
//     which no key of rows sees; so there a state's key adds to the usual
//     one (the run's own state, which the engine holds) what PostgreSQL
//     has seen since the last quiet state (childKey): that state's
//     committed rows, and every statement sent since, in order, with its
//     session, text, bound values and outcome. PostgreSQL's state is a
//     function of those: at a quiet state no snapshot, lock or read
//     dependency exists (the handler's only lock call,
//     pg_advisory_xact_lock, ends with its transaction), and a statement's
//     effect depends on its session, text and values, not on the
//     engine's clock, broker or which copy of a message is in hand. So
//     runs that reached equal rows by different paths (a crash or a
//     commit earlier, a copy acked or not), or that differ only in where
//     broker events fell (a lease that runs out, a copy handed out before
//     its first statement), meet again; the engine's side of the state is
//     in the usual key, whole. TestCheckOn_PostgresMergedMatchesUnmerged
//     compares this with a search that merges no state with a
//     transaction open (pgKeyPaths).
//   - A statement PostgreSQL has waiting on a lock is not stepped again
//     (it would only say it still waits); the scheduler may finish it.
//   - Only a BEGIN runs together with the step after it: on PostgreSQL the
//     COMMIT of a transaction that only read may release FOR UPDATE locks,
//     or decide a serialization failure.
//   - A snapshot at a quiet state is its committed rows; restoring one is
//     the ledger's reset with those rows (a fraction of a millisecond).
//   - The search runs in parallel: the first pgFrontierDepth events are
//     explored on one ledger, and each state reached there is the root of
//     a subtree explored on a ledger of its own, pgCheckParallel at a time
//     (one fewer while the sequential part runs: a subtree starts as soon
//     as it is met). Mirror images are left out (mirrored), from the
//     first event on. Unless the sequential part fails (its failure is the
//     answer, as when it ran alone), its subtrees decide.
//     Subtrees are numbered in the order the sequential search meets them,
//     and a subtree skips a state that a lower-numbered one has entered
//     with at least its budget (exploreShared), as the sequential search
//     skips a state it has seen. The answer stays deterministic: the
//     failure kept is the lowest-numbered failing subtree's (those after
//     it are cancelled, those before it finish), and it is the failure
//     that subtree finds alone. A state it skips is in the future of a
//     lower-numbered subtree, which would have failed first had that
//     future held a failure; so it skips only futures without one, and
//     meets its failure by the same path. A pass explores every state
//     within the bounds, whoever enters it, so its counts of states and
//     settled schedules are the same each time; the runs it takes, and
//     the counts of a failing check, depend on timing and are not given.

// pgFrontierDepth is how many events the sequential part of a PostgreSQL
// check explores before it hands subtrees out.
const pgFrontierDepth = 4

// pgCheckParallel is how many ledgers one PostgreSQL check uses at once:
// a run spends most of its time waiting for PostgreSQL (a round trip per
// statement, a deadlock check per lock wait), not on a core.
func pgCheckParallel(lg Ledger) int {
	if lg.Parallel > 0 {
		return min(lg.Parallel, lg.Postgres.Size())
	}
	return max(1, min(lg.Postgres.Size(), 8))
}

// exploreItem is a state at the frontier: the schedule that reaches it,
// the budget left there and its key.
type exploreItem struct {
	path []Event
	bud  exploreBudget
	key  exploreKey
}

// pgNewSim acquires a ledger from the pool reset to im and starts a run
// over it.
func (x *explorer) pgNewSim(im *ledgerImage) (*sim, error) {
	l, err := x.lg.acquire(x.ctx, im)
	if err != nil {
		return nil, err
	}
	if !x.pgLocks() {
		l.pg.holdsNothing = pgInsertHoldsNothing
	}
	s := newSim(x.ctx, x.sc, x.h, l)
	if err := sandboxWorkers(s); err != nil { // on PostgreSQL: the role's sessions
		l.pg.holdsNothing = nil
		l.pg.release()
		return nil, err
	}
	x.pgMark(s)
	return s, nil
}

// pgRestore starts a run over a ledger reset to a quiet state's rows; nil
// when that fails (the caller replays).
func (x *explorer) pgRestore(im *ledgerImage) *sim {
	s, err := x.pgNewSim(im)
	if err != nil {
		return nil
	}
	x.runs++
	return s
}

// image is a quiet ledger's state for a snapshot: its pages and rows on
// SQLite, its committed rows on PostgreSQL.
func (x *explorer) image(l *ledger) (*ledgerImage, error) {
	if l.pg != nil {
		return &ledgerImage{rows: l.committed.clone()}, nil
	}
	return l.image()
}

// childKey is the key of the state an event led to from the state at. On
// PostgreSQL with a transaction open, it adds what PostgreSQL has seen
// since the last quiet state (see the comment at the top of this file).
func (x *explorer) childKey(s *sim, bud exploreBudget, at exploreKey, ev Event) exploreKey {
	k := x.key(s, bud)
	if s.l.pg == nil || s.l.quiet() || x.pgRowsDecide(s) {
		return k
	}
	var b bytes.Buffer
	b.Write(k[:])
	if pgKeyPaths {
		b.Write(at[:])
		b.WriteString(ev.String())
		return hashKey(b.Bytes())
	}
	m, ok := x.marks[s]
	if !ok { // not reached: every run starts quiet
		m.state = at
	}
	b.Write(m.state[:])
	for _, st := range s.steps[m.steps:] {
		switch st.Kind {
		case StepSQL, StepBlocked, StepStop, StepCrash, StepRollback, StepAbort, StepPrune:
			fmt.Fprintf(&b, "%s|%s|%d|%q|%v|%s;", st.Kind, st.Worker, st.Line, st.SQL, pgArgValues(st.Args), st.Error)
		}
	}
	return hashKey(b.Bytes())
}

// pgKeyPaths keys every state with a transaction open by the path to it
// from the last quiet state (its parent's key and the event), so that no
// two such states merge: the search childKey's merging is compared with in
// tests.
var pgKeyPaths = false

// pgArgValues is a statement's bound values, in its parameters' order.
func pgArgValues(args []Arg) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// pgQuietMark is a PostgreSQL run's last quiet state: the key of
// PostgreSQL's state there (pgMark), and how many steps the run had then.
type pgQuietMark struct {
	state exploreKey
	steps int
}

// pgMark notes a PostgreSQL run's state as its last quiet one when
// PostgreSQL's state there is its rows: no transaction is open (then it is
// the committed rows), or pgRowsDecide (then it is the committed rows and
// each session's transaction and uncommitted changes). (Its descendants'
// keys then start from it, whichever way it was reached, so that they are
// the same for every path a parallel search takes to it.)
func (x *explorer) pgMark(s *sim) {
	if s.l.pg == nil || !s.l.quiet() && !x.pgRowsDecide(s) {
		return
	}
	if x.marks == nil {
		x.marks = map[*sim]pgQuietMark{}
	}
	var b bytes.Buffer
	writeRows(&b, s.l)
	conns := slices.SortedFunc(slices.Values(s.l.conns), func(a, b *dbConn) int { return strings.Compare(a.name, b.name) })
	for _, c := range conns {
		// No statement is in flight, so the session's status is settled.
		// An idle session is left out: the same whether a run opened it
		// (the janitor's) or a restored one did not.
		if st := c.pg.conn.TxStatus(); c.inTx || len(c.pending) > 0 || st != 'I' {
			b.WriteString("|" + c.name + ":")
			c.writeState(&b)
			b.WriteByte(st)
		}
	}
	x.marks[s] = pgQuietMark{state: hashKey(b.Bytes()), steps: len(s.steps)}
}

// pgStillWaits: the worker's statement is one PostgreSQL has waiting on a
// lock, and it still waits.
func pgStillWaits(w *worker) bool {
	if w.blockedAt == 0 || w.db == nil || w.db.pg == nil || w.db.pg.inflight == nil {
		return false
	}
	select {
	case <-w.db.pg.inflight.done:
		return false
	default:
		return true
	}
}

// sub is an explorer of its own for subtree number index: the same
// scenario, handler and bounds, its own states and counts, and its own
// context.
func (x *explorer) sub(ctx context.Context, shared *exploreShared, index int) *explorer {
	return &explorer{ctx: ctx, sc: x.sc, tmpl: x.tmpl, h: x.h, b: x.b, invariants: x.invariants, prune: x.prune,
		msgs: x.msgs, workers: x.workers, lg: x.lg, nodes: map[exploreKey]*exploreNode{}, shared: shared, index: index}
}

// exploreShared is what the subtrees of a parallel search know of each
// other: which states each has entered, with which budgets.
type exploreShared struct {
	mu       sync.Mutex
	expanded map[exploreKey][]ownedBudget
}

type ownedBudget struct {
	bud   exploreBudget
	owner int // the subtree's number
}

func (sh *exploreShared) expand(k exploreKey, bud exploreBudget, owner int) {
	sh.mu.Lock()
	sh.expanded[k] = append(sh.expanded[k], ownedBudget{bud, owner})
	sh.mu.Unlock()
}

// covered: a subtree numbered below index has entered k with at least
// the budget bud.
func (sh *exploreShared) covered(k exploreKey, bud exploreBudget, index int) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, e := range sh.expanded[k] {
		if e.owner < index && e.bud.covers(bud) {
			return true
		}
	}
	return false
}

// explore runs the search: on one SQLite ledger after another, or on
// PostgreSQL ledgers in parallel.
func (x *explorer) run() error {
	if x.lg.Postgres == nil {
		return x.explore()
	}
	var (
		mu      sync.Mutex
		handed  = sync.NewCond(&mu) // an item was handed out, or the last was
		items   []exploreItem
		ended   bool // the sequential part has handed out its last item
		subs    []*explorer
		errs    []error
		cancels []context.CancelFunc
		next    int
		stopAt  = math.MaxInt // the lowest subtree that ended the search
	)
	shared := &exploreShared{expanded: map[exploreKey][]ownedBudget{}}
	x.frontierDepth = pgFrontierDepth
	x.frontier = func(it exploreItem) {
		if x.mirrored(it.path) {
			return
		}
		mu.Lock()
		items = append(items, it)
		subs, errs, cancels = append(subs, nil), append(errs, nil), append(cancels, nil)
		handed.Broadcast()
		mu.Unlock()
	}
	// Subtrees start as soon as the sequential part hands them out: it
	// runs one statement at a time, and the others' ledgers would idle.
	// It keeps a ledger of its own meanwhile.
	var wg sync.WaitGroup
	for range max(1, pgCheckParallel(x.lg)-1) {
		wg.Go(func() {
			for {
				mu.Lock()
				for next >= len(items) && !ended {
					handed.Wait()
				}
				i := next
				if i >= len(items) || i >= stopAt {
					mu.Unlock()
					return
				}
				next++
				ctx, cancel := context.WithCancel(x.ctx)
				subs[i], cancels[i] = x.sub(ctx, shared, i), cancel
				sub, it := subs[i], items[i]
				mu.Unlock()
				sub.root = it.key
				sub.nodes[it.key] = &exploreNode{}
				err := sub.visit(it.path, nil, it.bud, it.key, sub.nodes[it.key])
				if err == errExploreStop {
					err = nil
				}
				mu.Lock()
				errs[i] = err
				if (err != nil || sub.failure != nil || sub.refused != nil) && i < stopAt {
					stopAt = i
					for j := i + 1; j < len(items); j++ {
						if cancels[j] != nil {
							cancels[j]()
						}
					}
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	err := x.explore()
	x.frontier = nil
	mu.Lock()
	ended = true
	if err != nil || x.failure != nil || x.refused != nil {
		// The sequential part's answer stands, as when it ran alone.
		stopAt = -1
		for _, cancel := range cancels {
			if cancel != nil {
				cancel()
			}
		}
	}
	handed.Broadcast()
	mu.Unlock()
	wg.Wait()
	if err != nil || x.failure != nil || x.refused != nil || len(items) == 0 {
		return err
	}
	for i := 0; i < len(items) && i <= stopAt; i++ {
		sub := subs[i]
		x.runs += sub.runs
		if x.firstError == nil {
			x.firstError = sub.firstError
		}
		x.merge(sub.nodes)
		if errs[i] != nil {
			return errs[i]
		}
		if sub.refused != nil {
			x.refused = sub.refused
			return nil
		}
		if sub.failure != nil {
			x.failure = sub.failure
			return nil
		}
	}
	x.schedules = 0 // each settled state once, whichever subtree met it
	for _, n := range x.nodes {
		if n.settled {
			x.schedules++
		}
	}
	return nil
}

// merge adds a subtree's states to the explorer's graph: equal keys are
// equal states, so their edges and expansions add up.
func (x *explorer) merge(nodes map[exploreKey]*exploreNode) {
	for k, n := range nodes {
		o, ok := x.nodes[k]
		if !ok {
			x.nodes[k] = n
			continue
		}
		for _, e := range n.edges {
			o.addEdge(e)
		}
		for _, b := range n.expanded {
			if !o.coveredBy(b) {
				o.addExpansion(b)
			}
		}
	}
}

// pgRowsDecide: at READ COMMITTED, with no statement in flight, and a
// handler that takes no lock of its own (FOR UPDATE or SHARE, LOCK, an
// advisory lock), an open transaction's future depends only on what the
// key hashes: its place in the handler and its uncommitted changes (whose
// rows it holds locked). Each statement reads the latest committed rows,
// so no snapshot outlives a statement, and READ COMMITTED tracks no read
// dependencies. Then equal keys are equal states there too.
func (x *explorer) pgRowsDecide(s *sim) bool {
	if x.lg.Isolation != IsolationReadCommitted || x.pgLocks() {
		return false
	}
	for _, c := range s.l.conns {
		if c.pg != nil && c.pg.inflight != nil {
			return false
		}
	}
	return true
}

// pgLocks: the handler takes a lock of its own beyond the rows it writes.
func (x *explorer) pgLocks() bool {
	for _, kind := range x.h.Kinds() {
		for _, st := range x.h.sections[kind] {
			words := pgWords(st.SQL)
			for i, w := range words {
				switch {
				case w == "LOCK" || strings.Contains(w, "ADVISORY"):
					return true
				case w == "FOR" && i+1 < len(words) && (words[i+1] == "UPDATE" || words[i+1] == "SHARE" || words[i+1] == "NO" || words[i+1] == "KEY"):
					return true
				}
			}
		}
	}
	return false
}

// cannotCloseADeadlock: PostgreSQL has sess waiting on a lock, and no
// other session can ever wait on sess, so it can be part of no deadlock
// and its deadlock check decides nothing: the scheduler need not give the
// check its time (pgDeadlockSettle) before it runs the others. Only the
// checker says so (holdsNothing), for its many runs; a playground run
// always waits.
func (pl *pgLedger) cannotCloseADeadlock(sess *pgSession) bool {
	return pl.holdsNothing != nil && pl.holdsNothing(sess)
}

// pgInsertHoldsNothing is holdsNothing for a handler that takes no lock of
// its own (pgLocks): the session's transaction has written nothing yet,
// and the statement that waits is an INSERT of one row of VALUES. Such an
// INSERT waits (on the transaction that inserted the same key) before its
// row is visible to anyone, and a statement of PostgreSQL's DML takes no
// table lock that another's DML waits for; the tables have no foreign keys
// whose checks would lock a row.
func pgInsertHoldsNothing(sess *pgSession) bool {
	for _, c := range sess.ledger.l.conns {
		if c.pg == sess && len(c.pending) > 0 {
			return false
		}
	}
	words := pgWords(sess.inflight.sql)
	if len(words) == 0 || words[0] != "INSERT" {
		return false
	}
	values, rows := false, 0
	for _, w := range words {
		switch w {
		case "SELECT", "WITH", "RETURNING":
			return false
		case "VALUES":
			values = true
		case "(":
			if values {
				rows++
			}
		}
	}
	return values && rows == 1
}

// mirrored: the schedule starts by handing a message to the second of two
// workers. Two workers are interchangeable (the handler cannot tell them
// apart, the scheduler has no other to choose), so it is the mirror of a
// schedule that starts with the first worker, with the same outcome: its
// subtree is left out.
func (x *explorer) mirrored(path []Event) bool {
	return len(x.workers) == 2 && len(path) > 0 && path[0].Worker == x.workers[1]
}
