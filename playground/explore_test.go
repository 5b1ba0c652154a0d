package playground

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		ex := &Exercise{}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(ex); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		if err := ex.Validate(); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		out = append(out, ex)
	}
	return out
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
	for _, ex := range exerciseFixtures(t) {
		t.Run(ex.ID, func(t *testing.T) {
			ctx := context.Background()
			pass, err := Check(ctx, ex, ex.Solution)
			if err != nil {
				t.Fatal(err)
			}
			if !pass.Passed || pass.Error != nil || pass.Counterexample != nil {
				t.Fatalf("solution did not pass: %+v %+v %+v", pass, pass.Error, pass.Counterexample)
			}
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
			if 2*pass.Schedules > naive.Schedules {
				t.Errorf("pruning checked %d schedules, more than half of the naive %d", pass.Schedules, naive.Schedules)
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
// (BenchmarkCheck/ID) and without (BenchmarkCheck/ID/naive), in one run.
func BenchmarkCheck(b *testing.B) {
	for _, ex := range exerciseFixtures(b) {
		for _, mode := range []struct {
			name  string
			prune bool
		}{{ex.ID, true}, {ex.ID + "/naive", false}} {
			b.Run(mode.name, func(b *testing.B) {
				var res *CheckResult
				for b.Loop() {
					var err error
					res, err = check(context.Background(), ex, ex.Solution, mode.prune)
					if err != nil || !res.Passed {
						b.Fatalf("%v %+v", err, res)
					}
				}
				b.ReportMetric(float64(res.Schedules), "schedules")
				b.ReportMetric(float64(res.DistinctStates), "states")
				b.ReportMetric(float64(res.Runs), "runs")
			})
		}
	}
}
