package admit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"idemlab/web/site"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"idemlab/internal/english"
	"idemlab/playground"
)

// Admission: everything that runs SQL (playground pages and fragments,
// embeds, lesson states, /api/v1/run, the exercise checker) passes here.
//
//   - A run is a pure function of its URL, so its answer is cached
//     (runcache.go) and identical requests in flight share one computation.
//   - A computation needs a slot: at most admissionSlots run at once; a
//     request waits for one at most admissionQueueWait, and at most
//     admissionMaxWaiting wait; otherwise it is refused as busy (503 with
//     Retry-After).
//   - The run gets the playground's DefaultBudget, checked while it runs,
//     and its rendered answer is capped at renderCap bytes. Over budget is a
//     422 that shows the playground in place with a message naming the limit.
//   - The computation's context ends when every request waiting for it has
//     gone (the client went away) or at the deadline.
//   - Each client has a token bucket (ratelimit.go); a run that took long
//     costs more tokens.
const (
	admissionQueueWait  = 2 * time.Second
	admissionMaxWaiting = 256
	admissionRetryAfter = 2       // seconds, when busy
	renderCap           = 3 << 20 // bytes of one rendered answer
)

// admissionCostUnit: a run costs one more token per unit of CPU time it
// used, so that a client sending expensive runs gets fewer of them (CPU,
// not wall time: on a loaded server a cheap run waits long). A variable
// only so that race-detector test builds, whose every run costs several
// times the CPU, can scale it (race_test.go).
var AdmissionCostUnit = 10 * time.Millisecond

// Slots is how many runs compute at once: a few per core, so that a
// cheap click shares a core with an expensive run instead of queueing
// behind it (each run's CPU is capped by its budget).
func Slots() int { return 4 * runtime.GOMAXPROCS(0) }

// Admission is the server's one admission path.
type Admission struct {
	Slots     chan struct{}
	waiting   atomic.Int64
	QueueWait time.Duration
	Budget    playground.Budget
	RenderCap int
	Cache     *RunCache
	Limiter   *RateLimiter
	metrics   *site.Metrics
	holds     *holds // what each client holds (holds.go)

	mu       sync.Mutex
	flights  map[string]*flight
	gen      uint64 // bumped when the course changes: older computations are not cached
	etagSeed maphash.Seed
}

func New(m *site.Metrics, limiter *RateLimiter) *Admission {
	return &Admission{
		Slots:     make(chan struct{}, Slots()),
		QueueWait: admissionQueueWait,
		Budget:    playground.DefaultBudget(),
		RenderCap: renderCap,
		Cache:     NewRunCache(runCacheBytes),
		Limiter:   limiter,
		metrics:   m,
		holds:     newHolds(),
		flights:   map[string]*flight{},
		etagSeed:  maphash.MakeSeed(),
	}
}

// Output is a computed answer: a body and its status (200, or 422 when
// the run was stopped at its budget).
type Output struct {
	Status      int
	ContentType []string
	Body        *site.Payload
	Refusal     string        // the budget limit, when status is 422
	Took        time.Duration // computing it
	CPU         time.Duration // the run's CPU time (rendering aside)
}

// size is what the answer holds in memory: its body's bytes and a little
// more.
func (o *Output) size() int64 { return o.Body.BytesHeld() + 128 }

// Write sends the answer through the one body writer: 200s with their
// ETag (304 when it matches), a refusal never stored.
func (o *Output) Write(w http.ResponseWriter, r *http.Request) {
	cache := site.Revalidate
	if o.Status != http.StatusOK {
		cache = site.NoStore
	}
	site.WriteBody(w, r, o.Status, o.ContentType, cache, o.Body)
}

// flight is one computation and the requests waiting for it.
type flight struct {
	done    chan struct{}
	out     *Output
	err     error
	waiters int // guarded by admission.mu
	cancel  context.CancelCauseFunc
}

// ErrClientGone ends a computation nobody waits for any more.
var ErrClientGone = errors.New("every client waiting for this run went away")

// ComputeFunc computes an answer within ctx and the budget, and makes its
// payload with form.payload.
type ComputeFunc func(ctx context.Context, budget *playground.Budget, form AnswerForm) (*Output, error)

// AnswerForm is how a computed answer's payload is made: its entity tag
// (stateETag), and whether the request computing it takes gzip, in which
// case only the compressed bytes are kept (answerPayload).
type AnswerForm struct {
	etag string
	gzip bool
}

// Payload makes the answer's payload from body, a render buffer its caller
// reuses.
func (f AnswerForm) Payload(body []byte) *site.Payload {
	return site.AnswerPayload(body, f.etag, f.gzip)
}

// stateETag is the entity tag of the answer to key within one course
// generation: a run is a pure function of its URL and the course, so the
// tag is a hash of those (and of a seed drawn when the process started, so
// that another build's answers never share a tag), not of the body, which
// it would cost hashing every answer's bytes to compute.
func (a *Admission) stateETag(key string, gen uint64) string {
	var h maphash.Hash
	h.SetSeed(a.etagSeed)
	h.WriteString(key)
	var b [40]byte
	out := append(b[:0], 's')
	out = strconv.AppendUint(out, h.Sum64(), 36)
	out = append(out, '-')
	out = strconv.AppendUint(out, gen, 36)
	return string(out)
}

// Run answers key from the cache, or joins the computation in flight for
// it, or starts one; source says which (hit, shared, miss). gzip says the
// request takes gzip: a computation it starts keeps its answer compressed. It returns
// ctx's error when the client went away first, a *serverError when the server
// is busy, or compute's error.
func (a *Admission) Run(ctx context.Context, key string, gzip bool, compute ComputeFunc) (out *Output, source string, err error) {
	if out, ok := a.Cache.Get(key); ok {
		a.metrics.CacheHit("hit")
		return out, "hit", nil
	}
	a.mu.Lock()
	f, joined := a.flights[key]
	if !joined {
		// The computation outlives any one request: it stops when all its
		// waiters have gone, or at its deadline.
		runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		a.flights[key] = f
		f.waiters++
		gen := a.gen
		a.mu.Unlock()
		a.metrics.CacheHit("miss")
		// The first request computes on its own goroutine: no goroutine
		// started and no wake-up when it ends (a click's futex wake-ups
		// were 5% of its CPU). If its client leaves meanwhile, it stops
		// waiting as a joiner would, and the run goes on only for others.
		stop := context.AfterFunc(ctx, func() { a.leave(f) })
		a.compute(runCtx, key, AnswerForm{etag: a.stateETag(key, gen), gzip: gzip}, gen, f, compute)
		if !stop() {
			return nil, "miss", ctx.Err()
		}
		return f.out, "miss", f.err
	}
	f.waiters++
	a.mu.Unlock()
	a.metrics.CacheHit("shared")
	select {
	case <-f.done:
		return f.out, "shared", f.err
	case <-ctx.Done():
		a.leave(f)
		return nil, "shared", ctx.Err()
	}
}

// leave is a request that no longer waits for f: the last one to leave
// stops the computation.
func (a *Admission) leave(f *flight) {
	a.mu.Lock()
	f.waiters--
	if f.waiters == 0 {
		f.cancel(ErrClientGone)
	}
	a.mu.Unlock()
}

// compute runs one computation in a slot, and caches what it may.
func (a *Admission) compute(ctx context.Context, key string, form AnswerForm, gen uint64, f *flight, compute ComputeFunc) {
	defer func() {
		if v := recover(); v != nil {
			f.out, f.err = nil, fmt.Errorf("panic computing %s: %v", english.Truncate(key, 200), v)
		}
		a.mu.Lock()
		delete(a.flights, key)
		a.mu.Unlock()
		f.cancel(nil)
		close(f.done)
	}()
	// A run on a PostgreSQL ledger takes one first (postgresgate.go): waiting
	// for a ledger holds no slot.
	leave, err := takeLedger(ctx)
	if err != nil {
		f.err = err
		return
	}
	defer leave()
	release, err := a.acquire(ctx)
	if err != nil {
		f.err = err
		return
	}
	defer release()
	b := a.Budget
	ctx, cancel := context.WithTimeout(ctx, b.Wall+time.Second) // the budget's wall clock stops it first
	defer cancel()
	f.out, f.err = compute(ctx, &b, form)
	if f.err == nil && f.out == nil {
		f.err = fmt.Errorf("computing %s: no answer and no error", english.Truncate(key, 200))
	}
	var be *playground.BudgetError
	switch {
	case errors.As(f.err, &be) && be.Limit == playground.LimitWall:
		f.err = a.busy()
	case errors.Is(f.err, context.DeadlineExceeded) && ctx.Err() != nil:
		// The run's own deadline, not its client's: a run the budget's
		// wall clock did not stop first was held up by the machine's load
		// (on PostgreSQL the engine reports the learner's slow SQL as its
		// own limit, LimitStatementTime, a 422).
		f.err = a.busy()
	}
	// A run stopped by its CPU time depends on the machine's load, and one
	// stopped by PostgreSQL's time on other learners' locks too: it is
	// answered, not kept. Every other answer is a function of its URL.
	if f.err == nil && f.out.Refusal != playground.LimitCPU && f.out.Refusal != playground.LimitStatementTime {
		a.mu.Lock()
		current := a.gen == gen
		a.mu.Unlock()
		if current {
			a.Cache.Put(key, f.out)
		}
	}
}

// acquire takes a slot, waiting at most queueWait behind at most
// admissionMaxWaiting others; release gives it back.
// A client holds at most its share of the slots (runShare): past it, a
// run waits for one of its client's own to end, as long, and is then
// refused with 429.
func (a *Admission) acquire(ctx context.Context) (release func(), err error) {
	share, err := a.takeShare(ctx, holdRun, "as many runs as your share of the server")
	if err != nil {
		return nil, err
	}
	select {
	case a.Slots <- struct{}{}:
	default:
		if a.waiting.Add(1) > admissionMaxWaiting {
			a.waiting.Add(-1)
			share()
			return nil, a.busy()
		}
		t := time.NewTimer(a.QueueWait)
		defer t.Stop()
		select {
		case a.Slots <- struct{}{}:
			a.waiting.Add(-1)
		case <-t.C:
			a.waiting.Add(-1)
			share()
			return nil, a.busy()
		case <-ctx.Done():
			a.waiting.Add(-1)
			share()
			return nil, context.Cause(ctx)
		}
	}
	a.metrics.RunsInFlight.Inc()
	return func() {
		a.metrics.RunsInFlight.Dec()
		<-a.Slots
		share()
	}, nil
}

// takeShare counts a run (holdRun) or a check (holdCheck) against its
// client's share of the slots, waiting at most QueueWait for the client's
// own work (a run's), or its address's, to end; past it, a 429 that names
// what.
func (a *Admission) takeShare(ctx context.Context, kind, what string) (release func(), err error) {
	client := ClientFrom(ctx)
	perClient, perAddress := runShare(cap(a.Slots))
	if kind == holdCheck {
		perClient = checkHoldsPerClient
	}
	if release, ok := a.holds.take(client, kind, perClient, perAddress); ok {
		return release, nil
	}
	// A run waits for its client's own runs, or its address's; a check only
	// for its address's others: a client's second check is refused at once.
	t := time.NewTimer(a.QueueWait)
	defer t.Stop()
	release, ok, err := a.holds.wait(ctx, t.C, client, kind, perClient, perAddress, kind == holdRun)
	if err != nil || ok {
		return release, err
	}
	a.metrics.Refused("share")
	return nil, a.holds.overShare(client, kind, perClient, what)
}

// busy is the refusal when every slot is taken.
func (a *Admission) busy() error {
	a.metrics.Refused("busy")
	return BusyError()
}

// BusyError is the answer of a run refused as busy: 503, come back later.
func BusyError() error {
	return &site.Error{Status: http.StatusServiceUnavailable, RetryAfter: admissionRetryAfter,
		Message: fmt.Sprintf("The server is busy running other learners' playgrounds. Nothing was lost: try again in %d seconds.", admissionRetryAfter)}
}

// Invalidate forgets every cached answer: the course changed.
func (a *Admission) Invalidate() {
	a.mu.Lock()
	a.gen++
	a.mu.Unlock()
	a.Cache.clear()
}

// BudgetMessage says why a run stopped at its budget, or reports false
// when err is not about the budget. A run stopped by the wall clock alone is
// not: on a loaded server a cheap run can take long, so it is answered as
// busy (overloaded), never cached, rather than blamed on the learner.
func BudgetMessage(err error, capBytes int) (limit, message string, ok bool) {
	var be *playground.BudgetError
	switch {
	case errors.As(err, &be) && be.Limit == playground.LimitWall:
		return "", "", false
	case errors.As(err, &be):
		return be.Limit, be.Error(), true
	case errors.Is(err, site.ErrRenderCap):
		return "rendered-bytes", fmt.Sprintf("the answer for this run would be larger than %d KiB, the most one answer may be; shorten the script", capBytes>>10), true
	}
	return "", "", false
}

// RetryAfterHeader is set on every refusal that says when to come back.
func RetryAfterHeader(w http.ResponseWriter, seconds int) {
	w.Header()["Retry-After"] = []string{strconv.Itoa(seconds)}
}

// IsRefusal reports an error the admission path made (busy, or the
// client's share spent): a *site.Error that says when to come back.
func IsRefusal(err error) (*site.Error, bool) {
	var se *site.Error
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return se, true
	}
	return nil, false
}
