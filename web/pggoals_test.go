package web

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every goal of the built-in course starts unmet on its lesson page and
// is met (ticked, data-goal-met) at the state its "Stuck?" link opens,
// page and fragment alike: the engine's check, drawn by the server.
func TestPlaygroundGoals_TickWhenTheEngineSaysTheStateMeetsThem(t *testing.T) {
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler)}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	goals := 0
	for _, lesson := range builtinCourse(t).Lessons {
		for _, spec := range lesson.Playgrounds {
			if len(spec.Goals) == 0 {
				continue
			}
			doc := document(t, do(t, h, "GET", "/lessons/"+lesson.Slug))
			fig := doc.Find("#" + spec.ID)
			panel := fig.Find(testID("pg-goals"))
			if panel.Length() != 1 {
				t.Fatalf("%s#%s: %d goal panels", lesson.Slug, spec.ID, panel.Length())
			}
			if panel.Parent().Find(testID("pg-verdicts")).Length() > 0 || !strings.Contains(strings.Join(panel.NextAll().Map(func(_ int, s *goquerySelection) string { return s.AttrOr("class", "") }), " "), "pg-grid") {
				t.Errorf("%s#%s: the goals are not above the controls", lesson.Slug, spec.ID)
			}
			if n := fig.Find("[data-goal-met]").Length(); n != 0 {
				t.Errorf("%s#%s: %d goals met before the learner did anything", lesson.Slug, spec.ID, n)
			}
			for _, g := range spec.Goals {
				goals++
				item := fig.Find(`[data-goal="` + g.ID + `"]`)
				if !strings.Contains(item.Find(".pg-goal-task").Text(), "Not yet:") {
					t.Errorf("%s: goal %s does not say it is not met yet", lesson.Slug, g.ID)
				}
				href, ok := item.Find(testID("pg-goal-solution")).Attr("href")
				if !ok {
					t.Fatalf("%s: goal %s has no solution link", lesson.Slug, g.ID)
				}
				href, _, _ = strings.Cut(href, "#")
				for _, target := range []string{href, href + "&fragment=1"} {
					// One client per request: the per-client share of runs
					// is not what this test is about.
					req := httptest.NewRequest("GET", target, nil)
					req.RemoteAddr = "198.51.100." + itoa(goals%250+1) + ":4000"
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					resp := rec.Result()
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("%s: status %d", target, resp.StatusCode)
					}
					met := document(t, resp).Find("#" + spec.ID + ` [data-goal-met="` + g.ID + `"]`)
					if met.Length() != 1 {
						t.Errorf("%s: goal %s is not marked met", target, g.ID)
						continue
					}
					if !strings.Contains(met.Find(".pg-goal-task").Text(), "Done:") || met.Find(".pg-goal-tick").Text() == "" {
						t.Errorf("%s: goal %s is not ticked", target, g.ID)
					}
				}
			}
		}
	}
	if goals < 12 {
		t.Errorf("only %d goals in the course, want one per lesson at least", goals)
	}
}

// A goal follows the cursor: looking back at an earlier event shows it
// unmet again.
func TestPlaygroundGoals_FollowTheCursor(t *testing.T) {
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler)}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	base := "/lessons/why-messages-arrive-twice?pg=pg-1&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1+lose-ack%3B+redeliver+msg-1"
	for _, tc := range []struct {
		at   string
		want int
	}{{"", 1}, {"&at=2", 0}} {
		doc := document(t, do(t, h, "GET", base+tc.at))
		if got := doc.Find(`#pg-1 [data-goal-met="three-copies"]`).Length(); got != tc.want {
			t.Errorf("at %q: three-copies met %d times, want %d", tc.at, got, tc.want)
		}
		if !strings.Contains(doc.Find(`#pg-1 [data-announce]`).Text(), "Goals met: "+itoa(tc.want)+" of 2.") {
			t.Errorf("at %q: the live region says %q", tc.at, doc.Find(`#pg-1 [data-announce]`).Text())
		}
	}
}
