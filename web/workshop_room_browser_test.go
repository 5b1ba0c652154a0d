package web

import (
	"context"
	"encoding/json"
	"fmt"
	"idemlab/web/workshopweb"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/internal/pgtest"
	"idemlab/web/playurl"
	"idemlab/workshop"
	"idemlab/workshop/pgstore"
)

// replica is one server of a PostgreSQL store, in this process, on a fixed
// address: killed, it closes its listener and every connection at once
// (as kill -9 does to its clients), and it restarts on the same address
// with a fresh service, as a restarted process would.
type replica struct {
	t      *testing.T
	db     string
	addr   string
	srv    *http.Server
	store  *pgstore.Store
	cancel context.CancelFunc
}

func startRoomReplica(t *testing.T, db, addr string) *replica {
	r := &replica{t: t, db: db, addr: addr}
	r.start()
	t.Cleanup(func() {
		if r.srv != nil {
			r.kill()
		}
	})
	return r
}

func (r *replica) start() {
	t := r.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	store, err := pgstore.Open(ctx, r.db)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	svc := workshop.NewService(store, nil)
	logger := slog.New(slog.DiscardHandler)
	go store.Listen(ctx, svc.Hub(), logger)
	s, err := NewServer(Config{Logger: logger, Workshop: &workshopweb.Config{Service: svc, InstructorKey: testInstructorKey}}, builtinCourse(t))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if r.addr == "" {
		r.addr = "127.0.0.1:0"
	}
	var ln net.Listener
	for range 50 { // the port of a killed replica may take a moment to free
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.srv = &http.Server{Handler: s.Handler()}
	r.store, r.cancel = store, cancel
	go r.srv.Serve(ln)
}

func (r *replica) kill() {
	r.srv.Close() // the listener and every connection, streams included
	r.cancel()
	r.store.Close()
	r.srv = nil
}

func (r *replica) url() string { return "http://" + r.addr }

// natClient is a simulated learner's browser behind the shared address
// 127.0.0.2 (one NAT for the whole class): its own cookies, no redirects.
func natClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// TestBrowser_WorkshopWholeRoomSurvivesAReplicaKilled plays a room: an
// instructor and three learners in Chromium and 27 simulated learners over
// HTTP, all from one address, on two replicas of a PostgreSQL store. Each
// learner checks an exercise three times, and the class view shows what
// the server ran. Then the replica of the instructor and two learners is
// killed: their pages say they are reconnecting, a click waits instead of
// failing, and once the replica is back every page carries on by itself.
// The class view and the export show exactly what happened: nothing
// acknowledged lost, nothing counted twice.
func TestBrowser_WorkshopWholeRoomSurvivesAReplicaKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole room: two replicas, four browsers, 27 simulated learners (over a minute)")
	}
	db := pgtest.Database(t)
	instructor := browsertest.New(t)
	a := startRoomReplica(t, db, "")
	b := startRoomReplica(t, db, "")
	start := time.Now()
	step := func(what string) { t.Logf("%6.1fs %s", time.Since(start).Seconds(), what) }
	check, err := pgstore.Open(t.Context(), db) // the test's own view of the store
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { check.Close() })
	spec := builtinExercise(t, "dedupe-credit")

	// The instructor, on replica B, makes a room with every lesson and exercise.
	run(t, instructor, chromedp.Navigate(b.url()+"/workshop?key="+testInstructorKey))
	waitFor(t, instructor, `[data-testid="ws-create-form"]`)
	eval[bool](t, instructor, `document.querySelector('[data-testid="ws-new-room-name"]').value = "Whole room", true`)
	click(t, instructor, `[data-testid="ws-create"]`)
	waitFor(t, instructor, `[data-testid="ws-class"]`)
	code := eval[string](t, instructor, `document.querySelector('[data-testid="ws-code"]').textContent`)
	room, err := check.RoomByCode(t.Context(), workshop.Code(code))
	if err != nil {
		t.Fatalf("the class view shows code %q: %v", code, err)
	}
	// checks counts a learner's checks the server recorded, and events
	// their events of one kind.
	events := func(name string, kind workshop.Kind) int {
		ls, err := check.Learners(t.Context(), room.ID)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := check.Events(t.Context(), room.ID, 0, false, 100_000)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range ls {
			for _, e := range evs {
				if l.Name == name && e.LearnerID == l.ID && e.Kind == kind {
					n++
				}
			}
		}
		return n
	}

	// Ada and Bob join on B, Cy on A, in browsers of their own.
	browsers := map[string]context.Context{}
	home := map[string]*replica{"Ada": b, "Bob": b, "Cy": a}
	for _, name := range []string{"Ada", "Bob", "Cy"} {
		ctx, cancel := chromedp.NewContext(instructor, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		browsers[name] = ctx
		run(t, ctx, chromedp.Navigate(home[name].url()+"/join?code="+code))
		waitFor(t, ctx, `[data-testid="ws-join-form"]`)
		eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="ws-join-name"]').value = %q, true`, name))
		click(t, ctx, `[data-testid="ws-join-submit"]`)
		waitFor(t, ctx, `[data-testid="ws-room"] [data-testid="ws-room-name"]`)
	}
	// 27 more join over HTTP from one address, alternately on A and B.
	const simulated = 27
	sims := make([]*http.Client, simulated)
	simHome := make([]*replica, simulated)
	for i := range sims {
		sims[i], simHome[i] = natClient(), []*replica{a, b}[i%2]
		resp, err := sims[i].PostForm(simHome[i].url()+"/join", url.Values{"key": {fmt.Sprintf("join-sim-%02d", i)}, "code": {code}, "name": {fmt.Sprintf("Sim %02d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("simulated learner %d joined with %d", i, resp.StatusCode)
		}
	}
	if err := pollFor(instructor, 30*time.Second, `document.querySelectorAll('[data-testid="ws-row"]').length === 30`); err != nil {
		t.Fatalf("the class view does not list the 30 learners: %v", err)
	}
	step("30 joined")

	// Each learner checks three times: Ada and Cy fail twice then pass,
	// Bob fails three times; a third of the simulated learners never pass.
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	plan := map[string][]bool{"Ada": {false, false, true}, "Bob": {false, false, false}, "Cy": {false, false, true}}
	for name, checks := range plan {
		ctx := browsers[name]
		run(t, ctx, chromedp.Navigate(home[name].url()+playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID))
		exWait(t, ctx, "the editor", `document.querySelector('`+sel+` textarea')`)
		waitFor(t, ctx, `[data-testid="ws-banner"]`)
		for n, pass := range checks {
			handler := spec.Start
			if pass {
				handler = spec.Solution
			}
			eval[bool](t, ctx, fmt.Sprintf(`(() => { const a = document.querySelector('%s textarea'); a.value = %s; a.dispatchEvent(new Event("input", {bubbles: true})); return true })()`, sel, strconv.Quote(handler)))
			exClick(t, ctx, sel+` [data-testid="exercise-check"]`)
			for deadline := time.Now().Add(60 * time.Second); events(name, workshop.KindExerciseChecked) < n+1; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s's check %d was never recorded", name, n+1)
				}
			}
		}
	}
	// A refused check (429: the seat's or the address's share spent, which
	// a loaded machine's slow checks do) is sent again after Retry-After,
	// as a learner would; refusals are counted, not failed on: how many
	// there are is the load harness's measure (docs/performance.md).
	// Two check at a time: a check has a budget of 5 s, which many
	// exhaustive checks at once on a loaded machine exceed. The class view
	// must show what the server answered, whatever it was.
	var wg sync.WaitGroup
	var refusedMu sync.Mutex
	refused := 0
	simPasses := func(i int) bool { return i%3 != 0 }
	answered := make([]bool, simulated) // the last check's verdict
	slots := make(chan struct{}, 2)
	for i := range sims {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			for n := range 3 {
				handler := spec.Start
				if n == 2 && simPasses(i) {
					handler = spec.Solution
				}
				for try := 0; ; try++ {
					resp, err := sims[i].PostForm(simHome[i].url()+"/api/v1/check", url.Values{"exercise": {spec.ID}, "handler": {handler}})
					if err != nil {
						t.Error(err)
						return
					}
					var answer struct {
						Passed bool   `json:"passed"`
						Error  string `json:"error"`
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					json.Unmarshal(body, &answer)
					if resp.StatusCode == http.StatusOK && answer.Passed != (handler == spec.Solution) {
						t.Logf("simulated learner %d's check %d (the solution: %t) answered passed %t: %.200s", i, n+1, handler == spec.Solution, answer.Passed, body)
					}
					answered[i] = answer.Passed
					if resp.StatusCode == http.StatusTooManyRequests && try < 20 {
						refusedMu.Lock()
						refused++
						refusedMu.Unlock()
						wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
						time.Sleep(time.Duration(max(wait, 1)) * time.Second)
						continue
					}
					if resp.StatusCode != http.StatusOK {
						t.Errorf("simulated learner %d's check %d: %d", i, n+1, resp.StatusCode)
					}
					break
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d checks of simulated learners refused (429) and sent again", refused)
	// The class view shows each learner's real progress.
	cell := func(name string) string {
		return rowOf(name) + `?.querySelector('[data-exercise="` + spec.ID + `"]')`
	}
	want := map[string]string{"Ada": "passed", "Bob": "failing", "Cy": "passed"}
	for i := range simulated {
		want[fmt.Sprintf("Sim %02d", i)] = map[bool]string{true: "passed", false: "failing"}[answered[i]]
	}
	for name, state := range want {
		if err := pollFor(instructor, 20*time.Second, cell(name)+`?.dataset.state === "`+state+`"`); err != nil {
			t.Errorf("the class view shows %s as %q, want %s", name, eval[string](t, instructor, `(`+cell(name)+` || {dataset: {}}).dataset.state || ""`), state)
		}
	}
	if got := eval[string](t, instructor, cell("Bob")+`.textContent.trim()`); !strings.Contains(got, "3 checks") {
		t.Errorf("Bob's cell reads %q, want his 3 checks", got)
	}
	step("90 checks shown")

	// Every simulated learner keeps raising and lowering a hand, each event
	// retried with its key until acknowledged, through the outage.
	const handsEach = 4
	stopSims := make(chan struct{})
	var acked sync.Map // simulated learner → events acknowledged
	for i := range sims {
		wg.Go(func() {
			for n := range handsEach {
				kind := []string{"hand_raised", "hand_lowered"}[n%2]
				key := fmt.Sprintf("sim-%02d-hand-%d", i, n)
				for {
					req, _ := http.NewRequest("POST", simHome[i].url()+"/api/v1/room/events", strings.NewReader(`{"kind":"`+kind+`"}`))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Idempotency-Key", key)
					resp, err := sims[i].Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode < 300 {
							v, _ := acked.LoadOrStore(i, new(int))
							*v.(*int)++
							break
						}
					}
					select {
					case <-stopSims:
						return
					case <-time.After(300 * time.Millisecond):
					}
				}
				time.Sleep(400 * time.Millisecond)
			}
		})
	}

	// Replica B dies under the instructor, Ada and Bob.
	run(t, browsers["Ada"], chromedp.Navigate(b.url()+"/room"))
	waitFor(t, browsers["Ada"], `[data-testid="ws-banner"]`)
	time.Sleep(500 * time.Millisecond) // the pages' feeds connect
	b.kill()
	step("B killed")
	for who, ctx := range map[string]context.Context{"the instructor": instructor, "Ada": browsers["Ada"], "Bob": browsers["Bob"]} {
		if err := pollFor(ctx, 15*time.Second, `(document.querySelector('[data-testid="ws-conn"]') || {dataset: {}}).dataset.state === "reconnecting"`); err != nil {
			t.Errorf("%s's page does not say it is reconnecting: %v", who, err)
		}
	}
	// Meanwhile Bob raises his hand (it waits on his device) and Ada
	// clicks a link (it waits instead of ending on "can't be reached").
	click(t, browsers["Bob"], `[data-testid="ws-banner-hand"]`)
	click(t, browsers["Ada"], `#ws-banner a`)
	time.Sleep(time.Second)
	if path := eval[string](t, browsers["Ada"], `location.pathname + "|" + document.querySelector('[data-testid="ws-conn"]').textContent`); !strings.HasPrefix(path, "/room|") || !strings.Contains(path, "Your click waits") {
		t.Errorf("Ada's click while the server is away: %q, want the page kept and the click said to wait", path)
	}
	if n := events("Bob", workshop.KindHandRaised); n != 0 {
		t.Fatalf("Bob's hand reached the store while his replica was dead (%d)", n)
	}
	b.start()
	step("B restarted")
	for who, ctx := range map[string]context.Context{"the instructor": instructor, "Ada": browsers["Ada"], "Bob": browsers["Bob"]} {
		if err := pollFor(ctx, 30*time.Second, `!document.querySelector('[data-testid="ws-conn"][data-state="reconnecting"]')`); err != nil {
			t.Errorf("%s's page did not come back by itself: %v", who, err)
		}
	}
	if err := pollFor(browsers["Ada"], 20*time.Second, `location.pathname === "/room" && document.readyState === "complete" && !document.querySelector('[data-testid="ws-conn"]')`); err != nil {
		t.Errorf("Ada's waiting click never went through: %v", err)
	}
	if err := pollFor(instructor, 30*time.Second, rowOf("Bob")+`?.dataset.rank === "0"`); err != nil {
		t.Errorf("after the restart the class view does not show Bob's hand: %v", err)
	}
	step("pages back")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		close(stopSims)
		<-done
		t.Errorf("the simulated learners' events were not all acknowledged within a minute of the restart")
	}

	// Nothing acknowledged is lost, nothing is counted twice.
	if n := events("Bob", workshop.KindHandRaised); n != 1 {
		t.Errorf("Bob's hand raised during the outage is stored %d times, want once", n)
	}
	for i := range simulated {
		name := fmt.Sprintf("Sim %02d", i)
		got := events(name, workshop.KindHandRaised) + events(name, workshop.KindHandLowered)
		n := 0
		if v, ok := acked.Load(i); ok {
			n = *v.(*int)
		}
		if n != handsEach || got != handsEach {
			t.Errorf("%s: %d hand events acknowledged, %d stored; want %d of each", name, n, got, handsEach)
		}
	}
	// The export agrees with what each learner did.
	c := &http.Client{Timeout: 20 * time.Second}
	req, _ := http.NewRequest("GET", a.url()+workshopweb.RoomPath(room.ID)+"/export.json", nil)
	req.AddCookie(&http.Cookie{Name: workshopweb.InstructorCookie, Value: testInstructorKey})
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var x workshop.Export
	if err := json.NewDecoder(resp.Body).Decode(&x); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range x.Results {
		if r.Exercise != spec.ID {
			continue
		}
		seen++
		if r.Attempts != 3 || (r.PassedAt != "") != (want[r.Learner] == "passed") {
			t.Errorf("export: %s made %d attempts, passed %q; want 3 attempts, %s", r.Learner, r.Attempts, r.PassedAt, want[r.Learner])
		}
	}
	if seen != 30 {
		t.Errorf("the export lists %d learners for %s, want 30", seen, spec.ID)
	}
	step("export checked")
	for _, e := range browsertest.PageErrors(instructor) {
		t.Logf("page error (the outage's failed requests are expected): %s", e)
	}
}
