package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

// A seat's event flood past its burst is told 429 with Retry-After, not 500.
func TestWorkshop_EventFloodIs429(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	_, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	ada := ws.join(t, code, "Ada")
	limits := workshop.DefaultLimits()
	for i := range int(limits.EventBurst) + 5 {
		kind := "hand_raised"
		if i%2 == 1 {
			kind = "hand_lowered"
		}
		status, body, h := ws.sendEvent(t, ada, fmt.Sprintf("flood-key-%06d", i), `{"kind":"`+kind+`"}`)
		if status == http.StatusCreated {
			continue
		}
		if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(body, `"error"`) || i < int(limits.EventBurst) {
			t.Fatalf("event %d: %d %s (Retry-After %q), want 429 with Retry-After past the burst", i+1, status, body, h.Get("Retry-After"))
		}
		return
	}
	t.Fatal("no event was refused past the burst")
}

// A full room refuses a join with 409, its page saying why.
func TestWorkshop_FullRoomIs409(t *testing.T) {
	store, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := workshop.NewService(store, nil)
	limits := workshop.DefaultLimits()
	limits.SeatsPerRoom = 1
	svc.SetLimits(limits)
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler), Workshop: &WorkshopConfig{Service: svc, InstructorKey: testInstructorKey}}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	ws := &workshopSite{srv: srv, store: store}
	_, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	ws.join(t, code, "Ada")
	resp := post(t, ws.client(t), srv.URL+"/join", url.Values{"key": {"join-key-bob"}, "code": {string(code)}, "name": {"Bob"}})
	if body := readBody(t, resp); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "full") {
		t.Errorf("a join to a full room: %d, want 409 saying it is full", resp.StatusCode)
	}
}

// Wrong instructor keys from one address are limited: 429 with Retry-After.
func TestWorkshop_WrongInstructorKeysAreLimited(t *testing.T) {
	ws := newWorkshopSite(t, nil)
	c := ws.client(t)
	for i := range workshop.KeyAttemptsBurst + 2 {
		resp := get(t, c, ws.srv.URL+"/workshop?key=wrong-key-"+fmt.Sprint(i)+"-0123456789abcdef")
		switch {
		case resp.StatusCode == http.StatusForbidden && i < workshop.KeyAttemptsBurst:
		case resp.StatusCode == http.StatusTooManyRequests && i >= workshop.KeyAttemptsBurst && resp.Header.Get("Retry-After") != "":
		default:
			t.Fatalf("wrong key %d: %d (Retry-After %q)", i+1, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}
