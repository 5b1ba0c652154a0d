// A memory of recent ids, consulted before the database is asked. When it
// remembers an id, the copy is dropped without a round trip; when it does not,
// that proves nothing, and the dedupe table's unique key gives the answer.
package main

import (
	"errors"
	"fmt"
	"sync"
)

// filter remembers message ids this process has applied and committed.
type filter interface {
	seen(id string) bool
	remember(id string)
}

// mutexFilter is a map guarded by a mutex, bounded: when full, it forgets the
// oldest id. Forgetting is safe, because the database check is still there.
type mutexFilter struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string // insertion order, for eviction
	limit int
}

func newMutexFilter(limit int) *mutexFilter {
	return &mutexFilter{ids: make(map[string]bool), limit: limit}
}

func (f *mutexFilter) seen(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids[id]
}

func (f *mutexFilter) remember(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids[id] {
		return
	}
	if len(f.order) == f.limit {
		delete(f.ids, f.order[0])
		f.order = f.order[1:]
	}
	f.ids[id] = true
	f.order = append(f.order, id)
}

// syncMapFilter is the unbounded alternative: sync.Map is safe for concurrent
// use and suits a set that is written once per key and read many times.
type syncMapFilter struct{ ids sync.Map }

func (f *syncMapFilter) seen(id string) bool { _, ok := f.ids.Load(id); return ok }
func (f *syncMapFilter) remember(id string)  { f.ids.Store(id, struct{}{}) }

// database stands in for the real dedupe table: claim is the
// INSERT … ON CONFLICT DO NOTHING, and it is the only thing that decides.
type database struct {
	mu         sync.Mutex
	processed  map[string]bool
	effects    int
	roundTrips int
	failNext   bool // the next transaction fails and rolls back
}

var errRolledBack = errors.New("transaction rolled back")

func (db *database) applyOnce(id string) (applied bool, err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.roundTrips++
	if db.failNext {
		db.failNext = false
		return false, errRolledBack // neither the row nor the effect is written
	}
	if db.processed[id] {
		return false, nil
	}
	db.processed[id] = true
	db.effects++
	return true, nil
}

// handle is the consumer: the filter first, then the database, and the id is
// remembered only after the database has committed.
func handle(f filter, db *database, id string) error {
	if f.seen(id) {
		return nil // a duplicate this process already committed: ack
	}
	if _, err := db.applyOnce(id); err != nil {
		return err // not acked: the broker will redeliver
	}
	f.remember(id)
	return nil
}

func run(name string, newFilter func() filter) {
	fmt.Println(name)
	db := &database{processed: make(map[string]bool)}
	f := newFilter()

	// 100 messages, each delivered 10 times, spread over 8 goroutines.
	var wg sync.WaitGroup
	deliveries := make(chan string)
	for range 8 {
		wg.Go(func() {
			for id := range deliveries {
				if err := handle(f, db, id); err != nil {
					panic(err)
				}
			}
		})
	}
	for range 10 {
		for n := range 100 {
			deliveries <- fmt.Sprintf("msg-%d", n+1)
		}
	}
	close(deliveries)
	wg.Wait()
	fmt.Println("  1000 deliveries, effects applied:", db.effects)

	before := db.roundTrips
	for n := range 100 {
		handle(f, db, fmt.Sprintf("msg-%d", n+1))
	}
	fmt.Println("  100 more copies, database round trips:", db.roundTrips-before)

	f = newFilter() // the process restarts: the filter is empty
	before = db.roundTrips
	for n := range 100 {
		handle(f, db, fmt.Sprintf("msg-%d", n+1))
	}
	fmt.Println("  after a restart, round trips:", db.roundTrips-before, "effects:", db.effects)

	db.failNext = true
	err := handle(f, db, "msg-101")
	fmt.Println("  msg-101 first try:", err)
	handle(f, db, "msg-101") // the redelivery must not be stopped by the filter
	fmt.Println("  msg-101 redelivered, effects:", db.effects)
}

func main() {
	run("mutex-guarded map (bounded)", func() filter { return newMutexFilter(1000) })
	run("sync.Map", func() filter { return &syncMapFilter{} })
}

// Output:
// mutex-guarded map (bounded)
//   1000 deliveries, effects applied: 100
//   100 more copies, database round trips: 0
//   after a restart, round trips: 100 effects: 100
//   msg-101 first try: transaction rolled back
//   msg-101 redelivered, effects: 101
// sync.Map
//   1000 deliveries, effects applied: 100
//   100 more copies, database round trips: 0
//   after a restart, round trips: 100 effects: 100
//   msg-101 first try: transaction rolled back
//   msg-101 redelivered, effects: 101
