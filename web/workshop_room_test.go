package web

import (
	"fmt"
	"idemlab/web/admit"
	"idemlab/web/workshopweb"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

// roomServer is a server in workshop mode over real HTTP, with its service
// and the Server itself (for its limiter).
func roomServer(t *testing.T, cfg Config) (*Server, *workshop.Service, *httptest.Server) {
	t.Helper()
	store, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := workshop.NewService(store, nil)
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Workshop = &workshopweb.Config{Service: svc, InstructorKey: testInstructorKey}
	s, err := NewServer(cfg, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, svc, srv
}

// The seats joined from an address count for its fair share from the
// join on (admit.RateLimiter.SeatsJoined), before their first click; a
// join sent twice is one seat.
func TestWorkshop_JoinsCountForTheAddressShare(t *testing.T) {
	s, svc, srv := roomServer(t, Config{})
	ws := &workshopSite{srv: srv}
	room, err := svc.CreateRoom(t.Context(), "form-key-room-1", workshop.RoomSpec{Name: "NAT", Lessons: []string{builtinCourse(t).Lessons[0].Slug}})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.limiter.SeatsCounted("127.0.0.1"); n != 0 {
		t.Fatalf("%d seats counted before any join", n)
	}
	for i, name := range []string{"Ada", "Bob", "Cy", "Ada"} { // the second Ada is Ada's form sent again
		ws.join(t, room.Code, name)
		want := min(i+1, 3)
		if n := s.limiter.SeatsCounted("127.0.0.1"); n != want {
			t.Errorf("after join %d (%s): %d seats counted for the address, want %d", i+1, name, n, want)
		}
	}
}

// rowsUntilSummary reads a class stream's events up to its summary: the
// names of the rows sent, the ids removed, and the summary's learners.
func rowsUntilSummary(t *testing.T, s *sse) (rows []string, removed []string, learners string) {
	t.Helper()
	name := regexp.MustCompile(`ws-row-name">([^<]*)<`)
	for {
		e := s.next(t, 10*time.Second)
		switch e.event {
		case "row":
			rows = append(rows, name.FindStringSubmatch(e.data)[1])
		case "remove":
			removed = append(removed, e.data)
		case "summary":
			m := regexp.MustCompile(`data-learners="(\d+)"`).FindStringSubmatch(e.data)
			if m == nil {
				t.Fatalf("a summary without the room's learner count: %.200s", e.data)
			}
			return rows, removed, m[1]
		}
	}
}

// With more learners than a page, the class view's live feed sends only
// the rows of the page the instructor looks at, and the room's counts; a
// row that moves onto or off the page comes or goes.
func TestWorkshop_ClassStreamSendsOnlyItsPage(t *testing.T) {
	_, svc, srv := roomServer(t, Config{})
	ws := &workshopSite{srv: srv}
	inst := ws.instructor(t)
	room, err := svc.CreateRoom(t.Context(), "form-key-room-1", workshop.RoomSpec{Name: "Big", Lessons: []string{builtinCourse(t).Lessons[0].Slug}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 250
	learners := make([]workshop.Learner, n)
	ids := map[string]string{}
	for i := range learners {
		_, l, err := svc.JoinFrom(t.Context(), fmt.Sprintf("10.0.%d.%d", i/200, i%200), room.Code, workshop.Key(fmt.Sprintf("join-key-%04d", i)), fmt.Sprintf("L%03d", i))
		if err != nil {
			t.Fatal(err)
		}
		learners[i] = l
		ids[l.Name] = fmt.Sprint(l.ID)
	}
	base := srv.URL + workshopweb.RoomPath(room.ID) + "/stream"
	pages := map[int]*sse{}
	for _, tc := range []struct {
		page        int
		first, last string
		rows        int
	}{
		{1, "L000", "L099", 100},
		{2, "L100", "L199", 100},
		{3, "L200", "L249", 50},
	} {
		u := base
		if tc.page > 1 {
			u += fmt.Sprintf("?page=%d", tc.page)
		}
		pages[tc.page] = openStream(t, inst, u, "")
		rows, _, count := rowsUntilSummary(t, pages[tc.page])
		slices.Sort(rows)
		if len(rows) != tc.rows || rows[0] != tc.first || rows[len(rows)-1] != tc.last || count != "250" {
			t.Errorf("page %d: %d rows %s…%s, summary of %s learners; want %d rows %s…%s of 250", tc.page, len(rows), first(rows), lastOf(rows), count, tc.rows, tc.first, tc.last)
		}
	}
	// The class view page agrees: page 3 shows 50 rows of 250, and its
	// feed is that page's.
	resp := get(t, inst, srv.URL+workshopweb.RoomPath(room.ID)+"?page=3")
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, stream := doc.Find(`[data-testid="ws-row"]`).Length(), doc.Find(`[data-testid="ws-class"]`).AttrOr("data-stream", ""); got != 50 || !strings.HasSuffix(stream, "/stream?page=3") {
		t.Errorf("page 3 shows %d rows with the feed %q; want 50 and its page's feed", got, stream)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="ws-learner-count"]`).Text()); got != "250" {
		t.Errorf("page 3 counts %q learners, want the room's 250", got)
	}

	// L150 (page 2) raises a hand: needing help, the row goes first. Page
	// 1 gets it and loses its last row; page 3 gains L199 and loses L249.
	send := func(l workshop.Learner, key, body string) {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/room/events", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		req.AddCookie(&http.Cookie{Name: workshopweb.LearnerCookie, Value: string(l.Token)})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			t.Fatalf("event %s: %d", body, resp.StatusCode)
		}
	}
	send(learners[150], "l150-hand-1", `{"kind":"hand_raised"}`)
	for _, tc := range []struct {
		page          int
		rows, removed []string
	}{
		{1, []string{"L150"}, []string{ids["L099"]}},
		{2, []string{"L099"}, []string{ids["L150"]}},
		{3, nil, nil}, // page 3 still shows L200…L249: none moved on or off it
	} {
		rows, removed, count := rowsUntilSummary(t, pages[tc.page])
		if strings.Join(rows, ",") != strings.Join(tc.rows, ",") || strings.Join(removed, ",") != strings.Join(tc.removed, ",") || count != "250" {
			t.Errorf("page %d after L150's hand: rows %v, removed %v, %s learners; want rows %v, removed %v, 250", tc.page, rows, removed, count, tc.rows, tc.removed)
		}
	}
	// L010 (page 1) opens a lesson: only page 1 gets a row; every page the counts.
	send(learners[10], "l010-lesson-1", `{"kind":"lesson_opened","lesson":"`+builtinCourse(t).Lessons[0].Slug+`"}`)
	for page, want := range map[int]string{1: "L010", 2: "", 3: ""} {
		rows, removed, _ := rowsUntilSummary(t, pages[page])
		if strings.Join(rows, ",") != want || len(removed) != 0 {
			t.Errorf("page %d after L010 opened a lesson: rows %v removed %v; want %q", page, rows, removed, want)
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func lastOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// A refusal that passes (429 past a share, 503 while the workshop store
// is away) is a short page that says what happened and when the page
// tries again by itself (Refresh, which works without JavaScript), with a
// link to try now and one back; a POST is never repeated by itself.
func TestWorkshop_RefusalPagesRetryThemselves(t *testing.T) {
	_, svc, srv := roomServer(t, Config{Share: admit.Share{PerSecond: 0.001, Burst: 1}})
	room, err := svc.CreateRoom(t.Context(), "form-key-room-1", workshop.RoomSpec{Name: "Tuesday", Lessons: []string{builtinCourse(t).Lessons[0].Slug}})
	if err != nil {
		t.Fatal(err)
	}
	lesson := "/lessons/" + builtinCourse(t).Lessons[0].Slug
	click := "/playground?scenario=lost-ack&script=deliver+msg-1"
	do := func(method, path, referer string, form url.Values) (*http.Response, *goquery.Document) {
		var body *strings.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		} else {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, srv.URL+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if referer != "" {
			req.Header.Set("Referer", referer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		doc, err := goquery.NewDocumentFromReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, doc
	}
	if resp, _ := do("GET", click, "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the first click: %d", resp.StatusCode)
	}
	resp, doc := do("GET", click, srv.URL+lesson, nil)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the second click past a share of 1: %d, want 429", resp.StatusCode)
	}
	retry := resp.Header.Get("Retry-After")
	if retry == "" || resp.Header.Get("Refresh") != retry {
		t.Errorf("429: Retry-After %q, Refresh %q; want the page to load itself again when the share allows", retry, resp.Header.Get("Refresh"))
	}
	for sel, want := range map[string]string{
		`[data-testid="error-retry"]`: click,
		`[data-testid="error-back"]`:  lesson,
		`[data-testid="error-home"]`:  "/",
	} {
		if got := doc.Find(sel).AttrOr("href", "(none)"); got != want {
			t.Errorf("429: %s links to %q, want %q", sel, got, want)
		}
	}
	if note := doc.Find(`[data-testid="error-retry-note"]`).Text(); !strings.Contains(note, "tries again by itself in "+retry) {
		t.Errorf("429: the note %q does not say when the page tries again", note)
	}
	if doc.Find(`.error-suggestions, [data-testid="error-page"] ol`).Length() != 0 {
		t.Error("429: the page lists the lessons; a refusal page is short")
	}

	// A POST refused (wrong join codes) is not repeated by itself.
	for i := range 11 {
		resp, doc = do("POST", "/join", srv.URL+"/join", url.Values{"key": {fmt.Sprintf("join-guess-%04d", i)}, "code": {"KQ7-M4P"}, "name": {"Mallory"}})
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Refresh") != "" || doc.Find(`[data-testid="error-retry"]`).Length() != 0 {
		t.Errorf("a refused POST: %d, Refresh %q, retry link %d; want 429 without either", resp.StatusCode, resp.Header.Get("Refresh"), doc.Find(`[data-testid="error-retry"]`).Length())
	}
	if got := doc.Find(`[data-testid="error-back"]`).AttrOr("href", ""); got != "/join" {
		t.Errorf("a refused POST links back to %q, want /join", got)
	}
	_ = room
}

// While the workshop store is away, a learner's page is a 503 that says
// so and loads itself again (Refresh) until the store is back.
func TestWorkshop_StoreAwayPageRetriesItself(t *testing.T) {
	var down *downStore
	ws := newWorkshopSite(t, func(s workshop.Store) workshop.Store {
		down = &downStore{Store: s}
		return down
	})
	_, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	ada := ws.join(t, code, "Ada")
	down.down.Store(true)
	resp := get(t, ada, ws.srv.URL+"/room")
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Refresh") == "" || resp.Header.Get("Refresh") != resp.Header.Get("Retry-After") {
		t.Errorf("the store away: %d, Refresh %q, Retry-After %q; want 503 that loads itself again", resp.StatusCode, resp.Header.Get("Refresh"), resp.Header.Get("Retry-After"))
	}
	if got := doc.Find(`[data-testid="error-retry"]`).AttrOr("href", ""); got != "/room" {
		t.Errorf("the 503's retry link: %q, want /room", got)
	}
	down.down.Store(false)
	if resp := get(t, ada, ws.srv.URL+"/room"); resp.StatusCode != http.StatusOK {
		t.Errorf("the store back: %d", resp.StatusCode)
	}
}
