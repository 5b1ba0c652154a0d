package web

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"idemlab/web/admit"
	"idemlab/web/workshopweb"
	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

// A class behind one address (a NAT) is 30 seats, each with its own fair
// share: 30 learners clicking every 2–5 s for 5 minutes are almost never
// refused, while an address without seats keeps the base share.
func TestWorkshop_SeatsBehindOneAddressEachGetAShare(t *testing.T) {
	store, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := workshop.NewService(store, nil)
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler),
		Workshop: &WorkshopConfig{Service: svc, InstructorKey: testInstructorKey}}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	s.limiter.Now = func() time.Time { return now }
	h := s.Handler()
	room, err := svc.CreateRoom(t.Context(), "form-key-room-1", workshop.RoomSpec{Name: "NAT", Lessons: []string{builtinCourse(t).Lessons[0].Slug}})
	if err != nil {
		t.Fatal(err)
	}
	const learners, nat = 30, "127.0.0.2"
	tokens := make([]workshop.Token, learners)
	for i := range tokens {
		_, l, err := svc.JoinFrom(t.Context(), nat, room.Code, workshop.Key(fmt.Sprintf("join-key-%04d", i)), fmt.Sprintf("Learner %d", i))
		if err != nil {
			t.Fatal(err)
		}
		tokens[i] = l.Token
	}
	click := func(address string, token workshop.Token) int {
		req := httptest.NewRequest("GET", "/playground?scenario=lost-ack", nil) // one state: the cache answers, the share still counts
		req.RemoteAddr = address + ":40000"
		if token != "" {
			req.AddCookie(&http.Cookie{Name: workshopweb.LearnerCookie, Value: string(token)})
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	// Every learner clicks every 2–5 s (virtual time) for 5 minutes.
	rng := rand.New(rand.NewPCG(1, 2))
	type clickAt struct {
		at      time.Duration
		learner int
	}
	var clicks []clickAt
	for i := range learners {
		for at := time.Duration(rng.IntN(3000)) * time.Millisecond; at < 5*time.Minute; at += time.Duration(2000+rng.IntN(3000)) * time.Millisecond {
			clicks = append(clicks, clickAt{at, i})
		}
	}
	sort.Slice(clicks, func(i, j int) bool { return clicks[i].at < clicks[j].at })
	start, refused := now, 0
	for _, c := range clicks {
		now = start.Add(c.at)
		switch code := click(nat, tokens[c.learner]); code {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("click: %d", code)
		}
	}
	t.Logf("%d learners behind %s: %d of %d clicks refused", learners, nat, refused, len(clicks))
	if refused*100 >= len(clicks) {
		t.Errorf("%d of %d clicks refused, want fewer than 1%%", refused, len(clicks))
	}
	// An address without seats: the base share, a burst then refusals.
	ok := 0
	for range 2 * int(admit.RateLimitBurst) {
		if click("127.0.0.3", "") == http.StatusOK {
			ok++
		}
	}
	if ok != int(admit.RateLimitBurst) {
		t.Errorf("an address without seats had %d clicks served at once, want the base burst %d", ok, int(admit.RateLimitBurst))
	}
	// A forged seat cookie adds nothing.
	ok = 0
	for i := range 2 * int(admit.RateLimitBurst) {
		if click("127.0.0.4", workshop.Token(fmt.Sprintf("forged-token-%032d", i))) == http.StatusOK {
			ok++
		}
	}
	if ok != int(admit.RateLimitBurst) {
		t.Errorf("forged seats had %d clicks served at once, want the base burst %d", ok, int(admit.RateLimitBurst))
	}
}
