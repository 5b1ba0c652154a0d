package web

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"idemlab/lessons"
	"idemlab/web/site"
	"idemlab/web/workshopweb"
	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

// checkSite is a real server on a loopback port, workshop mode on, with a
// room holding one exercise and its lesson: the checks of the tests below
// come over real connections from 127.0.0.x source addresses, as learners'
// browsers behind different networks (or one NAT) would.
type checkSite struct {
	s     *Server
	clock atomic.Int64 // the limiter's time, Unix nanoseconds: the tests move it
	srv   *httptest.Server
	svc   *workshop.Service
	room  workshop.Room
	spec  *lessons.ExerciseSpec
}

func newCheckSite(t *testing.T, exercise string) *checkSite {
	t.Helper()
	store, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := workshop.NewService(store, nil)
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler),
		Workshop: &workshopweb.Config{Service: svc, InstructorKey: testInstructorKey}}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	spec := builtinExercise(t, exercise)
	room, err := svc.CreateRoom(t.Context(), "form-key-room-1", workshop.RoomSpec{Name: "Checks", Lessons: []string{spec.Lesson}, Exercises: []string{spec.ID}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	cs := &checkSite{s: s, srv: srv, svc: svc, room: room, spec: spec}
	cs.clock.Store(time.Unix(1_800_000_000, 0).UnixNano())
	s.limiter.Now = func() time.Time { return time.Unix(0, cs.clock.Load()) }
	return cs
}

// later moves the limiter's clock on by d: shares refill, and nothing else
// changes.
func (cs *checkSite) later(d time.Duration) { cs.clock.Add(int64(d)) }

// seat joins a learner to the room from address, and returns their
// token.
func (cs *checkSite) seat(t *testing.T, address, name string) workshop.Token {
	t.Helper()
	_, l, err := cs.svc.JoinFrom(t.Context(), address, cs.room.Code, workshop.Key("join-key-"+name), name)
	if err != nil {
		t.Fatal(err)
	}
	return l.Token
}

// browser is a learner's browser connecting from address (any 127.0.0.x
// reaches the loopback server), with their seat's cookie when token is
// not empty.
func (cs *checkSite) browser(t *testing.T, address string, token workshop.Token) *http.Client {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(address)}}
	jar, _ := cookiejar.New(nil)
	if token != "" {
		u, _ := url.Parse(cs.srv.URL)
		jar.SetCookies(u, []*http.Cookie{{Name: workshopweb.LearnerCookie, Value: string(token)}})
	}
	return &http.Client{Jar: jar, Transport: &http.Transport{DialContext: dialer.DialContext}}
}

// answer is one check's answer as the learner's browser got it.
type answer struct {
	status     int
	retryAfter string
	body       string
}

func (cs *checkSite) post(t *testing.T, c *http.Client, path string, form url.Values) answer {
	t.Helper()
	resp, err := c.PostForm(cs.srv.URL+path, form)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
}

// inFlight is idemlab_runs_in_flight, read from /metrics over HTTP.
func (cs *checkSite) inFlight(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(cs.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^idemlab_runs_in_flight (\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no idemlab_runs_in_flight")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// slowHandler is the exercise's solution followed by as many statements
// that change nothing as the handler limit takes, each counting 10^5 rows
// (a few ms, within a statement's CPU limit): each is a step of every
// schedule, so its check explores until the checker's deadline (5 s; it
// took 16 s without one), which keeps it running while the test sends more.
func slowHandler(spec *lessons.ExerciseSpec) string {
	const ten = "(VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10))"
	const noop = "\nSELECT count(*) FROM " + ten + " a, " + ten + " b, " + ten + " c, " + ten + " d, " + ten + " e;"
	return spec.Solution + strings.Repeat(noop, (4<<10-len(spec.Solution))/len(noop))
}

// editorText is the learner's text in an exercise page.
func editorText(t *testing.T, page string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Find(testID("exercise-editor")).Text()
}

// A learner whose check is running and who fires four more at once (a
// double click on the form, the API, a fresh tab) gets one check: the
// others are refused at once with 429, Retry-After and a sentence saying
// their check is already running, their text kept. Meanwhile another
// learner at the same address (another seat) and a visitor from another
// address are served. The room records the checks the server ran to a verdict.
func TestCheck_OneAtATimePerClientOverHTTP(t *testing.T) {
	cs := newCheckSite(t, "dedupe-credit")
	spec := cs.spec
	ada := cs.browser(t, "127.0.0.2", cs.seat(t, "127.0.0.2", "ada"))
	bob := cs.browser(t, "127.0.0.2", cs.seat(t, "127.0.0.2", "bob"))
	visitor := cs.browser(t, "127.0.0.3", "")
	slow := slowHandler(spec)
	if len(slow) > 4<<10 {
		t.Fatalf("the slow handler is %d bytes", len(slow))
	}
	formPath := site.ExerciseCheckPath(spec.ID)

	first := make(chan answer, 1)
	go func() { first <- cs.post(t, ada, formPath, url.Values{"handler": {slow}}) }()
	for cs.inFlight(t) == 0 {
		select {
		case a := <-first:
			t.Fatalf("the slow check answered before the others were sent: %d %.300s", a.status, a.body)
		case <-time.After(time.Millisecond):
		}
	}
	// Four more from Ada at once: the double click, the API, another tab.
	type try struct {
		path string
		form url.Values
		page bool // the form's page (no JavaScript), else JSON
	}
	tries := []try{
		{formPath, url.Values{"handler": {slow}}, true},
		{formPath, url.Values{"handler": {slow}}, true},
		{"/api/v1/check", url.Values{"exercise": {spec.ID}, "handler": {spec.Start}}, false},
		{formPath, url.Values{"handler": {spec.Start}}, true},
	}
	answers := make([]answer, len(tries))
	var wg sync.WaitGroup
	for i, tr := range tries {
		wg.Go(func() { answers[i] = cs.post(t, ada, tr.path, tr.form) })
	}
	wg.Wait()
	for i, a := range answers {
		tr := tries[i]
		if a.status != http.StatusTooManyRequests || a.retryAfter != "1" || !strings.Contains(a.body, "You already have a check running") {
			t.Errorf("Ada's check %d while her first runs: %d (Retry-After %q); want 429 with Retry-After 1 saying her check is running:\n%.400s", i+2, a.status, a.retryAfter, a.body)
			continue
		}
		if tr.page && editorText(t, a.body) != tr.form.Get("handler") {
			t.Errorf("Ada's check %d: the refusal's page lost her text", i+2)
		}
		if !tr.page && !json.Valid([]byte(a.body)) {
			t.Errorf("Ada's check %d: the API's refusal is not JSON: %s", i+2, a.body)
		}
	}
	// Others are served meanwhile: a seat at Ada's address, and another address.
	for name, c := range map[string]*http.Client{"Bob, at Ada's address": bob, "a visitor from another address": visitor} {
		if a := cs.post(t, c, "/api/v1/check", url.Values{"exercise": {spec.ID}, "handler": {spec.Start}}); a.status != http.StatusOK {
			t.Errorf("%s, while Ada's check runs: %d %.300s", name, a.status, a.body)
		}
	}
	firstAnswer := <-first
	if firstAnswer.status != http.StatusOK {
		t.Fatalf("Ada's first check: %d %.300s", firstAnswer.status, firstAnswer.body)
	}
	// A check its deadline stopped has no verdict and is no attempt.
	adaAttempts := 2
	if strings.Contains(firstAnswer.body, `data-testid="exercise-unfinished"`) {
		adaAttempts = 1
	}
	// Her check ended, and a minute later (her share, spent on its CPU,
	// refilled) the next one runs.
	cs.later(time.Minute)
	if a := cs.post(t, ada, "/api/v1/check", url.Values{"exercise": {spec.ID}, "handler": {spec.Start}}); a.status != http.StatusOK {
		t.Errorf("Ada's check after her first ended: %d %.300s", a.status, a.body)
	}
	// The room has what the server ran to a verdict: Ada's two checks (not
	// six; one if the slow one was stopped unfinished), Bob's one.
	class, err := cs.svc.Class(t.Context(), cs.room.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range class.Joined() {
		want := map[string]int{"ada": adaAttempts, "bob": 1}[p.Learner.Name]
		got := 0
		if x := p.Exercises[spec.ID]; x != nil {
			got = x.Attempts
		}
		if got != want {
			t.Errorf("%s: %d checks recorded, want %d", p.Learner.Name, got, want)
		}
	}
}

// Thirty learners behind one address (a class behind a NAT) pressing Check
// at once are thirty clients: none is refused because of another. Each
// seat holds its own check and pays from its own share; the address's
// checks run at most half the slots at a time, the rest waiting their turn
// (here as long as it takes: the test is about shares, not speed).
func TestCheck_ThirtySeatsBehindOneAddressAreServed(t *testing.T) {
	cs := newCheckSite(t, "dedupe-credit")
	cs.s.adm.QueueWait = time.Minute
	const learners, nat = 30, "127.0.0.2"
	browsers := make([]*http.Client, learners)
	for i := range browsers {
		browsers[i] = cs.browser(t, nat, cs.seat(t, nat, fmt.Sprintf("learner-%02d", i)))
	}
	answers := make([]answer, learners)
	var wg sync.WaitGroup
	for i, c := range browsers {
		wg.Go(func() {
			answers[i] = cs.post(t, c, "/api/v1/check", url.Values{"exercise": {cs.spec.ID}, "handler": {cs.spec.Start}})
		})
	}
	wg.Wait()
	for i, a := range answers {
		if a.status != http.StatusOK {
			t.Errorf("learner %d: %d (Retry-After %q) %.300s", i, a.status, a.retryAfter, a.body)
		}
	}
	// The same thirty checks as one client (no seat, the one address):
	// one runs at a time, and a burst is more than its share.
	ok := 0
	noSeat := cs.browser(t, "127.0.0.3", "")
	for range learners {
		if a := cs.post(t, noSeat, "/api/v1/check", url.Values{"exercise": {cs.spec.ID}, "handler": {cs.spec.Start}}); a.status == http.StatusOK {
			ok++
		} else if a.status != http.StatusTooManyRequests || a.retryAfter == "" {
			t.Errorf("a check past an address's share: %d (Retry-After %q); want 429 with Retry-After", a.status, a.retryAfter)
		}
	}
	if ok == learners {
		t.Errorf("one address without seats had all %d checks served one after another; want its share to run out", learners)
	}
}
