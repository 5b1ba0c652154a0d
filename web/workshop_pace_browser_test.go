package web

import (
	"idemlab/web/playurl"
	"idemlab/web/workshopweb"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/workshop"
)

func TestBrowser_WorkshopOpenUpToLocksTheLessonOnScreen(t *testing.T) {
	ctx := browsertest.New(t)
	ws := newWorkshopSite(t, nil)
	t.Cleanup(ws.srv.CloseClientConnections)
	inst := ws.instructor(t)
	id, code := ws.createRoom(t, inst, "form-key-room-1")
	room, _ := ws.store.Room(t.Context(), id)
	second := room.Lessons[1]
	run(t, ctx, chromedp.Navigate(ws.srv.URL+"/join?code="+string(code)))
	waitFor(t, ctx, `[data-testid="ws-join-form"]`)
	eval[bool](t, ctx, `document.querySelector('[data-testid="ws-join-name"]').value = "Ada", true`)
	click(t, ctx, `[data-testid="ws-join-submit"]`)
	waitFor(t, ctx, `[data-testid="ws-room-name"]`)
	run(t, ctx, chromedp.Navigate(ws.srv.URL+playurl.LessonPath(second)))
	waitFor(t, ctx, `[data-testid="ws-banner"]`)
	waitFor(t, ctx, `[data-testid="lesson-body"]`)
	pace := func(key, mode, n string) {
		if resp := post(t, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/push", url.Values{"key": {key}, "kind": {"pace"}, "mode": {mode}, "lesson": {n}}); resp.StatusCode != 303 {
			t.Fatalf("pace: %d", resp.StatusCode)
		}
	}
	// The instructor opens lessons up to the first: the page Ada has open
	// turns into the lock, with the way to the open lesson.
	pace("form-key-pace-1", workshop.PaceOpen, "1")
	if err := poll(ctx, `!!document.querySelector('[data-testid="ws-locked"]') && !document.querySelector('[data-testid="lesson-body"]')`); err != nil {
		t.Fatalf("lesson 2 stays on Ada's screen after open up to lesson 1: %v", err)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-testid="ws-locked-open"]').getAttribute("href")`); got != playurl.LessonPath(room.Lessons[0]) {
		t.Errorf("the lock links to %q, want the open lesson %q", got, playurl.LessonPath(room.Lessons[0]))
	}
	// Everyone to lesson 2: the lock gives way to the lesson.
	pace("form-key-pace-2", workshop.PaceGoto, "2")
	if err := poll(ctx, `!!document.querySelector('[data-testid="lesson-body"]')`); err != nil {
		t.Fatalf("lesson 2 stays locked after everyone was sent there: %v", err)
	}
	for _, e := range browsertest.PageErrors(ctx) {
		t.Errorf("page error: %s", e)
	}
}
