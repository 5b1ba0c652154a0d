package web

import (
	"context"
	"idemlab/web/workshopweb"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

// downStore answers ErrStoreUnavailable while down, as a PostgreSQL store
// does while its database restarts.
type downStore struct {
	workshop.Store
	down    atomic.Bool
	refused atomic.Int64 // rooms asked for while down: each a 503
}

func (d *downStore) Room(ctx context.Context, id int64) (workshop.Room, error) {
	if d.down.Load() {
		d.refused.Add(1)
		return workshop.Room{}, workshop.ErrStoreUnavailable
	}
	return d.Store.Room(ctx, id)
}

func (d *downStore) Events(ctx context.Context, roomID, after int64, pushesOnly bool, limit int) ([]workshop.Event, error) {
	if d.down.Load() {
		return nil, workshop.ErrStoreUnavailable
	}
	return d.Store.Events(ctx, roomID, after, pushesOnly, limit)
}

// feedRequest is where a request of the class view's feed resumed from.
type feedRequest struct{ after, lastEventID string }

func TestBrowser_WorkshopClassFeedReopensAfter503AndCatchesUp(t *testing.T) {
	ctx := browsertest.New(t)
	dir := filepath.Join(t.TempDir(), "data")
	lite, err := sqlitestore.Open(t.Context(), filepath.Join(dir, sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	store := &downStore{Store: lite}
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler),
		Workshop: &workshopweb.Config{Service: workshop.NewService(store, nil), InstructorKey: testInstructorKey}}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var feeds []feedRequest
	h := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/workshop/rooms/1/stream" {
			mu.Lock()
			feeds = append(feeds, feedRequest{after: r.URL.Query().Get("after"), lastEventID: r.Header.Get("Last-Event-ID")})
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(srv.CloseClientConnections)
	ws := &workshopSite{srv: srv, store: lite, dir: dir}

	id, code := ws.createRoom(t, ws.instructor(t), "form-key-room-1")
	ada := ws.join(t, code, "Ada")
	run(t, ctx, chromedp.Navigate(srv.URL+"/workshop?key="+testInstructorKey))
	run(t, ctx, chromedp.Navigate(srv.URL+workshopweb.RoomPath(id)))
	waitFor(t, ctx, `[data-testid="ws-row"]`)
	time.Sleep(500 * time.Millisecond) // the feed connects
	ws.sendEvent(t, ada, "ada-hand-key-1", `{"kind":"hand_raised"}`)
	if err := poll(ctx, rowOf("Ada")+`?.dataset.rank === "0"`); err != nil {
		t.Fatalf("the class view does not show Ada's hand: %v", err)
	}

	// The store goes away and the feed's connection with it: reconnects get 503.
	store.down.Store(true)
	srv.CloseClientConnections()
	for deadline := time.Now().Add(20 * time.Second); store.refused.Load() == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the feed never came back while the store was down (feeds %+v)", feeds)
		}
	}
	time.Sleep(200 * time.Millisecond) // the 503 reaches the page
	mu.Lock()
	before := len(feeds)
	mu.Unlock()
	// The store is back; Ada lowers her hand before the page reopens its
	// feed (it waits 3 s after an error status): the feed must catch up.
	store.down.Store(false)
	ws.sendEvent(t, ada, "ada-hand-key-2", `{"kind":"hand_lowered"}`)
	if err := poll(ctx, rowOf("Ada")+`?.dataset.rank === "3"`); err != nil {
		t.Fatalf("after the outage the class view never heard Ada lower her hand: %v (feeds %+v)", err, feeds)
	}
	mu.Lock()
	defer mu.Unlock()
	var resumed bool
	for _, f := range feeds[before:] {
		resumed = resumed || f.after != "" && f.after != "0" || f.lastEventID != ""
	}
	if !resumed {
		t.Errorf("no feed reopened after the 503 resumed from the last event it had: %+v", feeds)
	}
	for _, e := range browsertest.PageErrors(ctx) {
		t.Logf("page error (the 503s are expected): %s", e)
	}
}
