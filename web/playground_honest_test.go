package web

import (
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/playground"
)

// A control that would only add a skipped event is disabled, with the
// engine's reason; the same control is a link when the engine would act.
func TestPlaygroundControls_RefusedByTheEngineAreDisabledWithTheReason(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	tests := []struct {
		name, target, message, control, reason string // reason "" = enabled
	}{
		{"redeliver before any delivery", "/playground?scenario=lost-ack&script=deliver+msg-2&at=0", "msg-1", "pg-redeliver", "msg-1 was never delivered"},
		{"redeliver an acked message", "/playground?scenario=lost-ack&script=deliver+msg-1", "msg-1", "pg-redeliver", "msg-1 was acked"},
		{"redeliver after a lost ack", "/playground?scenario=lost-ack&script=deliver+msg-1+lose-ack", "msg-1", "pg-redeliver", ""},
		{"deliver an acked message", "/playground?scenario=lost-ack&script=deliver+msg-1", "msg-1", "pg-deliver", "msg-1 was already acked"},
		{"deliver to a busy worker", "/playground?scenario=lease-expiry&script=start+msg-1+on+A&to=A", "msg-1", "pg-deliver", "A is busy with msg-1"},
		{"expire with no lease", "/playground?scenario=lost-ack&script=deliver+msg-1&open=workers", "msg-1", "pg-expire", "msg-1 has no lease running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, h, "GET", tt.target)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			doc := document(t, resp)
			c := doc.Find(`[data-testid="pg-message"][data-message="` + tt.message + `"] ` + testID(tt.control))
			if tt.control == "pg-expire" { // with the interleaving controls: msg-1's comes first
				c = doc.Find(testID(tt.control)).First()
			}
			if c.Length() != 1 {
				t.Fatalf("%d %s controls", c.Length(), tt.control)
			}
			if tt.reason == "" {
				if !c.Is("a[href]") {
					t.Errorf("%s is disabled (%q), want a link", tt.control, c.AttrOr("data-reason", ""))
				}
				return
			}
			if c.Is("a") || c.AttrOr("aria-disabled", "") != "true" {
				t.Fatalf("%s is not disabled", tt.control)
			}
			if got := c.AttrOr("data-reason", ""); !strings.Contains(got, tt.reason) {
				t.Errorf("reason %q lacks %q", got, tt.reason)
			}
			if !strings.Contains(c.Text(), tt.reason) {
				t.Errorf("the reason is not in the control's text for screen readers: %q", c.Text())
			}
		})
	}
}

// The worker controls ask the engine too: Step and Finish need a message in
// hand, Start needs an idle worker.
func TestPlaygroundControls_WorkerControlsFollowTheEngine(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	doc := document(t, do(t, h, "GET", "/playground?scenario=lease-expiry&script=start+msg-1+on+A&open=workers"))
	a := doc.Find(`li[data-worker="A"]`)
	b := doc.Find(`li[data-worker="B"]`)
	if !a.Find(testID("pg-step")).Is("a[href]") || !a.Find(testID("pg-finish")).Is("a[href]") {
		t.Error("A holds msg-1 but cannot step or finish")
	}
	if why := b.Find(testID("pg-step")).AttrOr("data-reason", ""); !strings.Contains(why, "B has no message in hand") {
		t.Errorf("B's Step: reason %q", why)
	}
	found := false
	doc.Find(testID("pg-start")).Each(func(_ int, s *goquery.Selection) {
		if strings.HasPrefix(strings.TrimSpace(s.Text()), "Start on A") {
			found = true
			if s.Is("a") || !strings.Contains(s.AttrOr("data-reason", ""), "A is busy") {
				t.Errorf("Start on A while A is busy: %q", s.AttrOr("data-reason", ""))
			}
		}
	})
	if !found {
		t.Error("no Start on A control")
	}
}

// The "lesson expects" chip speaks about the lesson's own script at its
// end: it goes as soon as the learner runs something else or steps back.
func TestPlaygroundVerdicts_LessonExpectsOnlyForTheLessonsRun(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	tests := []struct {
		target string
		chips  int
	}{
		{"/lessons/why-twice?pg=pg-1&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1", 2},
		{"/lessons/why-twice?pg=pg-1&script=deliver+msg-1", 0},
		{"/lessons/why-twice?pg=pg-1&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1&at=1", 0},
		{"/lessons/why-twice?pg=pg-1&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1&to=B", 2},
	}
	for _, tt := range tests {
		doc := document(t, do(t, h, "GET", tt.target))
		fig := doc.Find(`figure[data-pg]#pg-1`)
		if got := fig.Find(testID("playground-expect")).Length(); got != tt.chips {
			t.Errorf("%s: %d chips, want %d", tt.target, got, tt.chips)
		}
	}
}

// Changing the fault of an earlier event keeps the events after it (they
// run again on top of the change) and the cursor.
func TestPgState_AmendLastKeepsLaterEvents(t *testing.T) {
	script, err := playground.ParseScript("deliver msg-1; deliver msg-2; redeliver msg-1")
	if err != nil {
		t.Fatal(err)
	}
	s := playurl.State{Events: script.Events, At: 1}
	ev := s.Events[0]
	ev.Fault = "lose-ack"
	got := s.AmendLast(ev)
	if want := "deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1"; got.ScriptText() != want || got.At != 1 {
		t.Errorf("amend at 1: %q at %d, want %q at 1", got.ScriptText(), got.At, want)
	}
	if s.ScriptText() != "deliver msg-1; deliver msg-2; redeliver msg-1" {
		t.Errorf("amend changed the state it started from: %q", s.ScriptText())
	}
}

// Words never run together where markup meets text ("is a comment.Ctrl").
func TestExercisePage_HelpReadsAsSentences(t *testing.T) {
	s, err := NewServer(Config{}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	doc := document(t, do(t, s.Handler(), "GET", site.ExercisePath(builtinExercise(t, "dedupe-credit").ID)))
	help := strings.Join(strings.Fields(doc.Find(".exercise-help").First().Text()), " ")
	if !strings.Contains(help, "is a comment. Ctrl+Enter checks.") {
		t.Errorf("help reads %q", help)
	}
}
