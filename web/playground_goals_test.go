package web

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
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
			if len(spec.Goals) == 0 || spec.Ledger != "" {
				// A PostgreSQL block is its recording on this server, which
				// has no goals to play: TestLessonPage_PostgresBlockLiveOnAPostgresServer
				// plays them on PostgreSQL.
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

// Predict, then run: the block asks first (a GET form, so without
// JavaScript too) and hides its verdicts; the answer reveals them with the
// picked choice's why, and the right one's when the pick was wrong.
func TestPlaygroundPredict_AsksFirstThenRevealsWithWhy(t *testing.T) {
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler)}, builtinCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	const lesson = "/lessons/what-idempotent-means"
	doc := document(t, do(t, h, "GET", lesson))
	fig := doc.Find("#pg-1")
	if !fig.HasClass("pg-predicting") {
		t.Error("the verdicts do not wait for the answer")
	}
	form := fig.Find(testID("pg-predict-form"))
	if form.Length() != 1 || form.AttrOr("method", "") != "get" {
		t.Fatalf("no GET form to answer with")
	}
	if n := form.Find(`input[type="radio"][name="guess"]`).Length(); n != 4 {
		t.Errorf("%d choices, want 4", n)
	}
	if skip := form.Find(testID("pg-predict-skip")); skip.AttrOr("name", "") != "guess" || skip.AttrOr("value", "") != "skip" || skip.AttrOr("type", "") != "submit" {
		t.Error("the form has no Skip button that submits guess=skip")
	}
	if !strings.Contains(fig.Find("[data-announce]").Text(), "Answer the question") {
		t.Errorf("the live region gives the verdicts away: %q", fig.Find("[data-announce]").Text())
	}
	query := []string{}
	form.Find(`input[type="hidden"]`).Each(func(_ int, in *goquerySelection) {
		query = append(query, in.AttrOr("name", "")+"="+url.QueryEscape(in.AttrOr("value", "")))
	})
	answer := func(guess string) *http.Response {
		return do(t, h, "GET", form.AttrOr("action", "")+"?"+strings.Join(append(query, "guess="+guess), "&"))
	}
	for _, tc := range []struct {
		guess, correct string
		wants          []string
	}{
		{"1", "true", []string{"Right.", "adds 50 on every run"}},
		{"2", "false", []string{"Not quite.", "writes the balance the message carries", "The answer is", "adds 50 on every run"}},
		// The form's Skip button, without JavaScript: the answer, no grade.
		{"skip", "", []string{"Skipped.", "The answer is", "adds 50 on every run"}},
	} {
		for range 2 { // answering twice changes nothing twice
			resp := answer(tc.guess)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("guess %s: status %d", tc.guess, resp.StatusCode)
			}
			fig := document(t, resp).Find("#pg-1")
			result := fig.Find(testID("pg-predict-result"))
			if result.AttrOr("data-correct", "") != tc.correct {
				t.Errorf("guess %s: graded %q, want %q", tc.guess, result.AttrOr("data-correct", ""), tc.correct)
			}
			for _, want := range tc.wants {
				if !strings.Contains(result.Text(), want) {
					t.Errorf("guess %s: %q lacks %q", tc.guess, result.Text(), want)
				}
			}
			if fig.HasClass("pg-predicting") || fig.Find(testID("pg-verdict")).Length() != 3 {
				t.Errorf("guess %s: the verdicts are not revealed", tc.guess)
			}
			if href := fig.Find(testID("pg-permalink")).AttrOr("href", ""); !strings.Contains(href, "guess="+tc.guess) {
				t.Errorf("guess %s: the permalink %q forgets the answer", tc.guess, href)
			}
		}
	}
	resp := answer("5")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("guess 5: status %d, want 400", resp.StatusCode)
	}
	problem := document(t, resp).Find(testID("pg-problem"))
	if problem.AttrOr("data-field", "") != "guess" || !strings.Contains(problem.Text(), "there is no answer 5") {
		t.Errorf("guess 5: problem %q on %q", problem.Text(), problem.AttrOr("data-field", ""))
	}
}
