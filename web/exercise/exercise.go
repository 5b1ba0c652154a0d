package exercise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"idemlab/web/admit"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/http"
	"runtime"
	"strings"
	"time"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/playground"
	"idemlab/workshop"
)

// Exercises: the learner edits a handler script and checks it against every
// schedule within the exercise's bounds (playground.Check).
//
//	GET  /exercises/{id}         the exercise on its own page, at its start
//	POST /exercises/{id}/check   the form (works without JavaScript): the
//	                             exercise page with the learner's text and the result
//	POST /api/v1/check           exercise=…&handler=… → JSON (exercise.js)
//
// A check is a pure function of (exercise, handler): it runs on fresh
// in-memory ledgers and stores nothing, so a retried or double-clicked POST
// gives the same answer and changes nothing twice. Checks are CPU-bound, so
// every one passes the admission path (admit.Admission.CheckWith): a slot,
// waited for at most as long as a run waits, then 429 with Retry-After; one
// check at a time per client (a seat in a room, else an address), so that a
// double click or five checks fired at once run once and the rest are told
// so at once (429, the learner's text kept); the client charged by the CPU
// the check used, or on PostgreSQL by the ledgers it held
// (admit.LedgerGate.AcquireShare).

const (
	// exerciseHandlerLimit is the largest handler accepted, in bytes: the
	// engine's own limit, so that the learner gets a 400 before any work.
	exerciseHandlerLimit = 4 << 10
	// exerciseBodyLimit caps a check request's body (form encoding inflates
	// the handler up to three times).
	exerciseBodyLimit = 64 << 10
	// exerciseRetryAfter is the Retry-After of a busy 429, in seconds.
	exerciseRetryAfter = 1
)

// ExerciseCheckTimeout is the deadline of one check; every built-in
// exercise checks in about a second or less. A variable only so that
// race-detector test builds can scale it (race_test.go).
var ExerciseCheckTimeout = 5 * time.Second

// Checker runs checks for the exercise routes, at most cap(Slots) at a
// time (a server's are its admission's slots, shared with runs).
type Checker struct {
	deps    Deps
	Slots   chan struct{}
	Timeout time.Duration
}

// Deps is what the exercises need from the server that serves them.
type Deps struct {
	View       func() *site.View // the current course's
	Ledgers    *playground.PostgresLedgers
	LedgerGate *admit.LedgerGate // nil without PostgreSQL ledgers
	Metrics    *site.Metrics
	Admission  *admit.Admission // the one admission path: shares, slots, charges
	// Admit takes a token from the request's client (its seat in a room,
	// else its address), or refuses it with a 429; its context names the
	// client (admit.RateLimiter.WithClient), to whom the check is charged
	// and whose holds it counts against.
	Admit       func(r *http.Request) (context.Context, error)
	RecordCheck func(r *http.Request, c workshop.Check) // a check for a learner in a room (record.go)
}

func New(deps Deps, concurrency int) *Checker {
	if concurrency < 1 {
		concurrency = 1
	}
	return &Checker{deps: deps, Slots: make(chan struct{}, concurrency), Timeout: ExerciseCheckTimeout}
}

// routes are the exercises' URLs: the exercise page, its form's check
// (a result page, without JavaScript) and the check API.
func (c *Checker) Routes() []site.Route {
	return []site.Route{
		{Pattern: "GET /exercises/{id}", Serve: c.servePage},
		{Pattern: "POST /exercises/{id}/check", Serve: c.ServeCheckForm},
		{Pattern: "POST /api/v1/check", Serve: c.ServeCheckAPI},
	}
}

// DefaultCheckConcurrency is one check per usable core.
func DefaultCheckConcurrency() int { return runtime.GOMAXPROCS(0) }

// errCheckBusy: every check slot is taken.
var errCheckBusy = admit.ErrCheckBusy

// check runs one check within a slot and the deadline, for the client ctx
// names. A check the deadline stops is the handler's fault as far as the
// learner can tell, so it becomes a result with Error set, not a server
// error. On PostgreSQL it first takes its share of the pool's ledgers and
// runs on that many at once.
func (c *Checker) check(ctx context.Context, ex *playground.Exercise, handler string, lg playground.Ledger) (*playground.CheckResult, time.Duration, error) {
	opts := admit.CheckOptions{Slots: c.Slots, Timeout: c.Timeout}
	if lg.Postgres != nil && c.deps.LedgerGate != nil {
		release, ledgers, err := c.deps.LedgerGate.AcquireShare(ctx) // admit/postgresgate.go
		if err != nil {
			return nil, 0, err
		}
		defer release()
		lg.Parallel, opts.Ledger = ledgers, true
	}
	var res *playground.CheckResult
	took, err := c.deps.Admission.CheckWith(ctx, opts, func(ctx context.Context) (err error) {
		res, err = playground.CheckOn(ctx, ex, handler, lg)
		return err
	})
	if errors.Is(err, context.DeadlineExceeded) {
		// No verdict: a statement too costly is stopped by its own budget
		// (an error with its line), so a check that runs out of time has
		// met a search too large for a busy server, not a wrong handler.
		return &playground.CheckResult{Exercise: ex.ID, Unfinished: fmt.Sprintf(
			"The check was stopped after %v, before it had tried every schedule, and found nothing wrong in those it tried. The server may be busy: press Check again in a moment.", c.Timeout)}, took, nil
	}
	return res, took, err
}

// inSlot runs one check (run, on SQLite) through the admission path for
// the client ctx names, and says how long it took: errCheckBusy when no
// slot was free in time, a 429 (*site.Error) when the client already has a
// check running, and an error wrapping context.DeadlineExceeded when the
// deadline stopped it.
func (c *Checker) inSlot(ctx context.Context, run func(context.Context) error) (time.Duration, error) {
	return c.deps.Admission.CheckWith(ctx, admit.CheckOptions{Slots: c.Slots, Timeout: c.Timeout}, run)
}

// refused is the answer to a check the admission path refused: the busy
// checker (no slot in time, or no PostgreSQL ledger: 429), or the client's
// share spent (a check of theirs already running: 429), each with
// Retry-After and a sentence for the learner; ok false for any other
// error.
func refused(err error) (status, retryAfter int, message string, ok bool) {
	if errors.Is(err, errCheckBusy) {
		return http.StatusTooManyRequests, exerciseRetryAfter, "The checker is busy with other learners.", true
	}
	se, ok := admit.IsRefusal(err)
	switch {
	case !ok:
		return 0, 0, "", false
	case se.Status == http.StatusServiceUnavailable: // every PostgreSQL ledger is taken
		return http.StatusTooManyRequests, exerciseRetryAfter, "The checker is busy with other learners.", true
	}
	return se.Status, se.RetryAfter, se.Message, true
}

// checkInput is a check request read from a form.
type checkInput struct {
	handler string
	// unreadable: the body itself was refused (too large, malformed), as
	// opposed to a handler field that is empty or too long.
	unreadable bool
}

// readCheckForm reads the handler field of a check request. The error is a
// 400 whose message is for the learner and whose field names the form field.
func readCheckForm(w http.ResponseWriter, r *http.Request) (checkInput, error) {
	bad := func(field, format string, args ...any) error {
		return &site.Error{Status: http.StatusBadRequest, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	r.Body = http.MaxBytesReader(w, r.Body, exerciseBodyLimit)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return checkInput{unreadable: true}, bad("handler", "the request is larger than %d KiB; a handler is at most %d KiB", exerciseBodyLimit>>10, exerciseHandlerLimit>>10)
		}
		return checkInput{unreadable: true}, bad("", "the form could not be read: %v", err)
	}
	handler := r.PostForm.Get("handler")
	switch {
	case strings.TrimSpace(handler) == "":
		return checkInput{handler: handler}, bad("handler", "the handler is empty; write the handler's SQL in the editor, or press Reset to start again")
	case len(handler) > exerciseHandlerLimit:
		return checkInput{handler: handler}, bad("handler", "the handler is %d bytes; the limit is %d (%d KiB)", len(handler), exerciseHandlerLimit, exerciseHandlerLimit>>10)
	}
	return checkInput{handler: handler}, nil
}

// setServerTiming reports how long the check took, outside the body so
// that equal requests get byte-identical answers.
func setServerTiming(w http.ResponseWriter, took time.Duration) {
	w.Header().Set("Server-Timing", fmt.Sprintf("check;dur=%.1f", float64(took.Microseconds())/1000))
}

func setRetryAfter(w http.ResponseWriter, seconds int) {
	admit.RetryAfterHeader(w, seconds)
}

// ----- GET /exercises/{id} and POST /exercises/{id}/check -----

// servePage shows one exercise on its own page at its start.
func (c *Checker) servePage(w http.ResponseWriter, r *http.Request) error {
	v := c.deps.View()
	l, spec := site.FindExercise(v.Course, r.PathValue("id"))
	if spec == nil {
		return unknownExercise(r.PathValue("id"))
	}
	ev := &ExerciseView{Spec: spec, Handler: spec.Start}
	if spec.IsInverse() { // a replay links back with the learner's script
		if sc := r.URL.Query().Get("script"); strings.TrimSpace(sc) != "" && len(sc) <= playground.MaxScriptBytes {
			ev.Handler = sc
		}
		return c.writeExercisePage(w, r, v, l, ev, http.StatusOK)
	}
	// A replay in the playground links back with the learner's handler
	// (handler=…), which the editor takes up again.
	if h := r.URL.Query().Get("handler"); strings.TrimSpace(h) != "" {
		if len(h) > exerciseHandlerLimit {
			ev.Outcome = &ExerciseOutcome{notice: fmt.Sprintf("The handler in the link is %d bytes; the limit is %d, so the editor starts over.", len(h), exerciseHandlerLimit)}
			return c.writeExercisePage(w, r, v, l, ev, http.StatusBadRequest)
		}
		ev.Handler = h
	}
	return c.writeExercisePage(w, r, v, l, ev, http.StatusOK)
}

// ServeCheckForm is the form without JavaScript: the exercise page again,
// with the learner's text kept and the result under the editor.
func (c *Checker) ServeCheckForm(w http.ResponseWriter, r *http.Request) error {
	v := c.deps.View()
	l, spec := site.FindExercise(v.Course, r.PathValue("id"))
	if spec == nil {
		return unknownExercise(r.PathValue("id"))
	}
	if spec.IsInverse() {
		return c.serveBreakForm(w, r, v, l, spec)
	}
	in, err := readCheckForm(w, r)
	ev := &ExerciseView{Spec: spec, Handler: in.handler}
	var lg playground.Ledger
	if err == nil {
		lg, ev.ledger, err = c.checkLedger(r)
	}
	if err != nil {
		ev.Outcome = &ExerciseOutcome{notice: "Not checked: " + err.Error() + "."}
		return c.writeExercisePage(w, r, v, l, ev, http.StatusBadRequest)
	}
	ctx, err := c.deps.Admit(r)
	if err != nil {
		return err
	}
	res, took, err := c.check(ctx, spec.Exercise, in.handler, lg)
	if status, retry, message, ok := refused(err); ok {
		setRetryAfter(w, retry)
		ev.Outcome = &ExerciseOutcome{notice: message + " Your handler is kept: press Check again in a moment."}
		return c.writeExercisePage(w, r, v, l, ev, status)
	}
	if err != nil {
		return checkFailed(spec, err)
	}
	setServerTiming(w, took)
	ev.Outcome = &ExerciseOutcome{Result: res}
	c.recorded(r, checkRecord(spec, in.handler, res), res.Unfinished != "")
	return c.writeExercisePage(w, r, v, l, ev, http.StatusOK)
}

// checkFailed is an error that is not the learner's: an invalid exercise
// (the lessons package should have refused it), or the learner went away.
func checkFailed(spec *lessons.ExerciseSpec, err error) error {
	return fmt.Errorf("checking exercise %s (%s:%d): %w", spec.ID, spec.File, spec.Line, err)
}

func unknownExercise(id string) error {
	return site.NotFoundf("There is no exercise called “%s”. Exercises are at the end of the lessons; pick one from the course.", english.Truncate(id, 80))
}

func (c *Checker) writeExercisePage(w http.ResponseWriter, r *http.Request, v *site.View, l *lessons.Lesson, ev *ExerciseView, status int) error {
	pos, _ := site.PositionOf(v.Course, l.Slug)
	meta := site.PageMeta{Title: "Exercise: " + site.ExerciseTitle(ev.Spec), Description: ev.Spec.Goal, Canonical: site.ExercisePath(ev.Spec.ID), Section: "lesson"}
	return site.WriteHTML(w, r, status, site.NoStore, site.Page(v, meta), exercisePage(v, l, pos, ev))
}

// ----- POST /api/v1/check -----

// checkResponse is the JSON answer of POST /api/v1/check: the checker's
// result (passed, schedules, distinct_states, naive_schedules,
// counterexample {scenario, script, story, violation, query, sql_error},
// error {line, message}) and the result as the page renders it, which
// exercise.js swaps in.
type checkResponse struct {
	CheckReport
	// Playground is the site path that replays the counterexample, or "".
	Playground string `json:"playground,omitempty"`
	HTML       string `json:"html"`
}

// CheckReport is a check's result as the JSON API and `idemlab check
// --json` write it: the checker's result, its counterexample with the
// playground query that replays it (the engine knows no URLs).
type CheckReport struct {
	*playground.CheckResult
	Counterexample *ReportedCounterexample `json:"counterexample,omitempty"`
}

// ReportedCounterexample is a counterexample with its playground query.
type ReportedCounterexample struct {
	*playground.Counterexample
	Query string `json:"query"` // scenario=…&handlers=…&script=…&handler=…
}

// NewCheckReport reports res, checked for the handler source.
func NewCheckReport(res *playground.CheckResult, source string) CheckReport {
	r := CheckReport{CheckResult: res}
	if ce := res.Counterexample; ce != nil {
		_, query, _ := strings.Cut(playurl.CounterexampleHref(ce, source, res.Exercise), "?")
		r.Counterexample = &ReportedCounterexample{Counterexample: ce, Query: query}
	}
	return r
}

// ServeCheckAPI answers a check as JSON. Learner input never makes a 500:
// an unknown exercise is a 404, a missing or oversized handler a 400, a
// full checker a 429 with Retry-After (all {"error", "field"} from the one
// error path); a handler that does not parse is a 200 whose error names
// the line.
func (c *Checker) ServeCheckAPI(w http.ResponseWriter, r *http.Request) error {
	v := c.deps.View()
	in, err := readCheckForm(w, r)
	id := r.PostForm.Get("exercise")
	_, spec := site.FindExercise(v.Course, id)
	switch {
	case in.unreadable:
		return err
	case strings.TrimSpace(id) == "":
		return &site.Error{Status: http.StatusBadRequest, Field: "exercise", Message: "exercise: missing; send exercise=ID and handler=SQL as a form"}
	case spec == nil:
		return &site.Error{Status: http.StatusNotFound, Field: "exercise", Message: fmt.Sprintf("exercise: there is no exercise called %q", english.Truncate(id, 80))}
	case spec.IsInverse():
		return &site.Error{Status: http.StatusBadRequest, Field: "exercise", Message: fmt.Sprintf("exercise: %s asks for a script that breaks its handler, not for a handler; post script=… to %s", spec.ID, site.ExerciseCheckPath(spec.ID))}
	case err != nil:
		return err
	}
	lg, ledger, err := c.checkLedger(r)
	if err != nil {
		return err
	}
	ctx, err := c.deps.Admit(r)
	if err != nil {
		return err
	}
	res, took, err := c.check(ctx, spec.Exercise, in.handler, lg)
	if status, retry, message, ok := refused(err); ok {
		return &site.Error{Status: status, RetryAfter: retry, Message: message + " Nothing was checked: send the same handler again in a moment."}
	}
	if err != nil {
		return checkFailed(spec, err)
	}
	var frag bytes.Buffer
	ev := &ExerciseView{Spec: spec, Handler: in.handler, ledger: ledger, Outcome: &ExerciseOutcome{Result: res}}
	if err := ExerciseResult(v, ev).Render(r.Context(), &frag); err != nil {
		return err
	}
	resp := checkResponse{CheckReport: NewCheckReport(res, in.handler), HTML: frag.String()}
	if ce := res.Counterexample; ce != nil {
		resp.Playground = v.Path(playurl.CounterexampleHref(ce, in.handler, spec.ID))
	}
	setServerTiming(w, took)
	c.recorded(r, checkRecord(spec, in.handler, res), res.Unfinished != "")
	return site.WriteJSON(w, r, http.StatusOK, site.NoStore, resp)
}

// ----- Views -----

// ExerciseView is one exercise as the editor shows it.
type ExerciseView struct {
	Spec    *lessons.ExerciseSpec
	Handler string           // the editor's text
	ledger  string           // the ledger chosen for the check (exercise_postgres.go); "" = SQLite
	Outcome *ExerciseOutcome // nil before any check
	brk     *breakOutcome    // an inverse exercise's outcome (handler holds the script); nil before any check
	embed   bool             // inside an iframe: the form opens the result in a new tab
}

// ExerciseOutcome is what the result area shows: a check's result, or a
// notice when there was none (busy, empty handler).
type ExerciseOutcome struct {
	Result *playground.CheckResult
	notice string
}

// state names the outcome for CSS and tests: pass, fail, error, notice.
func (o *ExerciseOutcome) state() string {
	switch {
	case o == nil:
		return "empty"
	case o.Result == nil:
		return "notice"
	case o.Result.Passed:
		return "pass"
	case o.Result.Counterexample != nil:
		return "fail"
	case o.Result.Unfinished != "":
		return "unfinished"
	default:
		return "error"
	}
}

// errorLine is the handler line to mark, or 0.
func (o *ExerciseOutcome) errorLine() int {
	if e := o.handlerError(); e != nil {
		return e.Line
	}
	return 0
}

// handlerError is the parse, sandbox or SQL error to show, if any.
func (o *ExerciseOutcome) handlerError() *playground.HandlerError {
	if o == nil || o.Result == nil {
		return nil
	}
	if o.Result.Error != nil {
		return o.Result.Error
	}
	if ce := o.Result.Counterexample; ce != nil && ce.SQLError != nil {
		return ce.SQLError
	}
	return nil
}

// StorySteps splits a counterexample's story ("deliver msg-1 to A; A's ack
// is lost; redeliver msg-1 to A → acc-1 balance 200, expected 150") into
// its steps, for a numbered list; the outcome is the violation.
func StorySteps(ce *playground.Counterexample) []string { return splitStory(ce.Story) }

// splitStory splits a story told by the checker into its steps.
func splitStory(story string) []string {
	if i := strings.LastIndex(story, " → "); i >= 0 {
		story = story[:i]
	}
	var steps []string
	for _, s := range strings.Split(story, "; ") {
		if s = strings.TrimSpace(s); s != "" {
			steps = append(steps, s)
		}
	}
	return steps
}

// invariantText says what an invariant requires, in the learner's words.
func invariantText(inv string) string {
	switch inv {
	case playground.InvariantExactlyOnce:
		return "each distinct message takes effect exactly once"
	case playground.InvariantNoLostEffect:
		return "no delivered message loses its effect"
	case playground.InvariantNoDuplicateEffect:
		return "no message takes effect twice"
	case playground.InvariantShippedOnceIfPaid:
		return "each order is shipped once, and only if it was paid"
	}
	return inv
}

// highlightHandler renders a handler script as highlighted SQL with line
// numbers, marking line mark (0: none). It falls back to escaped text.
func highlightHandler(src string, mark int) string {
	src = strings.TrimRight(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	lexer := lexers.Get("sql")
	opts := []chromahtml.Option{chromahtml.WithClasses(true), chromahtml.WithLineNumbers(true)}
	if mark > 0 {
		opts = append(opts, chromahtml.HighlightLines([][2]int{{mark, mark}}))
	}
	var buf bytes.Buffer
	if lexer != nil {
		if it, err := tokeniseHandler(lexer, src+"\n"); err == nil {
			if err := chromahtml.New(opts...).Format(&buf, styles.Get("github"), it); err == nil {
				return buf.String()
			}
		}
	}
	return "<pre class=\"chroma\"><code>" + html.EscapeString(src) + "</code></pre>"
}

// editorRows fits the editor to its text, within reason.
func editorRows(text string) int {
	return min(max(strings.Count(strings.TrimRight(text, "\n"), "\n")+2, 6), 24)
}

// counterexampleWhere names the counterexample's scenario.
func counterexampleWhere(ce *playground.Counterexample) string {
	if ce.Scenario == "" {
		return ""
	}
	return " (scenario " + ce.Scenario + ")"
}

// rulesText says what the checker tries, in the engine's words
// (Exercise.DescribeChecks), and what must hold: "… It must hold that each
// distinct message takes effect exactly once."
func rulesText(ex *playground.Exercise) string {
	must := make([]string, len(ex.Invariants))
	for i, inv := range ex.Invariants {
		must[i] = invariantText(inv)
	}
	return ex.DescribeChecks() + " It must hold that " + strings.Join(must, ", and ") + "."
}

// ExerciseIDs lists a lesson's exercise ids, space-separated.
func ExerciseIDs(l *lessons.Lesson) string {
	ids := make([]string, 0, len(l.Exercises))
	for _, ex := range l.Exercises {
		if ex != nil && ex.Exercise != nil {
			ids = append(ids, ex.ID)
		}
	}
	return strings.Join(ids, " ")
}

// StartExercise is an exercise at its start, as a lesson page shows it.
func StartExercise(spec *lessons.ExerciseSpec, embed bool) *ExerciseView {
	return &ExerciseView{Spec: spec, Handler: spec.Start, embed: embed}
}
