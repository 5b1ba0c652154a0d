package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A room under load: an instructor creates a workshop room and follows its
// class view's live feed, and virtual learners join it, keep their page's
// stream of pushes open, click through playgrounds and now and then raise
// or lower their hand. Each hand is an event the server acknowledges; the
// harness measures how long after it was sent the instructor's feed shows
// the learner's row with the hand up (or down): event-to-instructor
// latency. With several targets (replicas sharing one store) learner i
// talks to target i mod n and the instructor to the first, so most events
// cross replicas. With Address set, every learner comes from that one
// address (X-Forwarded-For), as a class behind one NAT.

// RoomConfig is one room under load.
type RoomConfig struct {
	Targets       []string // the servers' base URLs (replicas of one store), on the loopback interface
	InstructorKey string   // the servers' instructor key
	Learners      int
	Address       string // the one address all learners come from; "" gives each its own
	ThinkMin      time.Duration
	ThinkMax      time.Duration
	Duration      time.Duration
	Lessons       []string // the room's lessons, whose playgrounds learners click
}

// RoomResult is what a room under load measured.
type RoomResult struct {
	Elapsed      time.Duration
	Clicks       Latencies   // playground clicks and lesson pages
	Events       Latencies   // an event's POST until its acknowledgement
	ToInstructor Latencies   // an event's POST until the instructor's feed shows it
	Statuses     map[int]int // every learner request's answer, by status
	Refused      int         // answers 429
	Errors       int         // requests that failed, or answered other than 200 and 429
	ErrorSample  string
	Acked        int // events acknowledged
	Unseen       int // acknowledged events the instructor's feed never showed
	PeakRSS      []float64
}

// roomState is what the instructor's feed has shown, by learner name.
type roomState struct {
	mu      sync.Mutex
	waiting map[string]*pendingHand
}

type pendingHand struct {
	sent   time.Time
	raised bool
	seen   chan time.Duration
}

var (
	rowLearner = regexp.MustCompile(`data-rank="(\d+)"`)
	rowName    = regexp.MustCompile(`data-testid="ws-row-name">([^<]*)<`)
	roomCode   = regexp.MustCompile(`data-testid="ws-code">([^<]+)<`)
)

// seen is a row of the instructor's feed.
func (s *roomState) seen(row string, at time.Time) {
	rank := rowLearner.FindStringSubmatch(row)
	name := rowName.FindStringSubmatch(row)
	if rank == nil || name == nil {
		return
	}
	who := html.UnescapeString(strings.TrimSpace(name[1]))
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.waiting[who]
	if p == nil || (rank[1] == "0") != p.raised {
		return
	}
	delete(s.waiting, who)
	p.seen <- at.Sub(p.sent)
}

func (s *roomState) expect(name string, raised bool, sent time.Time) *pendingHand {
	p := &pendingHand{sent: sent, raised: raised, seen: make(chan time.Duration, 1)}
	s.mu.Lock()
	s.waiting[name] = p
	s.mu.Unlock()
	return p
}

func (s *roomState) forget(name string) {
	s.mu.Lock()
	delete(s.waiting, name)
	s.mu.Unlock()
}

// do sends one request as address, with cookie, and reads the answer.
func do(ctx context.Context, c *http.Client, method, u, address string, cookies []*http.Cookie, body string, header map[string]string) (*http.Response, []byte, time.Duration, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, 0, err
	}
	req.Header.Set("X-Forwarded-For", address)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, time.Since(start), err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b, time.Since(start), err
}

// openRoom makes the room as its instructor: its id, its join code, and
// the instructor's cookies.
func openRoom(ctx context.Context, c *http.Client, cfg RoomConfig) (id, code string, cookies []*http.Cookie, err error) {
	base := cfg.Targets[0]
	resp, _, _, err := do(ctx, c, "GET", base+"/workshop?key="+url.QueryEscape(cfg.InstructorKey), "127.0.0.1", nil, "", nil)
	if err != nil {
		return "", "", nil, err
	}
	cookies = resp.Cookies()
	if len(cookies) == 0 {
		return "", "", nil, fmt.Errorf("the instructor link answered %d without a cookie: is -instructor-key the server's?", resp.StatusCode)
	}
	form := url.Values{"name": {fmt.Sprintf("Load %d learners", cfg.Learners)}, "lesson": cfg.Lessons, "key": {fmt.Sprintf("form-load-%d", time.Now().UnixNano())}}
	resp, body, _, err := do(ctx, c, "POST", base+"/workshop/rooms", "127.0.0.1", cookies, form.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if err != nil {
		return "", "", nil, err
	}
	loc := resp.Header.Get("Location")
	i := strings.LastIndex(loc, "/workshop/rooms/")
	if resp.StatusCode != http.StatusSeeOther || i < 0 {
		return "", "", nil, fmt.Errorf("creating the room: status %d: %.200s", resp.StatusCode, body)
	}
	id = loc[i+len("/workshop/rooms/"):]
	_, body, _, err = do(ctx, c, "GET", base+"/workshop/rooms/"+id, "127.0.0.1", cookies, "", nil)
	if err != nil {
		return "", "", nil, err
	}
	m := roomCode.FindSubmatch(body)
	if m == nil {
		return "", "", nil, errors.New("the class view shows no join code")
	}
	return id, html.UnescapeString(string(m[1])), cookies, nil
}

// readStream reads a server-sent event stream, calling on for each event,
// until ctx ends or the stream does.
func readStream(ctx context.Context, c *http.Client, u, address string, cookies []*http.Cookie, on func(event, data string)) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Forwarded-For", address)
	req.Header.Set("Accept", "text/event-stream")
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var event string
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event != "" && on != nil {
				on(event, data.String())
			}
			event = ""
			data.Reset()
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(line[len("data: "):])
		}
	}
	return sc.Err()
}

// roomRecorder collects the learners' measurements.
type roomRecorder struct {
	mu                      sync.Mutex
	clicks, events, toInstr []time.Duration
	statuses                map[int]int
	refused, errors         int
	acked, unseen           int
	sample                  string
}

func (r *roomRecorder) add(status int, err error, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses[status]++
	switch {
	case err == nil && status == http.StatusTooManyRequests:
		r.refused++
	case err != nil || status != http.StatusOK && status != http.StatusCreated:
		r.errors++
		if r.sample == "" {
			r.sample = fmt.Sprintf("%.120s: status %d, err %v", what, status, err)
		}
	}
}

// roomLearner joins, keeps its push stream open, and clicks until ctx ends.
func roomLearner(ctx context.Context, c *http.Client, cfg RoomConfig, code string, i int, st *roomState, rec *roomRecorder) {
	rng := rand.New(rand.NewPCG(uint64(i), 11))
	base := cfg.Targets[i%len(cfg.Targets)]
	address := cfg.Address
	if address == "" {
		address = learnerIP(i)
	}
	name := fmt.Sprintf("load-%d", i)
	think := thinker(ctx, rng, cfg.ThinkMin, cfg.ThinkMax)
	select { // learners arrive over the first think time
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(rng.Int64N(int64(cfg.ThinkMax) + 1))):
	}
	form := url.Values{"code": {code}, "name": {name}, "key": {fmt.Sprintf("form-join-%d-%d", i, time.Now().UnixNano())}}
	resp, _, _, err := do(ctx, c, "POST", base+"/join", address, nil, form.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if err != nil || resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		rec.add(status, err, "POST /join")
		return
	}
	cookies := resp.Cookies()
	go readStream(ctx, c, base+"/api/v1/room/stream", address, cookies, nil) // the page's feed of pushes
	raised := false
	var next []string
	for n := 0; ctx.Err() == nil; n++ {
		if !think() {
			return
		}
		if n%4 == 3 { // a hand raised or lowered: an event the instructor must see
			raised = !raised
			kind := map[bool]string{true: "hand_raised", false: "hand_lowered"}[raised]
			key := fmt.Sprintf("load-%d-%d-%d", i, n, time.Now().UnixNano())
			sent := time.Now()
			p := st.expect(name, raised, sent)
			for ctx.Err() == nil {
				resp, _, d, err := do(ctx, c, "POST", base+"/api/v1/room/events", address, cookies, `{"kind":"`+kind+`"}`,
					map[string]string{"Content-Type": "application/json", "Idempotency-Key": key})
				if ctx.Err() != nil {
					st.forget(name)
					return
				}
				status := 0
				if resp != nil {
					status = resp.StatusCode
				}
				rec.add(status, err, "POST /api/v1/room/events")
				if err == nil && status < 300 {
					rec.mu.Lock()
					rec.events = append(rec.events, d)
					rec.acked++
					rec.mu.Unlock()
					break
				}
				wait := time.Second // retried with the same key, as workshop.js does
				if status == http.StatusTooManyRequests {
					if s, _ := strconv.Atoi(resp.Header.Get("Retry-After")); s > 0 {
						wait = time.Duration(s) * time.Second
					}
				}
				select {
				case <-ctx.Done():
					st.forget(name)
					return
				case <-time.After(wait):
				}
			}
			select {
			case d := <-p.seen:
				rec.mu.Lock()
				rec.toInstr = append(rec.toInstr, d)
				rec.mu.Unlock()
			case <-time.After(10 * time.Second):
				st.forget(name)
				rec.mu.Lock()
				rec.unseen++
				rec.mu.Unlock()
			case <-ctx.Done():
				st.forget(name)
				return
			}
			continue
		}
		target := ""
		if len(next) == 0 || n%10 == 0 {
			target = "/lessons/" + cfg.Lessons[rng.IntN(len(cfg.Lessons))]
		} else {
			target = next[rng.IntN(len(next))] + "&fragment=1"
		}
		resp, body, d, err := do(ctx, c, "GET", base+target, address, cookies, "", nil)
		if ctx.Err() != nil {
			return
		}
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		rec.add(status, err, "GET "+target)
		if err == nil && status == http.StatusOK {
			rec.mu.Lock()
			rec.clicks = append(rec.clicks, d)
			rec.mu.Unlock()
			if l := links(body); len(l) > 0 {
				next = l
			}
		}
	}
}

// RunRoom plays a room under load and measures it.
func RunRoom(ctx context.Context, cfg RoomConfig) (*RoomResult, error) {
	if len(cfg.Targets) == 0 || len(cfg.Lessons) == 0 || cfg.Learners < 1 || cfg.ThinkMax < cfg.ThinkMin || cfg.Duration <= 0 {
		return nil, errors.New("loadtest: a room needs targets, lessons, learners, a duration and ThinkMin <= ThinkMax")
	}
	for _, t := range cfg.Targets {
		if err := CheckLoopback(t); err != nil {
			return nil, err
		}
	}
	c := newClient(3*cfg.Learners + 16)
	c.Timeout = 0 // streams last the whole run; requests end with ctx
	defer c.CloseIdleConnections()
	id, code, instructor, err := openRoom(ctx, c, cfg)
	if err != nil {
		return nil, fmt.Errorf("loadtest: %w", err)
	}
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	st := &roomState{waiting: map[string]*pendingHand{}}
	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	feedErr := make(chan error, 1)
	go func() {
		feedErr <- readStream(feedCtx, c, cfg.Targets[0]+"/workshop/rooms/"+id+"/stream", "127.0.0.1", instructor, func(event, data string) {
			if event == "row" {
				st.seen(data, time.Now())
			}
		})
	}()
	rec := &roomRecorder{statuses: map[int]int{}}
	var wg sync.WaitGroup
	for i := range cfg.Learners {
		wg.Go(func() { roomLearner(runCtx, c, cfg, code, i, st, rec) })
	}
	peak := make([]float64, len(cfg.Targets))
	sampler := time.NewTicker(250 * time.Millisecond)
	defer sampler.Stop()
	start := time.Now()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-sampler.C:
			for i, t := range cfg.Targets {
				if m, err := ScrapeMetrics(ctx, c, t); err == nil {
					peak[i] = max(peak[i], m["process_resident_memory_bytes"])
				}
			}
		case err := <-feedErr:
			cancel()
			<-done
			return nil, fmt.Errorf("loadtest: the instructor's feed ended: %v", err)
		}
	}
	elapsed := time.Since(start)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return &RoomResult{Elapsed: elapsed, Clicks: summarise(rec.clicks), Events: summarise(rec.events), ToInstructor: summarise(rec.toInstr),
		Statuses: rec.statuses, Refused: rec.refused, Errors: rec.errors, ErrorSample: rec.sample, Acked: rec.acked, Unseen: rec.unseen, PeakRSS: peak}, nil
}
