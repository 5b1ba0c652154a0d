package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"idemlab/internal/browsertest"
)

// Browser tests of issue 30's embeds: a lesson framed by a page on another
// site (localhost frames 127.0.0.1, so Chromium runs the frame in its own
// process, as on the web). Playground clicks replace the frame's history
// entry (the host's Back button does not step through the embed, Undo
// still works), and an in-page link inside the self-sizing frame scrolls
// the host to its target.

// embedHost serves a host page that frames src below a screen of its own
// text with the snippet /oembed answers for it: the iframe and the resize
// listener, which also scrolls the host to the offset a resize message may
// carry (scrollTo: an in-page link followed inside the frame; the frame's
// own scrollIntoView does not reliably reach a host on another site). The
// test names the frame "pg" and loads it at once (the snippet's is lazy,
// and this one starts a screen and a half down).
func embedHost(t *testing.T, site *string, src string) *httptest.Server {
	t.Helper()
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(*site + "/oembed?url=" + url.QueryEscape(*site+src))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var o struct{ HTML string }
		if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || resp.StatusCode != http.StatusOK {
			http.Error(w, fmt.Sprintf("oembed: %d %v", resp.StatusCode, err), http.StatusBadGateway)
			return
		}
		snippet := strings.Replace(o.HTML, ` loading="lazy"`, ` id="pg"`, 1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Host</title></head><body style="margin:0">
<h1>Our runbook</h1><div style="height:1200px">Our own text.</div>
%s
<div style="height:1200px"></div>
</body></html>`, snippet)
	}))
	t.Cleanup(host.Close)
	return host
}

// frameContext is a context whose actions run in the frame whose URL
// starts with prefix.
func frameContext(t *testing.T, ctx context.Context, prefix string) context.Context {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, prefix) {
				fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return fctx
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no frame at %s among %d targets", prefix, len(infos))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestEmbed_ClicksReplaceHistoryAndAnchorsScrollTheHost(t *testing.T) {
	ctx := browsertest.New(t)
	var site string
	host := embedHost(t, &site, "/embed/lessons/"+lostAckSlug)
	hostURL := strings.Replace(host.URL, "127.0.0.1", "localhost", 1)
	srv := startCourseServer(t, Config{FrameAncestors: []string{hostURL}})
	site = srv.URL

	run(t, ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(hostURL), chromedp.WaitVisible(chromedp.CSS("#pg")))
	if err := poll(ctx, `document.getElementById("pg").getBoundingClientRect().height > 1000`); err != nil {
		t.Fatalf("the frame never grew: %v", err)
	}
	frame := frameContext(t, ctx, srv.URL+"/embed/")
	if err := poll(frame, `document.readyState === "complete" && !!document.querySelector('#pg-1 [data-message="msg-2"] [data-testid="pg-deliver"]')`); err != nil {
		t.Fatal(err)
	}
	before := eval[int](t, ctx, `history.length`)

	eval[bool](t, frame, `document.querySelector('#pg-1 [data-message="msg-2"] [data-testid="pg-deliver"]').click(), true`)
	waitScript(t, frame, "pg-1", "deliver msg-1 lose-ack; redeliver msg-1; deliver msg-2")
	eval[bool](t, frame, `document.querySelector('#pg-1 [data-testid="pg-start-over"]').click(), true`)
	if err := poll(frame, `document.getElementById("pg-1").dataset.at === "0" && document.getElementById("pg-1").getAttribute("aria-busy") !== "true"`); err != nil {
		t.Fatal(err)
	}
	if after := eval[int](t, ctx, `history.length`); after != before {
		t.Errorf("two clicks in the embed made the host's history %d entries long, was %d: Back would step through the embed", after, before)
	}
	if q := eval[string](t, frame, `location.search`); !strings.Contains(q, "pg=pg-1") {
		t.Errorf("the frame's URL does not hold the state: %q", q)
	}
	// Undo still walks back, inside the frame.
	if got := eval[string](t, frame, `document.querySelector('#pg-1 [data-undo]').getAttribute("aria-disabled")`); got != "false" {
		t.Errorf("Undo in the embed after two clicks: aria-disabled=%q", got)
	}
	eval[bool](t, frame, `document.querySelector('#pg-1 [data-undo]').click(), true`)
	if err := poll(frame, `document.getElementById("pg-1").dataset.at === "3" && document.getElementById("pg-1").getAttribute("aria-busy") !== "true"`); err != nil {
		t.Errorf("Undo in the embed did not go back one state: %v", err)
	}
	if after := eval[int](t, ctx, `history.length`); after != before {
		t.Errorf("Undo in the embed changed the host's history (%d, was %d)", after, before)
	}

	// An in-page link: "Skip past this playground" brings its target into
	// the host's view, with the focus on it.
	eval[bool](t, ctx, `scrollTo(0, 0), true`)
	eval[bool](t, frame, `document.querySelector('#pg-1 [data-testid="pg-skip"]').focus({preventScroll: true}), true`)
	run(t, frame, chromedp.KeyEvent(kb.Enter))
	if err := poll(frame, `document.activeElement && document.activeElement.id === "pg-1-end"`); err != nil {
		t.Errorf("the skip link did not move the focus: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	inFrame := eval[float64](t, frame, `document.getElementById("pg-1-end").getBoundingClientRect().top + scrollY`)
	if err := poll(ctx, fmt.Sprintf(`(() => { const y = document.getElementById("pg").getBoundingClientRect().top + %f; return y >= -2 && y < innerHeight })()`, inFrame)); err != nil {
		t.Errorf("the host did not scroll to the link's target (host scrollY %v, target %v px into the frame): %v",
			eval[float64](t, ctx, `scrollY`), inFrame, err)
	}
}
