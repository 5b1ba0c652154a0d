package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"idemlab/web/workshopweb"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

const testInstructorKey = "test-instructor-key-0123456789"

// workshopSite is a real server on a real port with workshop mode on.
type workshopSite struct {
	srv   *httptest.Server
	store *sqlitestore.Store
	dir   string
}

func newWorkshopSite(t testing.TB, wrap func(workshop.Store) workshop.Store) *workshopSite {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	store, err := sqlitestore.Open(t.Context(), filepath.Join(dir, sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var st workshop.Store = store
	if wrap != nil {
		st = wrap(store)
	}
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler),
		Workshop: &workshopweb.Config{Service: workshop.NewService(st, nil), InstructorKey: testInstructorKey}}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &workshopSite{srv: srv, store: store, dir: dir}
}

// client is one browser: its own cookies, redirects not followed.
func (ws *workshopSite) client(testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (ws *workshopSite) instructor(t *testing.T) *http.Client {
	c := ws.client(t)
	resp := get(t, c, ws.srv.URL+"/workshop?key="+testInstructorKey)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("instructor link: %d", resp.StatusCode)
	}
	return c
}

func get(t testing.TB, c *http.Client, u string) *http.Response {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func post(t testing.TB, c *http.Client, u string, form url.Values) *http.Response {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// createRoom creates a room with two lessons and one exercise, returning its id and code.
func (ws *workshopSite) createRoom(t testing.TB, c *http.Client, key string) (int64, workshop.Code) {
	t.Helper()
	course := builtinCourse(t)
	ex := course.Exercises()[0]
	resp := post(t, c, ws.srv.URL+"/workshop/rooms", url.Values{"key": {key}, "name": {"Tuesday"},
		"lesson": {course.Lessons[0].Slug, ex.Lesson}, "exercise": {ex.ID}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create room: %d %s", resp.StatusCode, readBody(t, resp))
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(resp.Header.Get("Location"), "/workshop/rooms/"), 10, 64)
	if err != nil {
		t.Fatalf("create room redirected to %q", resp.Header.Get("Location"))
	}
	room, err := ws.store.Room(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return id, room.Code
}

func (ws *workshopSite) join(t *testing.T, code workshop.Code, name string) *http.Client {
	t.Helper()
	c := ws.client(t)
	resp := post(t, c, ws.srv.URL+"/join", url.Values{"key": {fmt.Sprintf("join-key-%x", name)}, "code": {string(code)}, "name": {name}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/room" {
		t.Fatalf("join as %s: %d %s", name, resp.StatusCode, readBody(t, resp))
	}
	return c
}

// sendEvent posts a progress event as a learner's browser does.
func (ws *workshopSite) sendEvent(t *testing.T, c *http.Client, key, body string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", ws.srv.URL+"/api/v1/room/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestWorkshop_OffWithoutConfig(t *testing.T) {
	h := exerciseServer(t).Handler()
	for _, path := range []string{"/workshop", "/join", "/room", "/api/v1/room"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s with workshop mode off: %d, want 404", path, rec.Code)
		}
	}
}

func TestWorkshop_InstructorNeedsTheKey(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	stranger := ws.client(t)
	if resp := get(t, stranger, ws.srv.URL+"/workshop"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /workshop without the key: %d, want 403", resp.StatusCode)
	}
	if resp := get(t, stranger, ws.srv.URL+"/workshop?key=wrong-key-wrong-key"); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("a wrong instructor link: %d, cookie %q; want 403 and no cookie", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	if resp := get(t, stranger, ws.srv.URL+"/workshop"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /workshop with a wrong key: %d, want 403", resp.StatusCode)
	}
	if resp := post(t, stranger, ws.srv.URL+"/workshop/rooms", url.Values{"key": {"form-key-1234"}, "name": {"x"}, "lesson": {"x"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("create a room without the key: %d, want 403", resp.StatusCode)
	}
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	learner := ws.join(t, code, "Ada")
	room := ws.srv.URL + workshopweb.RoomPath(id)
	for _, path := range []string{room, room + "/projector", room + "/export.csv", room + "/export.json", room + "/stream"} {
		for who, c := range map[string]*http.Client{"a stranger": stranger, "a learner": learner} {
			if resp := get(t, c, path); resp.StatusCode != http.StatusForbidden {
				t.Errorf("GET %s as %s: %d, want 403", path, who, resp.StatusCode)
			}
		}
	}
	for _, action := range []string{"/push", "/end", "/delete"} {
		if resp := post(t, learner, room+action, url.Values{"key": {"form-key-5678"}, "kind": {"chaos"}, "fault": {"replay"}, "confirm": {"yes"}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s as a learner: %d, want 403", action, resp.StatusCode)
		}
	}
	if evs, _ := ws.store.Events(t.Context(), id, 0, true, 10); len(evs) != 0 {
		t.Errorf("learners' instructor actions left pushes: %+v", evs)
	}
	cookie := findCookie(inst, ws.srv.URL, workshopweb.InstructorCookie)
	if cookie == nil || cookie.Value != testInstructorKey {
		t.Errorf("instructor cookie = %+v", cookie)
	}
}

func findCookie(c *http.Client, site, name string) *http.Cookie {
	u, _ := url.Parse(site)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

func TestWorkshop_CreateRoomTwiceIsOneRoom(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id1, _ := ws.createRoom(t, inst, "form-key-room-1")
	id2, _ := ws.createRoom(t, inst, "form-key-room-1")
	if id1 != id2 {
		t.Errorf("the same form twice made rooms %d and %d", id1, id2)
	}
	rooms, _ := ws.store.Rooms(t.Context())
	if len(rooms) != 1 {
		t.Errorf("%d rooms, want 1", len(rooms))
	}
	body := readBody(t, get(t, inst, ws.srv.URL+"/workshop"))
	if !strings.Contains(body, string(rooms[0].Code)) {
		t.Errorf("the room list lacks the code %s", rooms[0].Code)
	}
}

func TestWorkshop_CreateRoomRejectsNamingTheField(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"name": {"R"}, "lesson": {"01-intro"}}, "hidden key"},
		{url.Values{"key": {"form-key-0001"}, "name": {"R"}}, "at least one lesson"},
		{url.Values{"key": {"form-key-0002"}, "name": {"R"}, "lesson": {"no-such-lesson"}}, "no lesson"},
		{url.Values{"key": {"form-key-0003"}, "name": {""}, "lesson": {builtinCourse(t).Lessons[0].Slug}}, "name: missing"},
	} {
		resp := post(t, inst, ws.srv.URL+"/workshop/rooms", tc.form)
		if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("create %v: %d, want 400 saying %q", tc.form, resp.StatusCode, tc.want)
		}
	}
}

func TestWorkshop_JoinSetsASafeCookieOnce(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	id, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	c := ws.client(t)
	form := url.Values{"key": {"join-key-ada-1"}, "code": {strings.ToLower(strings.ReplaceAll(string(code), "-", ""))}, "name": {"Ada"}}
	var cookies []string
	for range 2 { // a double-clicked Join
		resp := post(t, c, ws.srv.URL+"/join", form)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("join: %d %s", resp.StatusCode, readBody(t, resp))
		}
		cookies = append(cookies, resp.Header.Get("Set-Cookie"))
	}
	if cookies[0] != cookies[1] {
		t.Errorf("a double join gave two seats: %q, %q", cookies[0], cookies[1])
	}
	for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(cookies[0], attr) {
			t.Errorf("learner cookie %q lacks %s", cookies[0], attr)
		}
	}
	if strings.Contains(cookies[0], "Secure") {
		t.Errorf("learner cookie %q is Secure over plain http", cookies[0])
	}
	if ls, _ := ws.store.Learners(t.Context(), id); len(ls) != 1 {
		t.Errorf("%d learners after a double join, want 1", len(ls))
	}
	body := readBody(t, get(t, c, ws.srv.URL+"/room"))
	if !strings.Contains(body, `data-testid="ws-room-name">Ada<`) || !strings.Contains(body, "/room?ws=") {
		t.Errorf("the room page lacks the banner or the resume link")
	}
	// The resume link on another device: the cookie follows, the token leaves the URL.
	other := ws.client(t)
	resume := regexp.MustCompile(`/room\?ws=([a-z2-7]{26})`).FindStringSubmatch(body)
	resp := get(t, other, ws.srv.URL+resume[0])
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/room" {
		t.Fatalf("resume link: %d → %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := get(t, other, ws.srv.URL+"/api/v1/room"); resp.StatusCode != http.StatusOK || !strings.Contains(readBody(t, resp), `"name":"Ada"`) {
		t.Errorf("after the resume link, the other device is not Ada")
	}
}

func TestWorkshop_SecureCookieUnderHTTPS(t *testing.T) {
	store, _ := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "w.db"))
	defer store.Close()
	s, err := NewServer(Config{PublicURL: "https://learn.example.org", Workshop: &workshopweb.Config{Service: workshop.NewService(store, nil), InstructorKey: testInstructorKey}}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/workshop?key="+testInstructorKey, nil))
	if c := rec.Header().Get("Set-Cookie"); !strings.Contains(c, "Secure") || !strings.Contains(c, "HttpOnly") {
		t.Errorf("instructor cookie under https = %q, want Secure; HttpOnly", c)
	}
}

func TestWorkshop_WrongCodesAreRateLimited(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	_, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	// A class behind one address joins freely.
	for i := range 15 {
		ws.join(t, code, fmt.Sprint("Learner ", i))
	}
	c := ws.client(t)
	var last *http.Response
	for i := range 11 {
		last = post(t, c, ws.srv.URL+"/join", url.Values{"key": {fmt.Sprintf("join-guess-%04d", i)}, "code": {"KQ7-M4P"}, "name": {"Mallory"}})
		if i < 10 && last.StatusCode != http.StatusNotFound {
			t.Fatalf("guess %d: %d, want 404 (no such room)", i+1, last.StatusCode)
		}
	}
	if last.StatusCode != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
		t.Errorf("the 11th guess in a minute: %d (Retry-After %q), want 429 with Retry-After", last.StatusCode, last.Header.Get("Retry-After"))
	}
	if resp := post(t, c, ws.srv.URL+"/join", url.Values{"key": {"join-key-right"}, "code": {string(code)}, "name": {"Mallory"}}); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right code after 10 wrong ones: %d, want 429 (the guesser waits)", resp.StatusCode)
	}
}

func TestWorkshop_EventIsIdempotent(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	id, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	room, _ := ws.store.Room(t.Context(), id)
	ex := room.Exercises[0]
	ada := ws.join(t, code, "Ada")
	body := `{"kind":"hint_used","exercise":"` + ex + `","hint":1}`
	status, first, h := ws.sendEvent(t, ada, "0b6f2c1e-8f8a-4c53-9a3e-000000000001", body)
	if status != http.StatusCreated || h.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first POST: %d %s", status, first)
	}
	// The same event again, spaced differently: the stored answer.
	status, again, h := ws.sendEvent(t, ada, "0b6f2c1e-8f8a-4c53-9a3e-000000000001", strings.ReplaceAll(body, ",", ", "))
	if status != http.StatusCreated || again != first || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s (replayed %q), want 201 %s replayed", status, again, h.Get("Idempotent-Replayed"), first)
	}
	status, msg, _ := ws.sendEvent(t, ada, "0b6f2c1e-8f8a-4c53-9a3e-000000000001", `{"kind":"hand_raised"}`)
	if status != http.StatusUnprocessableEntity || !strings.Contains(msg, `"field":"Idempotency-Key"`) {
		t.Errorf("key reused with another body: %d %s, want 422 naming Idempotency-Key", status, msg)
	}
	for _, tc := range []struct{ key, body, field string }{
		{"", body, "Idempotency-Key"},
		{"short", body, "Idempotency-Key"},
		{"0b6f2c1e-8f8a-4c53-9a3e-000000000002", `{"kind":"hint_used","exercise":"` + ex + `"}`, "hint"},
		{"0b6f2c1e-8f8a-4c53-9a3e-000000000006", `{"kind":"exercise_checked","exercise":"` + ex + `","passed":true}`, "kind"},
		{"0b6f2c1e-8f8a-4c53-9a3e-000000000003", `{"kind":"pace"}`, "kind"},
		{"0b6f2c1e-8f8a-4c53-9a3e-000000000004", `not json`, "body"},
	} {
		status, msg, _ := ws.sendEvent(t, ada, tc.key, tc.body)
		if status != http.StatusBadRequest || !strings.Contains(msg, `"field":"`+tc.field+`"`) {
			t.Errorf("POST %q with key %q: %d %s, want 400 naming %s", tc.body, tc.key, status, msg, tc.field)
		}
	}
	if status, msg, _ := ws.sendEvent(t, ada, "0b6f2c1e-8f8a-4c53-9a3e-000000000007", `{"kind":"hint_used","exercise":"not-in-room","hint":1}`); status != http.StatusUnprocessableEntity || !strings.Contains(msg, `"field":"exercise"`) {
		t.Errorf("an exercise outside the room: %d %s, want 422 naming exercise", status, msg)
	}
	evs, _ := ws.store.Events(t.Context(), id, 0, false, 100)
	if len(evs) != 2 { // joined + the one hint
		t.Errorf("%d events stored, want 2: %+v", len(evs), evs)
	}
	if status, _, _ := ws.sendEvent(t, ws.client(t), "0b6f2c1e-8f8a-4c53-9a3e-000000000005", body); status != http.StatusUnauthorized {
		t.Errorf("an event from outside any room: %d, want 401", status)
	}
}

// gateStore holds every Append until released, so duplicates overlap.
type gateStore struct {
	workshop.Store
	entered chan struct{}
	release chan struct{}
}

func (g *gateStore) Append(ctx context.Context, key workshop.Key, e workshop.Event) (workshop.Event, bool, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.Store.Append(ctx, key, e)
}

func TestWorkshop_ConcurrentDuplicateIs409(t *testing.T) {
	var gate *gateStore
	ws := newWorkshopSite(t, func(s workshop.Store) workshop.Store {
		gate = &gateStore{Store: s, entered: make(chan struct{}, 100), release: make(chan struct{})}
		return gate
	})
	_, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	ada := ws.join(t, code, "Ada")
	const key, body = "0b6f2c1e-8f8a-4c53-9a3e-0000000000aa", `{"kind":"hand_raised"}`
	var wg sync.WaitGroup
	var first string
	wg.Go(func() {
		var status int
		status, first, _ = ws.sendEvent(t, ada, key, body)
		if status != http.StatusCreated {
			t.Errorf("first: %d %s", status, first)
		}
	})
	<-gate.entered // the first is inside the store now
	status, msg, _ := ws.sendEvent(t, ada, key, body)
	if status != http.StatusConflict || !strings.Contains(msg, "in progress") && !strings.Contains(msg, "being processed") {
		t.Errorf("a duplicate while the first is in progress: %d %s, want 409", status, msg)
	}
	close(gate.release)
	wg.Wait()
	status, again, h := ws.sendEvent(t, ada, key, body)
	if status != http.StatusCreated || again != first || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry after 409: %d %s, want the stored %s", status, again, first)
	}
}

func TestWorkshop_StormOfDuplicatesHasOneEffectEach(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	id, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	room, _ := ws.store.Room(t.Context(), id)
	ex := room.Exercises[0]
	ada := ws.join(t, code, "Ada")
	const keys, copies = 20, 8
	answers := make([][]string, keys)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := range keys {
		for range copies {
			wg.Go(func() {
				key := fmt.Sprintf("storm-key-%04d", k)
				body := fmt.Sprintf(`{"kind":"hint_used","exercise":%q,"hint":%d}`, ex, k+1)
				for {
					status, ack, _ := ws.sendEvent(t, ada, key, body)
					if status == http.StatusConflict {
						time.Sleep(5 * time.Millisecond) // as the browser does: retry later
						continue
					}
					if status != http.StatusCreated {
						t.Errorf("key %d: %d %s", k, status, ack)
					}
					mu.Lock()
					answers[k] = append(answers[k], ack)
					mu.Unlock()
					return
				}
			})
		}
	}
	wg.Wait()
	for k, acks := range answers {
		for _, a := range acks {
			if a != acks[0] {
				t.Errorf("key %d answered %s and %s", k, acks[0], a)
			}
		}
	}
	if evs, _ := ws.store.Events(t.Context(), id, 0, false, 1000); len(evs) != keys+1 {
		t.Errorf("%d events after %d copies of %d events, want %d", len(evs), copies, keys, keys+1)
	}
}

// sse reads server-sent events from a stream.
type sse struct {
	r    *bufio.Reader
	body io.Closer
}

type sseEvent struct {
	id, event, data string
}

func openStream(t testing.TB, c *http.Client, u, lastEventID string) *sse {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	cc := *c
	cc.Timeout = 0
	resp, err := cc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sse{r: bufio.NewReader(resp.Body), body: resp.Body}
}

// read returns the next event, or false when the stream ends.
func (s *sse) read() (sseEvent, bool) {
	var e sseEvent
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return e, false
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && e.event != "":
			e.data = strings.Join(data, "\n")
			return e, true
		case strings.HasPrefix(line, "id: "):
			e.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			e.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[6:])
		}
	}
}

// next returns the next event, failing the test after timeout.
func (s *sse) next(t *testing.T, timeout time.Duration) sseEvent {
	t.Helper()
	got := make(chan sseEvent, 1)
	go func() {
		if e, ok := s.read(); ok {
			got <- e
		}
		close(got)
	}()
	select {
	case e, ok := <-got:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(timeout):
		t.Fatalf("no event within %v", timeout)
	}
	return sseEvent{}
}

func TestWorkshop_ClassViewIsLiveAndResumes(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	ada := ws.join(t, code, "Ada")
	bob := ws.join(t, code, "Bob")
	streamURL := ws.srv.URL + workshopweb.RoomPath(id) + "/stream"
	s := openStream(t, inst, streamURL, "")
	rows := map[string]bool{}
	var e sseEvent
	for e = s.next(t, 5*time.Second); e.event == "row"; e = s.next(t, 5*time.Second) {
		rows[regexp.MustCompile(`ws-row-name">([^<]*)<`).FindStringSubmatch(e.data)[1]] = true
	}
	if !rows["Ada"] || !rows["Bob"] || e.event != "summary" || e.id == "" {
		t.Fatalf("first rows %v then %s (id %q), want Ada, Bob, a summary with an id", rows, e.event, e.id)
	}
	resumeAt := e.id
	ws.sendEvent(t, bob, "bob-hand-key-1", `{"kind":"hand_raised"}`)
	start := time.Now()
	e = s.next(t, time.Second)
	if e.event != "row" || !strings.Contains(e.data, ">Bob<") || !strings.Contains(e.data, `data-rank="0"`) || !strings.Contains(e.data, workshop.StuckHand) {
		t.Errorf("after Bob raised his hand: %s %s", e.event, e.data)
	}
	t.Logf("the class view heard the event in %v", time.Since(start))
	// Reconnect with Last-Event-ID from before the hand: only Bob's row comes again.
	ws.sendEvent(t, ada, "ada-lesson-key-1", `{"kind":"lesson_opened","lesson":"`+builtinCourse(t).Lessons[0].Slug+`"}`)
	s2 := openStream(t, inst, streamURL, resumeAt)
	var names []string
	for e = s2.next(t, 5*time.Second); e.event == "row"; e = s2.next(t, 5*time.Second) {
		names = append(names, regexp.MustCompile(`ws-row-name">([^<]*)<`).FindStringSubmatch(e.data)[1])
	}
	if len(names) != 2 {
		t.Errorf("resuming after %s sent rows %v, want Bob's and Ada's (both changed since)", resumeAt, names)
	}
	s3 := openStream(t, inst, streamURL, e.id)
	if e = s3.next(t, 5*time.Second); e.event != "summary" {
		t.Errorf("resuming at the latest id sent %s first, want only the summary", e.event)
	}
}

func TestWorkshop_LearnerHearsPushesAndNothingOfOthers(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	ada := ws.join(t, code, "Ada")
	bob := ws.join(t, code, "Bob")
	s := openStream(t, ada, ws.srv.URL+"/api/v1/room/stream", "")
	room, _ := ws.store.Room(t.Context(), id)
	ws.check(t, bob, room.Exercises[0], "-- bob's secret\n"+builtinExercise(t, room.Exercises[0]).Start, false)
	for range 2 { // a double-clicked chaos button
		if resp := post(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/push", url.Values{"key": {"form-key-chaos-1"}, "kind": {"chaos"}, "fault": {"lose-ack"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("chaos push: %d %s", resp.StatusCode, readBody(t, resp))
		}
	}
	e := s.next(t, 2*time.Second)
	var p workshopweb.PushJSON
	if err := json.Unmarshal([]byte(e.data), &p); err != nil || e.event != "push" || p.Kind != workshop.KindChaos || p.Line != "redeliver {msg} lose-ack" {
		t.Fatalf("Ada's first event: %s %s, want the chaos push", e.event, e.data)
	}
	post(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/push", url.Values{"key": {"form-key-pace-1"}, "kind": {"pace"}, "mode": {"goto"}, "lesson": {"2"}})
	e = s.next(t, 2*time.Second)
	if !strings.Contains(e.data, `"kind":"pace"`) || strings.Contains(e.data, "secret") {
		t.Errorf("Ada's second event: %s, want the pace push (one chaos only, nothing of Bob)", e.data)
	}
	// A stream resumed after the chaos push gets the pace only.
	s2 := openStream(t, ada, ws.srv.URL+"/api/v1/room/stream", strconv.FormatInt(p.ID, 10))
	if e := s2.next(t, 2*time.Second); !strings.Contains(e.data, `"kind":"pace"`) {
		t.Errorf("resumed after the chaos: %s", e.data)
	}
	me := readBody(t, get(t, ada, ws.srv.URL+"/api/v1/room"))
	if strings.Contains(me, "Bob") || !strings.Contains(me, `"name":"Ada"`) {
		t.Errorf("Ada's own data: %s", me)
	}
}

func TestWorkshop_ProjectorShowsCodeAndQR(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	body := readBody(t, get(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/projector"))
	for _, want := range []string{string(code), "/join?code=" + string(code), "<svg", `aria-label="QR code of the join link"`, `<path fill="#000" d="M`} {
		if !strings.Contains(body, want) {
			t.Errorf("the projector page lacks %q", want)
		}
	}
}

func TestWorkshop_ChaosLinesAreScripts(t *testing.T) {
	for _, f := range workshopweb.ChaosFaults {
		line := strings.ReplaceAll(f.Line, "{msg}", "msg-1")
		if _, err := playgroundParseScript("deliver msg-1; " + line); err != nil {
			t.Errorf("chaos %s: %q does not parse: %v", f.Name, line, err)
		}
	}
}

func TestWorkshop_ExportEndAndDelete(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	room, _ := ws.store.Room(t.Context(), id)
	ex := room.Exercises[0]
	ada := ws.join(t, code, "=Ada")
	spec := builtinExercise(t, ex)
	ws.check(t, ada, ex, spec.Start, false)
	ws.check(t, ada, ex, spec.Solution, true)
	ws.sendEvent(t, ada, "ada-key-00002", `{"kind":"hint_used","exercise":"`+ex+`","hint":1}`)
	csv := readBody(t, get(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/export.csv"))
	if !regexp.MustCompile(`(?m)^'=Ada,\d+,` + regexp.QuoteMeta(ex) + `,2,20\d\d-[^,]+,\d+,1$`).MatchString(csv) {
		t.Errorf("CSV export:\n%s", csv)
	}
	var x workshop.Export
	if err := json.Unmarshal([]byte(readBody(t, get(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/export.json"))), &x); err != nil || len(x.Results) != 1 || x.Results[0].Attempts != 2 || x.Results[0].PassedAt == "" {
		t.Errorf("JSON export: %+v, %v", x, err)
	}
	for range 2 {
		if resp := post(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/end", url.Values{"key": {"form-key-end-1"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("end: %d", resp.StatusCode)
		}
	}
	if status, _, _ := ws.sendEvent(t, ada, "ada-key-00003", `{"kind":"hand_raised"}`); status != http.StatusGone {
		t.Errorf("an event after the end: %d, want 410", status)
	}
	if status, _, h := ws.sendEvent(t, ada, "ada-key-00002", `{"kind":"hint_used","exercise":"`+ex+`","hint":1}`); status != http.StatusCreated || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a retry of an acknowledged event after the end: %d, want the stored 201", status)
	}
	if resp := post(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/delete", url.Values{}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("delete without confirming: %d, want 400", resp.StatusCode)
	}
	for range 2 {
		if resp := post(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/delete", url.Values{"confirm": {"yes"}}); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("delete: %d", resp.StatusCode)
		}
	}
	if resp := get(t, ada, ws.srv.URL+"/api/v1/room"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a learner of a deleted room: %d, want 401", resp.StatusCode)
	}
	if resp := get(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/export.csv"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("export of a deleted room: %d, want 404", resp.StatusCode)
	}
}

func TestWorkshop_NoRoomWritesNothing(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	learner := ws.client(t)
	get(t, learner, ws.srv.URL+"/join?code=KQ7-M4P")
	post(t, learner, ws.srv.URL+"/join", url.Values{"key": {"join-key-0001"}, "code": {"KQ7-M4P"}, "name": {"Ada"}})
	get(t, learner, ws.srv.URL+"/")
	get(t, ws.instructor(t), ws.srv.URL+"/workshop")
	if _, err := os.Stat(ws.dir); !os.IsNotExist(err) {
		t.Errorf("without a room, %s exists (%v)", ws.dir, err)
	}
	if u, _ := url.Parse(ws.srv.URL); len(learner.Jar.Cookies(u)) != 0 {
		t.Errorf("a failed join set cookies: %v", learner.Jar.Cookies(u))
	}
}
