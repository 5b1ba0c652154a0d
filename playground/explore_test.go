package playground

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// exerciseFixtures loads testdata/exercises/*.yaml: the five built-in
// exercises, in the YAML form a lesson's ```exercise block uses.
func exerciseFixtures(tb testing.TB) []*Exercise {
	tb.Helper()
	paths, err := filepath.Glob("testdata/exercises/*.yaml")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no exercise fixtures: %v", err)
	}
	sort.Strings(paths)
	var out []*Exercise
	for _, p := range paths {
		ex := readExerciseFixture(tb, p)
		out = append(out, ex)
	}
	return out
}

// readExerciseFixture decodes and validates one exercise fixture, strictly
// (unknown fields are errors), as a lesson's ```exercise block is read.
func readExerciseFixture(tb testing.TB, path string) *Exercise {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	ex := &Exercise{}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(ex); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	if err := ex.Validate(); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return ex
}

func exerciseByID(tb testing.TB, id string) *Exercise {
	for _, ex := range exerciseFixtures(tb) {
		if ex.ID == id {
			return ex
		}
	}
	tb.Fatalf("no exercise %s", id)
	return nil
}

func TestCheck_SolutionsPassStartsFail(t *testing.T) {
	relaxCheckTimeout(t)
	for _, ex := range exerciseFixtures(t) {
		t.Run(ex.ID, func(t *testing.T) {
			t.Parallel() // the cores share the exercises
			ctx := context.Background()
			pass, err := Check(ctx, ex, ex.Solution)
			if err != nil {
				t.Fatal(err)
			}
			if !pass.Passed || pass.Error != nil || pass.Counterexample != nil {
				t.Fatalf("solution did not pass: %+v %+v %+v", pass, pass.Error, pass.Counterexample)
			}
			// The naive enumeration replays every schedule one by one (up to
			// ~80 s for the race exercise on a quiet machine); under the race
			// detector that is many minutes, so it runs only without it.
			if !raceDetector {
				naive, err := check(ctx, ex, ex.Solution, false)
				if err != nil {
					t.Fatal(err)
				}
				if !naive.Passed {
					t.Fatalf("solution did not pass without pruning: %+v", naive.Error)
				}
				t.Logf("solution: %d schedules, %d distinct states, %d naive schedules, %d runs; without pruning: %d schedules, %d runs",
					pass.Schedules, pass.DistinctStates, pass.NaiveSchedules, pass.Runs, naive.Schedules, naive.Runs)
				if int64(naive.Schedules) != pass.NaiveSchedules {
					t.Errorf("the state graph counts %d complete schedules, the naive enumeration checked %d", pass.NaiveSchedules, naive.Schedules)
				}
			}
			if 2*pass.Schedules > int(pass.NaiveSchedules) {
				t.Errorf("pruning checked %d schedules, more than half of the naive %d", pass.Schedules, pass.NaiveSchedules)
			}
			fail, err := Check(ctx, ex, ex.Start)
			if err != nil {
				t.Fatal(err)
			}
			if fail.Passed || fail.Error != nil || fail.Counterexample == nil {
				t.Fatalf("start did not fail with a counterexample: %+v %+v", fail, fail.Error)
			}
			ce := fail.Counterexample
			t.Logf("start: %s\n  script: %s\n  story: %s", ce.Invariant, ce.Script, ce.Story)
		})
	}
}

// BenchmarkCheck checks each built-in exercise's solution with pruning
// (BenchmarkCheck/ID) and without (BenchmarkCheck/ID/naive), in one run;
// -short leaves the naive ones out.
func BenchmarkCheck(b *testing.B) {
	for _, ex := range exerciseFixtures(b) {
		for _, mode := range []struct {
			name  string
			prune bool
		}{{ex.ID, true}, {ex.ID + "/naive", false}} {
			b.Run(mode.name, func(b *testing.B) {
				if testing.Short() && !mode.prune {
					b.Skip("the naive enumeration takes minutes; -short measures the checks alone")
				}
				var res *CheckResult
				for b.Loop() {
					var err error
					res, err = check(context.Background(), ex, ex.Solution, mode.prune)
					if err != nil {
						b.Fatal(err)
					}
					if !res.Passed {
						b.Fatalf("the solution did not pass: error %v, counterexample %+v", res.Error, res.Counterexample)
					}
				}
				b.ReportMetric(float64(res.Schedules), "schedules")
				b.ReportMetric(float64(res.DistinctStates), "states")
				b.ReportMetric(float64(res.Runs), "runs")
			})
		}
	}
}

func TestCheck_Deterministic(t *testing.T) {
	relaxCheckTimeout(t)
	for _, ex := range exerciseFixtures(t) {
		for _, src := range []string{ex.Start, ex.Solution} {
			a, err := Check(context.Background(), ex, src)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Check(context.Background(), ex, src)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s: two checks differ:\n%+v\n%+v", ex.ID, a, b)
			}
		}
	}
}

func TestCheck_CounterexampleReplaysInThePlayground(t *testing.T) {
	ex := exerciseByID(t, "reorder-mark")
	res, err := Check(context.Background(), ex, ex.Start)
	if err != nil || res.Counterexample == nil {
		t.Fatalf("%v %+v", err, res)
	}
	ce := res.Counterexample
	if want := "deliver msg-1 crash-after 2; redeliver msg-1"; ce.Script != want {
		t.Errorf("script %q, want %q", ce.Script, want)
	}
	if want := "deliver msg-1 to A; A crashes after step 2; redeliver msg-1 to A, whose handler stops at line 3 (it found a row) → msg-1 was acked but its effect is not in the ledger (acc-1 balance 100, expected 180)"; ce.Story != want {
		t.Errorf("story %q, want %q", ce.Story, want)
	}
	// The schedule runs in the playground with the learner's handler.
	h, err := ParseHandler("mine", ex.Start)
	if err != nil {
		t.Fatal(err)
	}
	if got := (&Script{Events: ce.Schedule}).String(); got != ce.Script {
		t.Errorf("schedule %q, script %q", got, ce.Script)
	}
	tr, err := Run(context.Background(), Request{Scenario: ce.Scenario, Events: ce.Schedule, Custom: []*Handler{h}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Handlers[0]; got.OK || got.Verdict != VerdictLost {
		t.Errorf("the playground gives %s (ok=%v), want %s", got.Verdict, got.OK, VerdictLost)
	}
}

func TestCheck_HandlerErrors(t *testing.T) {
	ex := exerciseByID(t, "dedupe-credit")
	for _, c := range []struct {
		name, source string
		line         int
		want         string
	}{
		{"typo in a column", "@on credit\nUPDATE accounts SET balanse = 1 WHERE id = :account_id;\n", 2, "balanse"},
		{"unknown parameter", "@on credit\n\nUPDATE accounts SET balance = :amout WHERE id = :account_id;\n", 3, ":amout"},
		{"open transaction", "@on credit\nBEGIN;\nUPDATE accounts SET balance = 1 WHERE id = :account_id;\n", 2, "BEGIN without COMMIT"},
		{"empty", "-- nothing\n", 0, "no SQL statements"},
	} {
		res, err := Check(context.Background(), ex, c.source)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Passed || res.Error == nil || res.Error.Line != c.line || !strings.Contains(res.Error.Message, c.want) {
			t.Errorf("%s: got %+v, want line %d and %q", c.name, res.Error, c.line, c.want)
		}
	}
	// A statement that always fails: the message is dead-lettered, its
	// effect lost, and the counterexample names the failing line.
	res, err := Check(context.Background(), ex, "@on credit\nINSERT INTO accounts(id, balance) VALUES (:account_id, 0);\n")
	if err != nil {
		t.Fatal(err)
	}
	if ce := res.Counterexample; ce == nil || ce.SQLError == nil || ce.SQLError.Line != 2 || !strings.Contains(ce.SQLError.Message, "UNIQUE") {
		t.Errorf("always failing: got %+v", res.Counterexample)
	} else {
		t.Logf("%s\n%s", ce.Script, ce.Story)
	}
}

func TestExercise_ValidateNamesTheField(t *testing.T) {
	base := func() *Exercise { return exerciseByID(t, "dedupe-credit") }
	for _, c := range []struct {
		name string
		edit func(*Exercise)
		want string
	}{
		{"bad id", func(e *Exercise) { e.ID = "Bad Id" }, "id"},
		{"no goal", func(e *Exercise) { e.Goal = " " }, "goal"},
		{"no scenario", func(e *Exercise) { e.Scenarios = nil }, "scenarios"},
		{"unknown scenario", func(e *Exercise) { e.Scenarios = []string{"lost-ak"} }, "unknown scenario"},
		{"partition scenario", func(e *Exercise) { e.Scenarios = []string{"partition-crash"} }, "partition-crash reads a partition with poll and rebalance"},
		{"too many workers", func(e *Exercise) { e.Bounds.Workers = 3 }, "bounds.workers"},
		{"too many messages", func(e *Exercise) { e.Bounds.Messages = 5 }, "bounds.messages"},
		{"unknown invariant", func(e *Exercise) { e.Invariants = []string{"exactly-twice"} }, "unknown invariant"},
		{"no invariant", func(e *Exercise) { e.Invariants = nil }, "invariants"},
		{"long schedules", func(e *Exercise) { e.Bounds.MaxEvents = 99 }, "bounds.max_events"},
		{"big budget", func(e *Exercise) { e.Bounds.Crashes = 9 }, "bounds.crashes"},
		{"interleave alone", func(e *Exercise) { e.Bounds.Interleave, e.Bounds.Workers = true, 1 }, "bounds.interleave"},
		{"advance without clock", func(e *Exercise) { e.Bounds.Advance = []int64{10} }, "bounds.max_clock"},
		{"overlap workers", func(e *Exercise) { e.Overlap.Workers = 3 }, "overlap.workers"},
		{"overlap negative", func(e *Exercise) { e.Overlap.Workers = -1 }, "overlap.workers"},
		{"storage clock", func(e *Exercise) { e.Storage = ExploreBounds{Advance: []int64{96}} }, "storage.max_clock"},
		{"empty hint", func(e *Exercise) { e.Hints = []string{""} }, "hints[0]"},
		{"broken start", func(e *Exercise) { e.Start = "@on credit\nUPDATE nowhere SET x = 1;\n" }, "start: handler mine, line 2: no such table"},
		{"no solution", func(e *Exercise) { e.Solution = "" }, "solution"},
	} {
		e := base()
		c.edit(e)
		err := e.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to name %q", c.name, err, c.want)
		}
	}
}

// FuzzCheckInput: whatever exercise id and handler source arrive (the check
// endpoint's form fields), Check answers without panicking.
func FuzzCheckInput(f *testing.F) {
	exercises := map[string]*Exercise{}
	for _, ex := range exerciseFixtures(f) {
		exercises[ex.ID] = ex
		f.Add(ex.ID, ex.Start)
		f.Add(ex.ID, ex.Solution)
	}
	for _, h := range hostileHandlers(f.TempDir()) {
		f.Add("dedupe-credit", h.source)
	}
	f.Add("nope", "")
	f.Add("reorder-mark", "@on credit\nBEGIN;\nCOMMIT;\nROLLBACK;\n")
	f.Add("race-check-then-insert", "@filter\n@on credit\nSELECT 1;\n@stop-if-found\n")
	f.Fuzz(func(t *testing.T, id, source string) {
		ex, ok := exercises[id]
		if !ok {
			return
		}
		start := time.Now()
		res, err := Check(context.Background(), ex, source)
		if took := time.Since(start); took > 2*sandboxCheckTimeout {
			t.Fatalf("the check took %v, past its deadline", took)
		}
		if err != nil {
			if strings.Contains(err.Error(), "took longer") {
				return
			}
			t.Fatalf("internal error: %v", err)
		}
		if res.Passed && (res.Error != nil || res.Counterexample != nil) {
			t.Fatalf("passed with an error or a counterexample: %+v", res)
		}
	})
}

func TestCheck_LeavesNoLedgerOpen(t *testing.T) {
	relaxCheckTimeout(t)
	before := openLedgers.Load()
	for _, ex := range exerciseFixtures(t) {
		for _, src := range []string{ex.Start, ex.Solution, "@on credit\nSELECT nothing;\n"} {
			if _, err := Check(context.Background(), ex, src); err != nil {
				t.Fatal(err)
			}
		}
	}
	if after := openLedgers.Load(); after != before {
		t.Errorf("%d ledgers left open", after-before)
	}
}

func TestCheck_StopsAtTheDeadline(t *testing.T) {
	ex := exerciseByID(t, "race-check-then-insert")
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	time.Sleep(2 * time.Millisecond)
	_, err := Check(ctx, ex, ex.Solution)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "took longer than") {
		t.Errorf("got %v, want the context's deadline, said in words", err)
	}
}

// TestCheck_CallerDeadlineDecides: a caller's own deadline replaces the
// default limit, so lint's minute is not cut to a learner's few seconds.
func TestCheck_CallerDeadlineDecides(t *testing.T) {
	saved := checkTimeout
	checkTimeout = time.Nanosecond
	t.Cleanup(func() { checkTimeout = saved })
	ex := exerciseByID(t, "reorder-mark")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Check(ctx, ex, ex.Solution)
	if err != nil || !res.Passed {
		t.Fatalf("with the caller's minute the solution should pass: %+v, %v", res, err)
	}
	if _, err := Check(context.Background(), ex, ex.Solution); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("without a caller deadline the default limit applies; got %v", err)
	}
}

// TestCheck_Golden pins every built-in exercise's answer for its start
// and its solution (go test -run TestCheck_Golden -update rewrites it).
func TestCheck_Golden(t *testing.T) {
	relaxCheckTimeout(t)
	type entry struct {
		Handler string       `json:"handler"`
		Result  *CheckResult `json:"result"`
	}
	var got []entry
	for _, ex := range exerciseFixtures(t) {
		for _, c := range []struct{ name, src string }{{"start", ex.Start}, {"solution", ex.Solution}} {
			res, err := Check(context.Background(), ex, c.src)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, entry{ex.ID + "/" + c.name, res})
		}
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", "check.golden.json")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != string(b) {
		t.Errorf("check results differ from %s (run with -update after checking the difference):\n%s", path, b)
	}
}

// TestCheck_NearMissesFail: plausible wrong answers a learner might try
// must each get a counterexample.
func TestCheck_NearMissesFail(t *testing.T) {
	relaxCheckTimeout(t)
	for _, c := range []struct{ exercise, name, source string }{
		{"dedupe-credit", "dedupe row in its own transaction", "@on credit\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n"},
		{"dedupe-credit", "check, then apply, then insert", "@on credit\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n"},
		{"reorder-mark", "mark after", "@on credit\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\nBEGIN;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n"},
		{"conditional-ship", "guard without a stop", "@on ship\nBEGIN;\nUPDATE orders SET state = 'shipped', shipped_at = :now WHERE id = :order_id AND state = 'paid';\nINSERT INTO shipments(order_id, message_id, shipped_at) VALUES (:order_id, :message_id, :now);\nCOMMIT;\n"},
		{"race-check-then-insert", "dedupe row after the credit", "@on credit\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n"},
		{"dedupe-retention", "covers the retry window only", strings.Replace(exerciseByID(t, "dedupe-retention").Solution, ":now - 168", ":now - 100", 1)},
	} {
		res, err := Check(context.Background(), exerciseByID(t, c.exercise), c.source)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Passed || res.Counterexample == nil {
			t.Errorf("%s/%s: no counterexample: %+v", c.exercise, c.name, res)
			continue
		}
		t.Logf("%s/%s: %s", c.exercise, c.name, res.Counterexample.Story)
	}
}

// TestCheck_Concurrent: checks running at once (several learners) give
// the answers they give alone.
func TestCheck_Concurrent(t *testing.T) {
	relaxCheckTimeout(t)
	exs := exerciseFixtures(t)
	want := make([]*CheckResult, len(exs))
	for i, ex := range exs {
		var err error
		if want[i], err = Check(context.Background(), ex, ex.Start); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]*CheckResult, len(exs))
	errs := make(chan error, len(exs))
	for i, ex := range exs {
		go func() {
			var err error
			got[i], err = Check(context.Background(), ex, ex.Start)
			errs <- err
		}()
	}
	for range exs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("concurrent checks differ from sequential ones")
	}
}

// TestCheck_RestartsAndExpiries exercises the faults the five exercises do
// not use: a restart that empties an in-process filter, and a lease that
// expires under a running worker.
func TestCheck_RestartsAndExpiries(t *testing.T) {
	for _, c := range []struct {
		scenario   string
		bounds     ExploreBounds
		fail, pass string
	}{
		{"restart-filter", ExploreBounds{Workers: 1, MaxEvents: 4, LostAcks: 1, Restarts: 1}, "memory-filter", "filter-dedupe"},
		{"lease-expiry", ExploreBounds{Workers: 2, Interleave: true, MaxEvents: 10, Expiries: 1}, "increment", "dedupe-tx"},
	} {
		ex := &Exercise{ID: "x-" + c.scenario, Goal: "test", Scenarios: []string{c.scenario}, Invariants: []string{InvariantExactlyOnce},
			Bounds: c.bounds, Start: builtinHandlers[c.fail].Source, Solution: builtinHandlers[c.pass].Source}
		fail, err := Check(context.Background(), ex, ex.Start)
		if err != nil {
			t.Fatal(err)
		}
		if fail.Passed || fail.Counterexample == nil {
			t.Errorf("%s: %s passed", c.scenario, c.fail)
		} else {
			t.Logf("%s: %s", c.fail, fail.Counterexample.Story)
		}
		pass, err := Check(context.Background(), ex, ex.Solution)
		if err != nil {
			t.Fatal(err)
		}
		if !pass.Passed {
			t.Errorf("%s: %s failed: %+v %+v", c.scenario, c.pass, pass.Error, pass.Counterexample)
		}
	}
}

// mutationGroup is one entry of testdata/mutations.yaml: handlers that the
// named exercises must refuse, and handlers they must pass.
type mutationGroup struct {
	Exercises []string `yaml:"exercises"`
	Wrong     []struct {
		Name   string `yaml:"name"`
		Source string `yaml:"source"`
	} `yaml:"wrong"`
	Right []struct {
		Name   string `yaml:"name"`
		Source string `yaml:"source"`
	} `yaml:"right"`
}

// readMutationGroups decodes testdata/mutations.yaml, strictly.
func readMutationGroups(t *testing.T) []mutationGroup {
	t.Helper()
	b, err := os.ReadFile("testdata/mutations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var groups []mutationGroup
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&groups); err != nil {
		t.Fatal(err)
	}
	return groups
}

// TestCheck_MutationSuite runs the catalogue in testdata/mutations.yaml:
// every exercise refuses at least 8 plausible wrong handlers, each with a
// counterexample, and passes at least 6 correct handlers written
// differently from its solution.
func TestCheck_MutationSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about a hundred checks")
	}
	relaxCheckTimeout(t)
	groups := readMutationGroups(t)
	wrong, right := map[string]int{}, map[string]int{}
	for _, g := range groups {
		for _, id := range g.Exercises {
			wrong[id] += len(g.Wrong)
			right[id] += len(g.Right)
			ex := exerciseByID(t, id)
			for _, m := range g.Wrong {
				t.Run(id+"/wrong/"+m.Name, func(t *testing.T) {
					t.Parallel()
					res, err := Check(context.Background(), ex, m.Source)
					if err != nil {
						t.Fatal(err)
					}
					if res.Passed || res.Counterexample == nil {
						t.Errorf("passed %v, error %+v: a wrong handler must be refused with a counterexample", res.Passed, res.Error)
					} else if why := counterexampleOutOfBounds(t, ex, m.Source, res.Counterexample); why != "" {
						t.Errorf("the counterexample %q is outside every set of the exercise's bounds: %s", res.Counterexample.Script, why)
					} else if dups := ex.Bounds.Duplicates + ex.Overlap.Duplicates + ex.Storage.Duplicates; dups == 0 && strings.Contains(res.Counterexample.Story, "second copy") {
						t.Errorf("the story %q tells of a second copy, which the exercise's bounds do not allow", res.Counterexample.Story)
					}
				})
			}
			for _, m := range g.Right {
				t.Run(id+"/right/"+m.Name, func(t *testing.T) {
					t.Parallel()
					res, err := Check(context.Background(), ex, m.Source)
					if err != nil {
						t.Fatal(err)
					}
					if !res.Passed {
						ce := ""
						if res.Counterexample != nil {
							ce = res.Counterexample.Script + " → " + res.Counterexample.Violation
						}
						t.Errorf("refused: %s %+v", ce, res.Error)
					}
				})
			}
		}
	}
	for _, ex := range exerciseFixtures(t) {
		if wrong[ex.ID] < 8 || right[ex.ID] < 6 {
			t.Errorf("exercise %s: %d wrong and %d right handlers; want at least 8 and 6", ex.ID, wrong[ex.ID], right[ex.ID])
		}
	}
}

// TestCheck_BoundedStorage: with bounds.max_id_age a handler that never
// prunes its dedupe table is refused, and one that keeps ids exactly as
// long as a copy can come back passes.
func TestCheck_BoundedStorage(t *testing.T) {
	relaxCheckTimeout(t)
	ex := exerciseByID(t, "dedupe-retention")
	ex.Bounds = ExploreBounds{Workers: 1, Messages: 2, MaxEvents: 5,
		Advance: []int64{72, 96}, MaxClock: 216, MaxIDAge: 200}
	ex.Overlap, ex.Storage = ExploreBounds{}, ExploreBounds{} // this set of bounds only
	neverPrunes := "@on credit\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	res, err := Check(context.Background(), ex, neverPrunes)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.Counterexample == nil || res.Counterexample.Invariant != RuleBoundedStorage {
		t.Errorf("never pruning: passed %v, counterexample %+v; want refused by %s", res.Passed, res.Counterexample, RuleBoundedStorage)
	}
	res, err = Check(context.Background(), ex, ex.Solution)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed {
		t.Errorf("the solution is refused: %+v", res.Counterexample)
	}

	// The exercise as a learner meets it: a handler that never prunes
	// passes its retry and overlap bounds and is refused by its storage
	// bound, with the shortest story that shows an old id kept.
	res, err = Check(context.Background(), exerciseByID(t, "dedupe-retention"), neverPrunes)
	if err != nil {
		t.Fatal(err)
	}
	ce := res.Counterexample
	if res.Passed || ce == nil || ce.Invariant != RuleBoundedStorage || ce.Script != "deliver pay-1; advance 192; deliver pay-2" ||
		!strings.Contains(ce.Violation, "the id pay-1 recorded in processed_messages at tick 0 is still stored at tick 192") {
		t.Errorf("never pruning, in the exercise: passed %v, counterexample %+v", res.Passed, ce)
	}
}

// TestExploreBounds_Describe: an exercise's page says in words every fault
// its bounds include.
func TestExploreBounds_Describe(t *testing.T) {
	for _, ex := range exerciseFixtures(t) {
		for _, c := range ex.checks() {
			d := c.bounds.Describe(ex.Scenarios)
			b := c.bounds
			for _, c := range []struct {
				on   bool
				word string
			}{{b.Crashes > 0, "crash"}, {b.LostAcks > 0, "ack that never reaches"}, {b.Expiries > 0, "while the first is still being handled"},
				{b.Duplicates > 0, "second copy"}, {b.Publishes > 0, "sending a message again"}, {b.Replays > 0, "replayed"},
				{b.Interleave, "interleaved"}, {len(b.Advance) > 0, "clock may jump"}, {b.MaxIDAge > 0, "Storage is bounded"},
				{true, "never dead-lettered"}} {
				if c.on && !strings.Contains(d, c.word) {
					t.Errorf("%s: %q does not say %q", ex.ID, d, c.word)
				}
			}
			if all := ex.DescribeChecks(); !strings.Contains(all, strings.TrimSuffix(d[strings.Index(d, " every schedule"):], rulesEveryMessage)) {
				t.Errorf("%s: the page's description %q leaves out %q", ex.ID, all, d)
			}
		}
	}
}

// TestExercises_EveryCheckHasACopyWhileTheFirstRuns: a duplicate that
// arrives while the first copy is still running (a lease that runs out
// under a slow handler, a second copy) is part of every exercise's
// checks, statement by statement, so a handler whose check sits outside
// the transaction that writes fails everywhere.
func TestExercises_EveryCheckHasACopyWhileTheFirstRuns(t *testing.T) {
	for _, ex := range exerciseFixtures(t) {
		found := false
		for _, c := range ex.checks() {
			found = found || c.bounds.Interleave && c.bounds.Workers >= 2 && (c.bounds.Expiries > 0 || c.bounds.Duplicates > 0)
		}
		if !found {
			t.Errorf("%s: no set of bounds interleaves a second copy with the first", ex.ID)
		}
	}
}

// relaxCheckTimeout lifts the check's wall-clock limit for a test that
// judges verdicts, not speed (BenchmarkCheck measures that): on a machine
// shared with other test suites a check can wait for a core longer than
// the limit.
func relaxCheckTimeout(t *testing.T) {
	saved := checkTimeout
	checkTimeout = time.Minute
	t.Cleanup(func() { checkTimeout = saved })
}

// counterexampleOutOfBounds says why a counterexample is within none of
// the exercise's sets of bounds ("" when it is within one): a schedule
// the checker shows must be one it was allowed to try.
func counterexampleOutOfBounds(t *testing.T, ex *Exercise, source string, ce *Counterexample) string {
	t.Helper()
	h, _, err := parseHandlerChecked(exerciseHandlerName, source, checkSQL)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := LookupScenario(ce.Scenario)
	var why []string
	for _, c := range ex.checks() {
		x, err := newExplorer(context.Background(), sc, h, c.bounds, ex.Invariants, true)
		if err != nil {
			t.Fatal(err)
		}
		s, serr, err := x.runScript(ce.Schedule)
		if err != nil {
			t.Fatal(err)
		}
		if serr != nil {
			why = append(why, c.field+": "+serr.Message)
			x.releaseSpare()
			continue
		}
		w := x.scheduleOutOfBounds(ce.Schedule, s)
		x.release(s)
		x.releaseSpare()
		if w == "" {
			return ""
		}
		why = append(why, c.field+": "+w)
	}
	return strings.Join(why, "; ")
}
