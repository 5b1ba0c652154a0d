package admit

import (
	"context"
	"errors"
	"idemlab/web/site"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"idemlab/playground"
)

// The first request for a key computes it on its own goroutine; a second
// one joins it. When the first one's client leaves, the joiner still gets
// the answer (the run is not stopped while someone waits), and the first
// request returns its client's error.
func TestAdmission_LeaderLeavesJoinerStillAnswered(t *testing.T) {
	a := newTestAdmission()
	started, release := make(chan struct{}), make(chan struct{})
	compute := func(ctx context.Context, _ *playground.Budget, form AnswerForm) (*Output, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		return &Output{Status: http.StatusOK, ContentType: site.HTMLContentType, Body: form.Payload([]byte("answer"))}, nil
	}
	leaderCtx, leave := context.WithCancel(context.Background())
	type result struct {
		out    *Output
		source string
		err    error
	}
	leader, joiner := make(chan result, 1), make(chan result, 1)
	go func() {
		out, source, err := a.Run(leaderCtx, "k", true, compute)
		leader <- result{out, source, err}
	}()
	<-started
	go func() {
		out, source, err := a.Run(context.Background(), "k", false, compute)
		joiner <- result{out, source, err}
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		a.mu.Lock()
		n := a.flights["k"].waiters
		a.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second request never joined")
		}
	}
	leave()
	time.Sleep(10 * time.Millisecond) // the leader's leaving is seen before the run ends
	close(release)
	if r := <-leader; !errors.Is(r.err, context.Canceled) || r.source != "miss" {
		t.Errorf("leader: source %q, err %v; want miss and context.Canceled", r.source, r.err)
	}
	if r := <-joiner; r.err != nil || r.source != "shared" || string(r.out.Body.Identity.Body) != "answer" {
		t.Errorf("joiner: source %q, err %v; want the shared answer", r.source, r.err)
	}
	if _, ok := a.Cache.Get("k"); !ok {
		t.Error("the answer computed for the joiner was not cached")
	}
}

// A click is computed on the request's goroutine: the computation's stack
// runs down from the test (testing.tRunner); a goroutine of its own would not.
func TestAdmission_ComputesOnTheRequestsGoroutine(t *testing.T) {
	a := newTestAdmission()
	var stack []byte
	_, source, err := a.Run(context.Background(), "g", true, func(ctx context.Context, _ *playground.Budget, form AnswerForm) (*Output, error) {
		stack = make([]byte, 64<<10)
		stack = stack[:runtime.Stack(stack, false)]
		return &Output{Status: http.StatusOK, ContentType: site.HTMLContentType, Body: form.Payload([]byte("x"))}, nil
	})
	if err != nil || source != "miss" {
		t.Fatalf("source %q, err %v", source, err)
	}
	if !strings.Contains(string(stack), "testing.tRunner") {
		t.Errorf("the computation ran on another goroutine:\n%s", stack)
	}
}

// newTestAdmission is an admission path as a server makes one.
func newTestAdmission() *Admission {
	return New(site.NewMetrics(), NewRateLimiter(RateLimitPerSecond, RateLimitBurst, false))
}
