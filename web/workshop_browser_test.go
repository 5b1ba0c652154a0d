package web

import (
	"context"
	"encoding/json"
	"fmt"
	"idemlab/web/playurl"
	"idemlab/web/workshopweb"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
	"idemlab/workshop"
)

// Browser test of a workshop as people run one: an instructor and three
// learners, each in their own browser context (own cookies and storage).

// offline cuts a tab off the network, or reconnects it.
func offline(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		// Spelled by hand: Chromium 148 wants "offline" beside the rules,
		// which cdproto's params lack (it answers them -32602); "offline"
		// in each rule is what earlier releases read.
		byRule := cdp.Command[map[string]any, json.RawMessage]{Method: network.CommandEmulateNetworkConditionsByRule}
		if _, err := cdp.Call(ctx, t, byRule, map[string]any{"offline": on, "matchedNetworkConditions": []map[string]any{
			{"urlPattern": "", "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1, "offline": on},
		}}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: on, DownloadThroughput: -1, UploadThroughput: -1})
		return err
	})
}

// pollFor evaluates expr until it is true or the time is up.
func pollFor(ctx context.Context, limit time.Duration, expr string) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still false after %v (%v)", limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rowOf is a JS expression for the class view's row of a learner by name.
func rowOf(name string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('[data-testid="ws-row"]')].find(r => r.querySelector('[data-testid="ws-row-name"]').textContent === %q)`, name)
}

// handEvents counts a learner's hand_raised events in the store.
func handEvents(t *testing.T, ws *workshopSite, roomID int64, name string) int {
	return kindEvents(t, ws, roomID, name, workshop.KindHandRaised)
}

// kindEvents counts a learner's events of one kind in the store.
func kindEvents(t *testing.T, ws *workshopSite, roomID int64, name string, kind workshop.Kind) int {
	t.Helper()
	ls, _ := ws.store.Learners(t.Context(), roomID)
	evs, _ := ws.store.Events(t.Context(), roomID, 0, false, 10000)
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

func TestBrowser_WorkshopInstructorAndThreeLearners(t *testing.T) {
	instructor := browsertest.New(t)
	ws := newWorkshopSite(t, nil)
	t.Cleanup(ws.srv.CloseClientConnections) // the pages' streams, before the server closes
	base := ws.srv.URL
	start := time.Now()
	step := func(what string) { t.Logf("%6.1fs %s", time.Since(start).Seconds(), what) }

	// The instructor opens the link the server printed and creates a room
	// with every lesson and exercise (the form's defaults).
	run(t, instructor, chromedp.Navigate(base+"/workshop?key="+testInstructorKey))
	waitFor(t, instructor, `[data-testid="ws-create-form"]`)
	eval[bool](t, instructor, `document.querySelector('[data-testid="ws-new-room-name"]').value = "Tuesday", true`)
	click(t, instructor, `[data-testid="ws-create"]`)
	waitFor(t, instructor, `[data-testid="ws-class"]`)
	code := eval[string](t, instructor, `document.querySelector('[data-testid="ws-code"]').textContent`)
	room, err := ws.store.RoomByCode(t.Context(), workshop.Code(code))
	if err != nil {
		t.Fatalf("the class view shows code %q: %v", code, err)
	}

	step("room created")
	// Three learners join, each in a browser context of their own.
	names := []string{"Ada", "Bob", "Cy"}
	learners := make(map[string]context.Context)
	for _, name := range names {
		ctx, cancel := chromedp.NewContext(instructor, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		learners[name] = ctx
		run(t, ctx, chromedp.Navigate(base+"/join?code="+code))
		waitFor(t, ctx, `[data-testid="ws-join-form"]`)
		eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="ws-join-name"]').value = %q, true`, name))
		click(t, ctx, `[data-testid="ws-join-submit"]`)
		waitFor(t, ctx, `[data-testid="ws-room"] [data-testid="ws-room-name"]`)
		waitFor(t, ctx, `[data-testid="ws-banner"]`)
	}
	if err := poll(instructor, `document.querySelectorAll('[data-testid="ws-row"]').length === 3`); err != nil {
		t.Fatalf("the class view does not list the three learners: %v", err)
	}

	step("three joined")
	// Workshop assets load in a room's browser only.
	outsider, closeOutsider := chromedp.NewContext(instructor, chromedp.WithNewBrowserContext())
	fetchedWorkshop := `performance.getEntriesByType("resource").some(e => e.name.includes("/static/workshop."))`
	for who, ctx := range map[string]context.Context{"an outsider": outsider, "Cy": learners["Cy"]} {
		run(t, ctx, chromedp.Navigate(base+playurl.LessonPath(lostAckSlug)))
		waitFor(t, ctx, `#pg-1[data-script]`)
		inRoom := who == "Cy"
		if inRoom {
			waitFor(t, ctx, `[data-testid="ws-banner"]`)
		}
		if got := eval[bool](t, ctx, fetchedWorkshop); got != inRoom {
			t.Errorf("%s's lesson page fetched the workshop's assets: %v, want %v", who, got, inRoom)
		}
	}
	closeOutsider()
	// Ada passes an exercise; the class view shows it.
	spec := builtinExercise(t, "dedupe-credit")
	ada := learners["Ada"]
	sel := fmt.Sprintf(`[data-exercise=%q]`, spec.ID)
	run(t, ada, chromedp.Navigate(base+playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID))
	exWait(t, ada, "the editor", `document.querySelector('`+sel+` textarea')`)
	eval[bool](t, ada, fmt.Sprintf(`(() => { const a = document.querySelector('%s textarea'); a.value = %s; a.dispatchEvent(new Event("input", {bubbles: true})); return true })()`, sel, strconv.Quote(spec.Solution)))
	exClick(t, ada, sel+` [data-testid="exercise-check"]`)
	exWait(t, ada, "the pass", exResultState(spec.ID)+` === "pass"`)
	passedAt := time.Now()
	if err := poll(instructor, rowOf("Ada")+`?.querySelector('[data-exercise="`+spec.ID+`"]').dataset.state === "passed"`); err != nil {
		t.Fatalf("the class view never showed Ada's pass: %v", err)
	}
	t.Logf("the class view showed Ada's pass %v after her page did", time.Since(passedAt))

	step("Ada passed")
	// Bob fails it: the class view offers his counterexample to show the class.
	bob := learners["Bob"]
	run(t, bob, chromedp.Navigate(base+playurl.LessonPath(spec.Lesson)+"#ex-"+spec.ID))
	exWait(t, bob, "the editor", `document.querySelector('`+sel+` textarea')`)
	exClick(t, bob, sel+` [data-testid="exercise-check"]`)
	exWait(t, bob, "the counterexample", exResultState(spec.ID)+` === "fail"`)
	if err := poll(instructor, `!!document.querySelector('[data-testid="ws-show-class"]')`); err != nil {
		t.Fatalf("the class view offers no counterexample to show: %v", err)
	}
	projector, closeProjector := chromedp.NewContext(instructor) // another tab, for the projector
	show := eval[string](t, instructor, `document.querySelector('[data-testid="ws-show-class"]').href`)
	run(t, projector, chromedp.Navigate(show))
	waitFor(t, projector, `[data-testid="pg-verdict"][data-handler="`+playurl.LearnerHandlerName+`"]`)
	closeProjector()
	// Lessons opened, quizzes answered and goals met reach the server;
	// a page marks a met goal with data-goal-met or the idemlab:goal event.
	click(t, bob, `ol.quiz > li [data-correct="false"] label`)
	click(t, bob, `ol.quiz > li [data-correct="true"] label`) // a second pick: still one answer
	eval[bool](t, bob, `document.querySelector('`+sel+` [data-testid="exercise-hint"]').open = true, true`)
	eval[bool](t, bob, `document.dispatchEvent(new CustomEvent("idemlab:goal", {detail: {goal: "first-duplicate"}})), true`)
	eval[bool](t, bob, `(() => { const m = document.createElement("span"); m.dataset.goal = "second-goal"; document.body.appendChild(m); m.dataset.goalMet = ""; return true })()`)
	eval[bool](t, bob, `document.dispatchEvent(new CustomEvent("idemlab:goal", {detail: {goal: "first-duplicate"}})), true`) // again: sent once
	if err := poll(bob, `JSON.parse(localStorage.getItem("idemlab.workshop.queue") || "[]").length === 0`); err != nil {
		t.Fatalf("Bob's events did not drain: %v", err)
	}
	for kind, want := range map[workshop.Kind]int{workshop.KindLessonOpened: 1, workshop.KindQuizAnswered: 1, workshop.KindGoalReached: 2, workshop.KindExerciseChecked: 1, workshop.KindHintUsed: 1} {
		if n := kindEvents(t, ws, room.ID, "Bob", kind); n != want {
			t.Errorf("Bob's %s events: %d, want %d", kind, n, want)
		}
	}
	// Bob raises his hand: he comes first.
	click(t, learners["Bob"], `[data-testid="ws-banner-hand"]`)
	if err := poll(instructor, `document.querySelector('[data-testid="ws-row"] [data-testid="ws-row-name"]').textContent === "Bob"`); err != nil {
		t.Fatalf("Bob's raised hand did not put him first: %v", err)
	}

	step("Bob first")
	// Every learner opens the lost-ack lesson; a chaos push reaches all three playgrounds.
	for _, name := range names {
		run(t, learners[name], chromedp.Navigate(base+playurl.LessonPath(lostAckSlug)))
		waitFor(t, learners[name], `#pg-1[data-script]`)
		waitFor(t, learners[name], `[data-testid="ws-banner"]`)
	}
	time.Sleep(500 * time.Millisecond) // the pages' streams connect (they would resume anyway)
	// Every playground with a script form is re-run; its handlers that held
	// are the ones that may survive.
	okBefore := eval[[][3]string](t, learners["Ada"], `[...document.querySelectorAll('[data-pg]')].filter(f => f.querySelector('[data-testid="pg-script-form"]')).flatMap(f =>
		[...f.querySelectorAll('[data-testid="pg-verdict"][data-verdict="ok"]')].map(v => [f.id, v.dataset.handler, f.dataset.script]))`)
	click(t, instructor, `[data-testid="ws-chaos"][data-fault="duplicate"]`)
	waitFor(t, instructor, `[data-testid="ws-class"]`)
	for _, name := range names {
		// Generous: on a loaded machine the push, the swap and the re-run take a while.
		ctx, cancel := context.WithTimeout(learners[name], 60*time.Second)
		err := pollFor(ctx, 60*time.Second, `(document.getElementById("pg-1") || {dataset: {}}).dataset.script === "deliver msg-1 lose-ack; redeliver msg-1; publish msg-1"`)
		cancel()
		if err != nil {
			t.Fatalf("the chaos push did not reach %s's playground: %v (script %q, banner %q)", name, err,
				eval[string](t, learners[name], `(document.getElementById("pg-1") || {dataset: {}}).dataset.script || ""`),
				eval[string](t, learners[name], `(document.querySelector('[data-testid="ws-banner-news"]') || {}).textContent || ""`))
		}
		if news := eval[string](t, learners[name], `document.querySelector('[data-testid="ws-banner-news"]').textContent`); news == "" {
			t.Errorf("%s's banner does not tell of the chaos", name)
		}
	}

	step("chaos reached all")
	// Each page reports which of its handlers that held still hold.
	if err := poll(learners["Ada"], `document.querySelectorAll('[data-pg][aria-busy="true"]').length === 0`); err != nil {
		t.Fatalf("Ada's playgrounds are still re-running: %v", err)
	}
	reran := fmt.Sprintf(`%s.filter(([fig, , script]) => document.getElementById(fig).dataset.script !== script)`, mustJSON(okBefore))
	ran := eval[int](t, learners["Ada"], reran+`.length`)
	stillOK := eval[int](t, learners["Ada"], reran+`.filter(([fig, h]) => document.querySelector('#' + fig + ' [data-testid="pg-verdict"][data-handler="' + h + '"]').dataset.verdict === "ok").length`)
	wantSurvivors := fmt.Sprintf(`(s => s && s.dataset.ran === "%d" && s.dataset.survived === "%d")(document.querySelector('[data-testid="ws-chaos-survivors"]'))`, 3*ran, 3*stillOK)
	if err := poll(instructor, wantSurvivors); err != nil || ran == 0 {
		t.Errorf("the class view's chaos survivors: %q, want %d of %d (%v)", eval[string](t, instructor, `(document.querySelector('[data-testid="ws-chaos-survivors"]') || {}).textContent || ""`), 3*stillOK, 3*ran, err)
	}
	t.Logf("chaos: %d handlers per page re-ran, %d survived", ran, stillOK)
	// Cy goes offline and raises a hand: the event waits in her browser,
	// then arrives once when she is back.
	cy := learners["Cy"]
	run(t, cy, offline(true))
	click(t, cy, `[data-testid="ws-banner-hand"]`)
	if err := poll(cy, `JSON.parse(localStorage.getItem("idemlab.workshop.queue") || "[]").length === 1`); err != nil {
		t.Fatalf("Cy's event is not queued: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // a retry or two fail meanwhile
	if n := handEvents(t, ws, room.ID, "Cy"); n != 0 {
		t.Fatalf("offline, Cy's hand reached the server %d times", n)
	}
	run(t, cy, offline(false))
	if err := poll(cy, `JSON.parse(localStorage.getItem("idemlab.workshop.queue") || "[]").length === 0`); err != nil {
		t.Fatalf("back online, Cy's queue did not drain: %v", err)
	}
	if err := poll(instructor, rowOf("Cy")+`?.dataset.rank === "0"`); err != nil {
		t.Errorf("the class view does not show Cy's hand: %v", err)
	}
	time.Sleep(time.Second)
	if n := handEvents(t, ws, room.ID, "Cy"); n != 1 {
		t.Errorf("Cy's queued hand arrived %d times, want once", n)
	}
	browsertest.Screenshot(t, instructor, "class-view")

	step("Cy back once")
	// The export matches what happened.
	resp := get(t, ws.instructor(t), base+workshopweb.RoomPath(room.ID)+"/export.json")
	var x workshop.Export
	if err := json.NewDecoder(resp.Body).Decode(&x); err != nil {
		t.Fatal(err)
	}
	passed := map[string]bool{}
	for _, r := range x.Results {
		if r.Exercise == spec.ID {
			passed[r.Learner] = r.PassedAt != "" && r.Attempts >= 1
		}
	}
	if !passed["Ada"] || passed["Bob"] || passed["Cy"] || len(passed) != 3 {
		t.Errorf("export of %s: %v, want Ada passed, Bob and Cy not", spec.ID, passed)
	}
	// Cy's page reports the requests that failed while she was offline;
	// any other page error is a bug.
	for _, e := range browsertest.PageErrors(instructor) {
		t.Errorf("page error: %s", e)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
