package playground

import "sync"

// pgChecksAtOnce is how many PostgreSQL checks a test runs at once. A
// check's runs mostly wait on PostgreSQL (a round trip per statement, a
// deadlock check per lock wait), and the sequential part of each (its
// first pgFrontierDepth events) uses one ledger: checks side by side keep
// the pool's ledgers and the cores busy. (t.Parallel would run
// GOMAXPROCS at a time: two on CI's machines.)
const pgChecksAtOnce = 4

// inParallel calls do(i) for every i below n, at most atOnce at a time,
// and returns when every call has.
func inParallel(n, atOnce int, do func(i int)) {
	sem := make(chan struct{}, atOnce)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			do(i)
		})
	}
	wg.Wait()
}
