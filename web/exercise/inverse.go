package exercise

import (
	"context"
	"errors"
	"fmt"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/http"
	"slices"
	"strings"

	"idemlab/lessons"
	"idemlab/playground"
)

// Inverse exercises: the exercise gives the handler, and the learner writes
// the shortest script that breaks it (playground.CheckBreak). They use the
// exercise routes:
//
//	GET  /exercises/{id}?script=…  the page, the editor holding that script
//	POST /exercises/{id}/check     script=… [&reveal=shortest]: the page
//	                               again, with the verdict under the editor
//
// The form works without JavaScript. A check runs on fresh in-memory
// ledgers and stores nothing, so the same POST twice gives the same page
// and changes nothing (TestInverse_CheckIsIdempotent). The shortest
// breaking script is shown only once the learner's script breaks the
// handler, or when they press "Show the shortest".

// breakOutcome is what an inverse exercise's result area shows.
type breakOutcome struct {
	result   *playground.BreakResult    // nil when only the shortest was asked for
	shortest *playground.Counterexample // shown: after a break, or on request
	revealed bool                       // the learner asked for the shortest
	notice   string                     // instead of a result: busy, empty script
}

// state names the outcome for CSS, tests and exercise.js: "pass" (the
// script breaks the handler: the exercise is done), "fail" (it does not),
// "error" (the script has a mistake), "notice", or "empty".
func (o *breakOutcome) state() string {
	switch {
	case o == nil:
		return "empty"
	case o.result == nil && o.notice != "":
		return "notice"
	case o.result == nil:
		return "empty"
	case o.result.Error != nil:
		return "error"
	case o.result.Broken:
		return "pass"
	}
	return "fail"
}

// serveBreakForm checks a learner's breaking script: the form of an
// inverse exercise, without JavaScript.
func (c *Checker) serveBreakForm(w http.ResponseWriter, r *http.Request, v *site.View, l *lessons.Lesson, spec *lessons.ExerciseSpec) error {
	r.Body = http.MaxBytesReader(w, r.Body, exerciseBodyLimit)
	ev := &ExerciseView{Spec: spec}
	notice := func(status int, text string) error {
		ev.brk = &breakOutcome{notice: text}
		return c.writeExercisePage(w, r, v, l, ev, status)
	}
	if err := r.ParseForm(); err != nil {
		return notice(http.StatusBadRequest, fmt.Sprintf("Not checked: the form could not be read (%v).", err))
	}
	ev.Handler = r.PostForm.Get("script")
	reveal := r.PostForm.Get("reveal") == "shortest"
	switch {
	case len(ev.Handler) > playground.MaxScriptBytes:
		return notice(http.StatusBadRequest, fmt.Sprintf("Not checked: the script is %d bytes; the limit is %d.", len(ev.Handler), playground.MaxScriptBytes))
	case strings.TrimSpace(ev.Handler) == "" && !reveal:
		return notice(http.StatusBadRequest, "Not checked: the script is empty. Write events such as deliver msg-1, one per line.")
	}
	ctx, err := c.deps.Admit(r)
	if err != nil {
		return err
	}
	out := &breakOutcome{revealed: reveal}
	took, err := c.inSlot(ctx, func(ctx context.Context) error {
		var err error
		if strings.TrimSpace(ev.Handler) != "" {
			if out.result, err = playground.CheckBreak(ctx, spec.Exercise, ev.Handler); err != nil {
				return err
			}
			out.shortest = out.result.Shortest
		}
		if reveal && out.shortest == nil {
			out.shortest, err = playground.ShortestBreak(ctx, spec.Exercise)
		}
		return err
	})
	if status, retry, message, ok := refused(err); ok {
		setRetryAfter(w, retry)
		return notice(status, message+" Your script is kept: press Check again in a moment.")
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return notice(http.StatusOK, fmt.Sprintf("The check took longer than %v and was stopped. Try a shorter script.", c.Timeout))
	case err != nil:
		return checkFailed(spec, err)
	}
	setServerTiming(w, took)
	ev.brk = out
	if out.result != nil {
		c.recorded(r, breakRecord(spec, out.result))
	}
	return c.writeExercisePage(w, r, v, l, ev, http.StatusOK)
}

// breakHref is the playground that replays a learner's script on the
// exercise's scenario with the handler to break (and, for a built-in one,
// the scenario's other handlers beside it).
func breakHref(spec *lessons.ExerciseSpec, events []playground.Event) string {
	s := playurl.State{Scenario: spec.Scenarios[0], Events: events, At: -1, Exercise: spec.ID}
	sc, _ := playground.LookupScenario(s.Scenario)
	switch {
	case spec.BreakHandler != "":
		s.Custom = spec.BreakHandler
		if sc != nil {
			s.Handlers = playurl.Beside(sc.Handlers)
		}
	case sc != nil && slices.Contains(sc.Handlers, spec.Break):
		s.Handlers = sc.Handlers
	default:
		s.Handlers = []string{spec.Break}
	}
	return playurl.FullSizeHref(s)
}

// breakHandlerTitle heads the handler to break on the page.
func breakHandlerTitle(spec *lessons.ExerciseSpec) string {
	if spec.Break != "" {
		return "The handler to break: " + spec.Break + " (built in)"
	}
	return "The handler to break"
}

// listSeparator follows item i of n in a sentence: ", " or ". ".
func listSeparator(i, n int) string {
	if i == n-1 {
		return ". "
	}
	return ", "
}

// scriptExamples are events of the exercise's own scenario, for the
// editor's help: "deliver msg-1", "deliver msg-1 lose-ack", ….
func scriptExamples(spec *lessons.ExerciseSpec) []string {
	id := "msg-1"
	if sc, err := playground.LookupScenario(spec.Scenarios[0]); err == nil && len(sc.Messages) > 0 {
		id = sc.Messages[0].ID
	}
	return []string{"deliver " + id, "deliver " + id + " lose-ack", "redeliver " + id + " to B", "deliver " + id + " crash-after 2"}
}
