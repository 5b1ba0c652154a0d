package playground

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
)

// Ledgers are reused, not rebuilt. A fresh ledger costs a file written to
// tmpfs, a connection per worker opened (each reading the schema on its
// first statement, a learner's also confined by the sandbox) and all of it
// closed and removed at the end: most of a run's CPU. A finished run's
// ledger instead goes back to a pool, one per scenario template (and per
// kind: plain connections for the engine's handlers, sandboxed ones for a
// learner's), returned to the template's rows by resetRows, with its
// connections open: their parsed schema, their sandbox and their prepared
// statements stay.
//
// resetRows is provably a fresh ledger, in everything the engine and a
// handler's SQL can observe (TestLedgerPool_ResetIsFresh compares it with
// a fresh ledger; TestLedgerPool_TracesMatchFresh compares traces):
//   - every connection's transaction is rolled back;
//   - if any connection committed anything since the last reset (the keeper
//     connection's data version, which SQLite changes on every commit:
//     keeper.dataVersion), every table the mirror saw change (every table
//     when it saw none) is emptied and refilled with the
//     template's rows at their rowids, in one transaction on the keeper:
//     same rows, rowids, values and storage classes (the schema has no
//     AUTOINCREMENT, so the next rowid is max(rowid)+1 as on a fresh
//     ledger, and there is no sqlite_sequence);
//   - the schema is never written, so the schema cookie stays (connections
//     keep their parsed schema);
//   - the file has the template's page count and no free pages, or the
//     ledger is not reused (a learner's handler that grew it would otherwise
//     leave a different room under the sandbox's page cap).
//
// A ledger whose run failed (budget, cancelled, an engine error) or whose
// pages were restored with the backup API (the checker's snapshots, which
// change the schema cookie) is closed, never pooled.

const (
	// poolMaxPerKey bounds the idle ledgers of one template and kind: about
	// the most one template needs at once (runs in flight × handlers).
	poolMaxPerKey = 8
	// poolMaxIdle bounds the idle ledgers of every template together.
	poolMaxIdle = 48
	// poolIdleAfter: a ledger idle this long is closed.
	poolIdleAfter = 20 * time.Second
)

type poolKey struct {
	tmpl      *ledgerImage
	sandboxed bool
}

// ledgerPool holds idle ledgers, most recently used last.
type ledgerPool struct {
	mu       sync.Mutex
	idle     map[poolKey][]*ledger
	count    int
	trimming bool // a trim is scheduled
}

var ledgers = &ledgerPool{idle: map[poolKey][]*ledger{}}

// poolOff turns reuse off: every ledger is fresh and closed after its run.
// Tests set it to compare fresh and reused ledgers.
var poolOff atomic.Bool

// ledgersReused counts the runs that got a ledger from the pool.
var ledgersReused atomic.Int64

// acquireLedger returns a ledger in im's state: an idle one from the pool,
// or a fresh one. sandboxed says which kind of connections its workers get
// (a learner's handler: sandboxedConn).
func acquireLedger(im *ledgerImage, sandboxed bool) (*ledger, error) {
	key := poolKey{im, sandboxed}
	if !poolOff.Load() {
		if l := ledgers.take(key); l != nil {
			openLedgers.Add(1)
			ledgersReused.Add(1)
			return l, nil
		}
	}
	l, err := openLedger(im)
	if err != nil {
		return nil, err
	}
	l.key = key
	return l, nil
}

// releaseLedger ends a run's use of l: reset and pooled when ok (the run
// ended normally) and the ledger can be reset, else closed.
func releaseLedger(l *ledger, ok bool) {
	if !ok || poolOff.Load() || l.key.tmpl == nil || l.restored {
		l.close()
		return
	}
	if err := l.resetRows(l.key.tmpl); err != nil {
		l.close()
		return
	}
	l.freeWorkers()
	openLedgers.Add(-1)
	l.idleSince = time.Now()
	if !ledgers.put(l) {
		l.shut()
	}
}

func (p *ledgerPool) take(key poolKey) *ledger {
	p.mu.Lock()
	defer p.mu.Unlock()
	stack := p.idle[key]
	if len(stack) == 0 {
		return nil
	}
	l := stack[len(stack)-1]
	stack[len(stack)-1] = nil
	p.idle[key] = stack[:len(stack)-1]
	p.count--
	return l
}

func (p *ledgerPool) put(l *ledger) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.count >= poolMaxIdle || len(p.idle[l.key]) >= poolMaxPerKey {
		return false
	}
	p.idle[l.key] = append(p.idle[l.key], l)
	p.count++
	if !p.trimming {
		p.trimming = true
		time.AfterFunc(poolIdleAfter, func() { p.trim(time.Now().Add(-poolIdleAfter)) })
	}
	return true
}

// trim closes the ledgers idle since before cutoff, and schedules the next
// trim while any are left.
func (p *ledgerPool) trim(cutoff time.Time) {
	var old []*ledger
	p.mu.Lock()
	for key, stack := range p.idle {
		n := 0 // the oldest are first
		for n < len(stack) && stack[n].idleSince.Before(cutoff) {
			n++
		}
		old = append(old, stack[:n]...)
		if n == len(stack) {
			delete(p.idle, key)
		} else {
			p.idle[key] = append(stack[:0], stack[n:]...)
		}
		p.count -= n
	}
	p.trimming = p.count > 0
	if p.trimming {
		time.AfterFunc(poolIdleAfter, func() { p.trim(time.Now().Add(-poolIdleAfter)) })
	}
	p.mu.Unlock()
	for _, l := range old {
		l.shut()
	}
}

// idleLedgers is how many ledgers the pool holds.
func (p *ledgerPool) idleLedgers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

// keeper is a ledger's own plain connection that resets it: it runs no
// handler and has no change hooks, and every commit since its last reset
// shows in its data version (dataVersion). Its statements are prepared once.
type keeper struct {
	conn                    driver.Conn
	begin, commit, rollback driver.Stmt
	pageCount, freePages    driver.Stmt
	deletes                 []driver.Stmt // per table, in tableOrder
	inserts                 []driver.Stmt
	version                 int64 // the data version after the last reset; -1: none yet
}

// errNotFresh: a ledger cannot be made to look fresh by a reset.
var errNotFresh = errors.New("ledger: the reset ledger differs from its template")

func (l *ledger) openKeeper() (*keeper, error) {
	c, err := sqliteDriver.Open(fileURI(l.path))
	if err != nil {
		return nil, err
	}
	k := &keeper{conn: c}
	prepare := func(q string) driver.Stmt {
		if err != nil {
			return nil
		}
		var s driver.Stmt
		s, err = c.Prepare(q)
		return s
	}
	k.begin, k.commit, k.rollback = prepare("BEGIN IMMEDIATE"), prepare("COMMIT"), prepare("ROLLBACK")
	// Two pragmas: one SELECT over both pragma functions costs five times more.
	k.pageCount, k.freePages = prepare("PRAGMA page_count"), prepare("PRAGMA freelist_count")
	for _, t := range tableOrder {
		cols := tableColumns[t]
		k.deletes = append(k.deletes, prepare("DELETE FROM "+t))
		k.inserts = append(k.inserts, prepare("INSERT INTO "+t+"(rowid, "+strings.Join(cols, ", ")+") VALUES (?"+strings.Repeat(", ?", len(cols))+")"))
	}
	if err != nil {
		k.close()
		return nil, err
	}
	return k, nil
}

// int reads a one-number statement.
func (k *keeper) int(s driver.Stmt) (int64, error) {
	rows, err := s.(driver.StmtQueryContext).QueryContext(context.Background(), nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var dest [1]driver.Value
	if err := rows.Next(dest[:]); err != nil {
		if err == io.EOF {
			err = errNotFresh
		}
		return 0, err
	}
	n, _ := dest[0].(int64)
	return n, nil
}

func (k *keeper) exec(s driver.Stmt, args []driver.NamedValue) error {
	_, err := s.(driver.StmtExecContext).ExecContext(context.Background(), args)
	return err
}

func (k *keeper) close() {
	for _, s := range append(append([]driver.Stmt{k.begin, k.commit, k.rollback, k.pageCount, k.freePages}, k.deletes...), k.inserts...) {
		if s != nil {
			s.Close()
		}
	}
	k.conn.Close()
}

// dataVersion is the keeper's pager's data version, which SQLite changes
// "whenever any change occurs to the corresponding database file, either
// through SQL statements on the same database connection or through
// transactions committed by separate database connections"
// (SQLITE_FCNTL_DATA_VERSION, https://www.sqlite.org/c3ref/c_fcntl_begin_atomic_write.html).
// The pager learns of another connection's commits when a transaction of
// its own begins: read it inside one. A file control, not a statement:
// PRAGMA data_version is prepared again at every run (SQLite expires a
// pragma's statement after it runs once).
func (k *keeper) dataVersion() (int64, error) {
	fc, ok := k.conn.(sqlite.FileControl)
	if !ok {
		return 0, fmt.Errorf("ledger: the sqlite connection has no file control")
	}
	v, err := fc.FileControlDataVersion("main")
	return int64(v), err
}

// reset returns the keeper's database to im's rows, in one transaction
// that holds the write lock (so no other connection is inside one that
// wrote): if any connection committed since the last reset (the keeper's
// data version changed), the tables in dirty (every table when dirty is
// empty: a commit the mirror did not see) are emptied and refilled with
// im's rows at their rowids, and the file must have im's page count and no
// free page.
func (k *keeper) reset(im *ledgerImage, dirty map[string]bool) (err error) {
	if err := k.exec(k.begin, nil); err != nil {
		return err
	}
	commit := false
	defer func() {
		if err == nil && commit {
			err = k.exec(k.commit, nil)
			if err == nil {
				// The keeper's own commit changed it too.
				k.version, err = k.dataVersion()
			}
		}
		if err != nil || !commit {
			k.exec(k.rollback, nil)
		}
	}()
	version, err := k.dataVersion()
	if err != nil || version == k.version {
		return err
	}
	for i, t := range tableOrder {
		if len(dirty) > 0 && !dirty[t] {
			continue
		}
		if err := k.exec(k.deletes[i], nil); err != nil {
			return err
		}
		rows := im.rows[t]
		ids := make([]int64, 0, len(rows))
		for id := range rows {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		args := make([]driver.NamedValue, len(tableColumns[t])+1)
		for _, id := range ids {
			args[0] = driver.NamedValue{Ordinal: 1, Value: id}
			for j, v := range rows[id] {
				args[j+1] = driver.NamedValue{Ordinal: j + 2, Value: v}
			}
			if err := k.exec(k.inserts[i], args); err != nil {
				return err
			}
		}
	}
	if pages, err := k.int(k.pageCount); err != nil || pages != im.pages {
		return errNotFresh
	}
	if free, err := k.int(k.freePages); err != nil || free != 0 {
		return errNotFresh
	}
	commit = true
	return nil
}

// resetRows puts a used ledger back to im's state, keeping its connections
// (see the comment at the top of this file for what makes it fresh).
func (l *ledger) resetRows(im *ledgerImage) error {
	for _, c := range l.conns {
		// A learner's connection is rolled back whatever the engine
		// believes of it (a transaction it did not see would keep a stale
		// snapshot into the next run); the engine's own handlers open
		// transactions only as the engine sees them.
		if c.stmts == nil || c.inTx || len(c.pending) > 0 {
			if err := execRaw(c.conn, "ROLLBACK"); err != nil && !strings.Contains(err.Error(), "no transaction is active") {
				return err
			}
		}
		c.setInTransaction(false, false)
		c.pending, c.stmt, c.message = nil, c.stmt[:0], ""
		c.commitSeen, c.rollbackSeen = false, false
	}
	l.onCommit = nil
	if l.keeper == nil {
		k, err := l.openKeeper()
		if err != nil {
			return err
		}
		l.keeper = k
		k.version = -1 // it has not seen the commits before it opened
	}
	if err := l.keeper.reset(im, l.dirty); err != nil {
		return err
	}
	clear(l.dirty)
	l.useRows(im)
	return nil
}

// freeWorkers makes every worker connection of a reset ledger free for the
// next run's workers, whatever their names were.
func (l *ledger) freeWorkers() {
	l.free = l.free[:0]
	for _, c := range l.conns {
		if c != l.janitor {
			c.name = ""
			l.free = append(l.free, c)
		}
	}
	l.claimed = true // the pinned connection is among the free ones
}

// takeFree returns a free worker connection of a reused ledger, or nil.
func (l *ledger) takeFree(name string) *dbConn {
	if len(l.free) == 0 {
		return nil
	}
	c := l.free[0]
	l.free = l.free[1:]
	c.name = name
	return c
}

// pageCountOf is a database image's page count: its size over the page
// size in its header (bytes 16 and 17; 1 means 65536).
func pageCountOf(image []byte) int64 {
	if len(image) < 100 {
		return 0
	}
	size := int64(binary.BigEndian.Uint16(image[16:18]))
	if size == 1 {
		size = 65536
	}
	return int64(len(image)) / size
}
