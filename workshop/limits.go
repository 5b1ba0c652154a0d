package workshop

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Limits bound what one seat, one address and one room may make the
// server store, so that a flood from anyone with a join code costs little.
// Web answers ErrRateLimited with 429 and Retry-After, ErrRoomFull with 409.
type Limits struct {
	// EventsPerSecond and EventBurst: a seat's events (from its browser)
	// refill at this rate into a bucket of this size. A learner sends a
	// few events a minute; a page of playgrounds re-run after a chaos
	// push sends one per handler at once.
	EventsPerSecond float64
	EventBurst      float64
	// SeatsPerRoom: learners one room takes.
	SeatsPerRoom int
	// JoinsPerSecond and JoinBurst: new seats one address may take (a
	// class behind one NAT joins within its burst).
	JoinsPerSecond float64
	JoinBurst      float64
}

// DefaultLimits are the limits of NewService: a seat stores at most 3,600
// small events an hour (about 1 MB), a room 1,000 seats, an address 120
// seats at once and then one every 2 s.
func DefaultLimits() Limits {
	return Limits{EventsPerSecond: 1, EventBurst: 60, SeatsPerRoom: 1000, JoinsPerSecond: 0.5, JoinBurst: 120}
}

// ErrRateLimited: the seat or address has sent too much; a *RateError says
// when to try again.
var ErrRateLimited = errors.New("workshop: too many requests")

// ErrRoomFull: the room has all the seats it takes.
var ErrRoomFull = errors.New("workshop: the room is full")

// RateError is a refusal for sending too much: what was limited, and when
// the next one will be taken. errors.Is(err, ErrRateLimited) holds.
type RateError struct {
	What       string // "events from this seat", "joins from this address"
	RetryAfter time.Duration
}

func (e *RateError) Error() string {
	return fmt.Sprintf("workshop: too many %s; try again in %d s", e.What, e.RetrySeconds())
}

// Is makes errors.Is(err, ErrRateLimited) hold.
func (e *RateError) Is(target error) bool { return target == ErrRateLimited }

// RetrySeconds is RetryAfter in whole seconds, at least 1 (for Retry-After).
func (e *RateError) RetrySeconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// buckets are token buckets by key (a seat, an address). A bucket that has
// refilled is the same as none, so the full ones are forgotten when there
// are too many.
type buckets struct {
	mu        sync.Mutex
	perSecond float64
	burst     float64
	m         map[string]*tokenBucket
	now       func() time.Time
}

type tokenBucket struct {
	tokens float64
	at     time.Time
}

// maxBuckets bounds the buckets kept per limit.
const maxBuckets = 100_000

func newBuckets(perSecond, burst float64, now func() time.Time) *buckets {
	return &buckets{perSecond: perSecond, burst: burst, m: make(map[string]*tokenBucket), now: now}
}

// take takes one token from key's bucket; if there is none, it says how
// long until there will be.
func (b *buckets) take(key string) (ok bool, retryAfter time.Duration) {
	if b.perSecond <= 0 {
		return true, 0 // no limit
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	t := b.m[key]
	if t == nil {
		if len(b.m) >= maxBuckets {
			b.forgetFull(now)
		}
		t = &tokenBucket{tokens: b.burst, at: now}
		b.m[key] = t
	}
	t.tokens = math.Min(b.burst, t.tokens+now.Sub(t.at).Seconds()*b.perSecond)
	t.at = now
	if t.tokens < 1 {
		return false, time.Duration((1 - t.tokens) / b.perSecond * float64(time.Second))
	}
	t.tokens--
	return true, 0
}

// refund gives back a token taken for something that did not happen (a
// join refused for another reason, an event replayed).
func (b *buckets) refund(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.m[key]; t != nil {
		t.tokens = math.Min(b.burst, t.tokens+1)
	}
}

func (b *buckets) forgetFull(now time.Time) {
	for k, t := range b.m {
		if t.tokens+now.Sub(t.at).Seconds()*b.perSecond >= b.burst {
			delete(b.m, k)
		}
	}
}
