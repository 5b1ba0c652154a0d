// Retry delays for a consumer that sets its own (an SQS consumer calling
// ChangeMessageVisibility when a message fails): exponential growth with
// a cap, jitter to break up waves of messages that failed together, and a
// budget that stops retrying once retries are too large a share of the
// calls made.
package main

import (
	"fmt"
	"math/rand/v2"
)

// delay is the wait before attempt n+1, after n failed attempts: base
// doubled n-1 times, never above limit.
func delay(n int, base, limit int64) int64 {
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// fullJitter waits anywhere from zero to the computed delay.
func fullJitter(r *rand.Rand, d int64) int64 { return r.Int64N(d + 1) }

// equalJitter keeps half of the delay and draws the other half.
func equalJitter(r *rand.Rand, d int64) int64 { return d - d/2 + r.Int64N(d/2+1) }

// budget lets retries through while they stay under a share of all calls
// (a client-side retry budget: first attempts always go out).
type budget struct {
	calls, retries int
	share          float64
}

func (b *budget) allow(retry bool) bool {
	if retry && float64(b.retries+1) > b.share*float64(b.calls+1) {
		return false
	}
	b.calls++
	if retry {
		b.retries++
	}
	return true
}

func main() {
	const base, limit = 2, 60 // seconds
	fmt.Println("failures  delay  full jitter  equal jitter")
	r := rand.New(rand.NewPCG(7, 7))
	for n := 1; n <= 7; n++ {
		d := delay(n, base, limit)
		fmt.Printf("%8d  %4ds  %10ds  %11ds\n", n, d, fullJitter(r, d), equalJitter(r, d))
	}

	// Ten messages fail together at second 0. Without jitter their first
	// retries land in one second; with full jitter they spread out.
	together, spread := map[int64]int{}, map[int64]bool{}
	for range 10 {
		together[delay(1, 8, limit)]++
		spread[fullJitter(r, delay(1, 8, limit))] = true
	}
	fmt.Printf("10 retries after 8s: %d in one second without jitter, spread over %d seconds with it\n", together[8], len(spread))

	// A downstream fails every call; each of 100 messages would retry 4
	// times. A budget of 10% lets the first attempts through and only
	// a few retries.
	b := &budget{share: 0.10}
	sent := 0
	for range 100 {
		for attempt := 0; attempt < 5; attempt++ {
			if b.allow(attempt > 0) {
				sent++
			} else {
				break
			}
		}
	}
	fmt.Printf("calls without a budget: %d; with a 10%% retry budget: %d (%d retries)\n", 100*5, sent, b.retries)
}

// Output:
// failures  delay  full jitter  equal jitter
//        1     2s           2s            1s
//        2     4s           3s            2s
//        3     8s           2s            5s
//        4    16s          13s            9s
//        5    32s          14s           25s
//        6    60s          31s           40s
//        7    60s          11s           44s
// 10 retries after 8s: 10 in one second without jitter, spread over 7 seconds with it
// calls without a budget: 500; with a 10% retry budget: 111 (11 retries)
