package admit

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"idemlab/web/site"
)

// Shares of what is held while work runs. The token bucket (ratelimit.go)
// bounds how often a client starts work; it does not bound how much of the
// server one client holds at once, and a check holds a slot for seconds.
// So each client (its key, ClientOf: an address, or a seat at an address)
// holds at most:
//
//   - one check at a time (checkHoldsPerClient);
//   - one PostgreSQL ledger for its runs (ledgerHoldsPerClient), and for a
//     check its share of the pool (LedgerGate.AcquireShare);
//   - a quarter of the run slots, and every client of one address together
//     half of them (runShare), so that another address always finds slots.
//
// A request past its client's share is refused at once with 429 and
// Retry-After: it is that client's own work that holds the server, so
// nobody else's is refused for it. A request whose context names no
// client (WithClient) is held to nothing here: the CLI, tests, warm-ups.
const (
	checkHoldsPerClient  = 1
	ledgerHoldsPerClient = 1
	holdRetryAfter       = 1 // seconds
)

// What a client holds, by kind.
const (
	holdRun    = "run"
	holdCheck  = "check"
	holdLedger = "ledger"
)

// clientKey carries, in a request's context, the client it is charged to
// (a *charged).
type clientKey struct{}

// charged is a request's client and the limiter that charges it.
type charged struct {
	client  string
	limiter *RateLimiter
}

// WithClient is r's context naming r's client (ClientOf), to whom the work
// it starts is charged and whose shares it is held to. The web layer sets
// it once per request, after WithSeat.
func (l *RateLimiter) WithClient(r *http.Request) context.Context {
	return context.WithValue(r.Context(), clientKey{}, &charged{client: l.ClientOf(r), limiter: l})
}

// ClientFrom is the client ctx names, or "".
func ClientFrom(ctx context.Context) string {
	if c, _ := ctx.Value(clientKey{}).(*charged); c != nil {
		return c.client
	}
	return ""
}

// chargeFrom charges the client ctx names tokens more (work that cost
// more than its token), if it names one.
func chargeFrom(ctx context.Context, tokens float64) {
	if c, _ := ctx.Value(clientKey{}).(*charged); c != nil && tokens > 0 {
		c.limiter.Charge(c.client, tokens)
	}
}

// holds counts what each client, and each address, holds now.
type holds struct {
	mu      sync.Mutex
	n       map[holdKey]int
	changed chan struct{} // closed, and replaced, at each release
}

type holdKey struct{ who, kind string }

func newHolds() *holds { return &holds{n: map[holdKey]int{}, changed: make(chan struct{})} }

// take counts one more kind for client, and for its address when
// perAddress > 0, unless either is at its limit; release undoes it.
func (h *holds) take(client, kind string, perClient, perAddress int) (release func(), ok bool) {
	if client == "" {
		return func() {}, true
	}
	own := holdKey{client, kind}
	address, _ := splitClient(client)
	addr := holdKey{seatSep + address, kind}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n[own] >= perClient || (perAddress > 0 && h.n[addr] >= perAddress) {
		return nil, false
	}
	h.n[own]++
	if perAddress > 0 {
		h.n[addr]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.n[own]--; h.n[own] <= 0 {
				delete(h.n, own)
			}
			if perAddress > 0 {
				if h.n[addr]--; h.n[addr] <= 0 {
					delete(h.n, addr)
				}
			}
			close(h.changed)
			h.changed = make(chan struct{})
		})
	}, true
}

// wait is take, waiting until wake (or ctx) for the client's own work, or
// its address's, to end when it is at its share; false when it still was.
// With ownWaits false, a client at its own share is refused at once: it
// waits only for others at its address.
func (h *holds) wait(ctx context.Context, wake <-chan time.Time, client, kind string, perClient, perAddress int, ownWaits bool) (release func(), ok bool, err error) {
	for {
		h.mu.Lock()
		changed := h.changed
		h.mu.Unlock()
		if release, ok := h.take(client, kind, perClient, perAddress); ok {
			return release, true, nil
		}
		if !ownWaits && h.held(client, kind) >= perClient {
			return nil, false, nil
		}
		select {
		case <-changed:
		case <-wake:
			return nil, false, nil
		case <-ctx.Done():
			return nil, false, context.Cause(ctx)
		}
	}
}

// held is what client holds of kind now.
func (h *holds) held(client, kind string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[holdKey{client, kind}]
}

// runShare is how many slots one client, and one address, may hold of
// slots: a quarter and a half, at least one each.
func runShare(slots int) (perClient, perAddress int) {
	return max(1, slots/4), max(1, slots/2)
}

// overShare is the refusal of a request past its client's share of what
// is held, or its address's: 429, come back in a second. The message names
// the real cause: the client's own work, or others' at its address.
func (h *holds) overShare(client, kind string, perClient int, what string) error {
	message := fmt.Sprintf("You already have %s running, so this one was not started. Try again in %d second, once its answer is back.", what, holdRetryAfter)
	if h.held(client, kind) < perClient {
		message = fmt.Sprintf("Others at your address (a shared network) are using its whole share of the server just now. Nothing was lost: try again in %d second.", holdRetryAfter)
	}
	return &site.Error{Status: http.StatusTooManyRequests, RetryAfter: holdRetryAfter, Message: message}
}
