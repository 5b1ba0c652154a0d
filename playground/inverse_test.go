package playground

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// inverseFixtures loads testdata/inverse/*.yaml: the course's inverse
// exercises, in the YAML form a lesson's ```exercise block uses.
func inverseFixtures(tb testing.TB) map[string]*Exercise {
	tb.Helper()
	paths, _ := filepath.Glob("testdata/inverse/*.yaml")
	if len(paths) < 2 {
		tb.Fatalf("want at least two inverse exercise fixtures, have %d", len(paths))
	}
	out := map[string]*Exercise{}
	for _, p := range paths {
		ex := readExerciseFixture(tb, p)
		if !ex.IsInverse() {
			tb.Fatalf("%s is not an inverse exercise", p)
		}
		out[ex.ID] = ex
	}
	return out
}

func TestCheckBreak_Verdicts(t *testing.T) {
	exs := inverseFixtures(t)
	cases := []struct {
		name, exercise, script string
		broken, asShort        bool
		want                   string // in the violation, the held text or the error
		errLine                int
	}{
		{"TwoIdsOnePaymentBreaksItShortest", "break-message-id", "deliver msg-1; deliver msg-2", true, true,
			"payment pay-7 credited 2 times to acc-1 (msg-1 and msg-2 carry it)", 0},
		{"ALongerBreakIsConfirmedButNotShortest", "break-message-id", "deliver msg-1 lose-ack\nredeliver msg-1\ndeliver msg-3\ndeliver msg-2", true, false,
			"payment pay-7 credited 2 times", 0},
		{"ALostAckDoesNotBreakDedupeByID", "break-message-id", "deliver msg-1 lose-ack; redeliver msg-1", false, false,
			"every message took effect once", 0},
		{"BothCopiesOnDedupeKeyStyleScriptOnlyOneCopy", "break-message-id", "deliver msg-2; deliver msg-3", false, false,
			"every message took effect once", 0},
		{"UnfinishedRunIsNotALoss", "break-message-id", "deliver msg-1 crash-after 1", false, false,
			"the broker still owes msg-1 a delivery", 0},
		{"NothingDelivered", "break-message-id", "crash A", false, false, "no message was delivered", 0},
		{"ParseErrorNamesTheLine", "break-message-id", "deliver msg-1\n\ndelivr msg-2", false, false, `event 2: unknown event "delivr"`, 3},
		{"AnEventThatCannotHappen", "break-message-id", "deliver msg-1\nredeliver msg-1", false, false,
			"event 2 (redeliver msg-1) could not happen: msg-1 was acked", 2},
		{"TooLong", "break-message-id", "deliver msg-1; deliver msg-3; deliver msg-1 to B; deliver msg-3 to B; deliver msg-2; deliver msg-2", false, false,
			"event 6 (deliver msg-2): the script may have at most 5 events", 1},
		{"AFaultOutsideTheBounds", "break-message-id", "deliver msg-1; replay", false, false, "event 2 (replay): this exercise allows no replays", 1},
		{"TwoLostAcksWhereOneIsAllowed", "break-message-id", "deliver msg-1 lose-ack\nredeliver msg-1 lose-ack", false, false,
			"this exercise allows at most 1 lost acks", 2},
		{"AnUnknownMessage", "break-message-id", "deliver msg-9", false, false, "msg-9 is not part of this exercise; its messages are msg-1, msg-2, msg-3", 1},
		{"StepsNeedInterleave", "break-message-id", "start msg-1 on A", false, false, "this exercise runs each delivery whole", 1},
		{"EmptyScript", "break-message-id", "  # nothing\n", false, false, "the script is empty", 0},
		{"CrashBetweenShipmentAndStateBreaksShipping", "break-shipping", "deliver ship-1 crash-after 2; redeliver ship-1", true, true,
			"order ord-1 paid but not shipped", 0},
		{"CrashWithAnotherWorkerTooIsLonger", "break-shipping", "deliver ship-2; deliver ship-1 to B crash-after 2; redeliver ship-1 to A", true, false,
			"order ord-1 paid but not shipped", 0},
		{"ALostAckDoesNotBreakShipping", "break-shipping", "deliver ship-1 lose-ack; redeliver ship-1 to B", false, false,
			"every paid order whose message was delivered shipped once", 0},
		{"ACrashBeforeAnyWriteDoesNotBreakShipping", "break-shipping", "deliver ship-1 crash-after 1; redeliver ship-1", false, false,
			"every paid order", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := exs[c.exercise]
			res, err := CheckBreak(context.Background(), ex, c.script)
			if err != nil {
				t.Fatal(err)
			}
			if res.Broken != c.broken || res.AsShortAsShortest() != c.asShort {
				t.Fatalf("broken %v, as short %v; want %v, %v: %+v", res.Broken, res.AsShortAsShortest(), c.broken, c.asShort, res)
			}
			got := res.Violation + res.Held
			if res.Error != nil {
				got = res.Error.Message
				if res.Error.Line != c.errLine {
					t.Errorf("error on line %d, want %d: %v", res.Error.Line, c.errLine, res.Error)
				}
			} else if c.errLine != 0 {
				t.Errorf("no error, want one on line %d", c.errLine)
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("got %q, want it to contain %q", got, c.want)
			}
			if res.Broken && (res.Shortest == nil || res.Shortest.Events > res.Events) {
				t.Errorf("a breaking script of %d events, shortest %+v", res.Events, res.Shortest)
			}
			if !res.Broken && res.Shortest != nil {
				t.Error("the shortest is given away before the learner broke it")
			}
		})
	}
}

// TestShortestBreak_NoShorterScriptBreaks checks the explorer's shortest
// against a brute force that does not use it: every script one event
// shorter, built from every event the bounds allow, is run through
// CheckBreak, and none may break the handler.
func TestShortestBreak_NoShorterScriptBreaks(t *testing.T) {
	for id, ex := range inverseFixtures(t) {
		t.Run(id, func(t *testing.T) {
			ce, err := ShortestBreak(context.Background(), ex)
			if err != nil || ce == nil {
				t.Fatalf("shortest: %+v, %v", ce, err)
			}
			res, err := CheckBreak(context.Background(), ex, ce.Script)
			if err != nil || !res.Broken || !res.AsShortAsShortest() || res.Violation != ce.Violation {
				t.Fatalf("the shortest script %q does not check as breaking: %+v %v", ce.Script, res, err)
			}
			vocabulary := allowedEvents(ex)
			scripts := []string{""}
			for length := 1; length < ce.Events; length++ {
				var longer []string
				for _, prefix := range scripts {
					for _, ev := range vocabulary {
						longer = append(longer, strings.TrimPrefix(prefix+"; "+ev, "; "))
					}
				}
				scripts = longer
				for _, s := range scripts {
					r, err := CheckBreak(context.Background(), ex, s)
					if err != nil {
						t.Fatal(err)
					}
					if r.Broken {
						t.Fatalf("%q (%d events) breaks it, but the shortest found has %d: %s", s, length, ce.Events, ce.Script)
					}
				}
			}
		})
	}
}

// allowedEvents lists every single event a learner may write for the
// exercise: each message delivered, redelivered or published to each
// worker, with each fault, and the events without a message.
func allowedEvents(ex *Exercise) []string {
	sc, _ := LookupScenario(ex.Scenarios[0])
	b := ex.Bounds.withDefaults()
	faults := []string{""}
	if b.LostAcks > 0 {
		faults = append(faults, " lose-ack")
	}
	if b.Crashes > 0 {
		faults = append(faults, " crash-before-ack")
		for n := 1; n <= 6; n++ {
			faults = append(faults, fmt.Sprintf(" crash-after %d", n))
		}
	}
	var out []string
	for _, m := range sc.Messages {
		for _, kind := range []string{"deliver", "redeliver", "publish"} {
			for _, w := range sc.Workers[:b.Workers] {
				for _, f := range faults {
					out = append(out, fmt.Sprintf("%s %s to %s%s", kind, m.ID, w, f))
				}
			}
		}
	}
	return append(out, "crash A", "replay", "prune", "restart A")
}

func TestExercise_BreakHandlerSourceShowsTheScenariosKinds(t *testing.T) {
	ex := inverseFixtures(t)["break-message-id"] // dedupe-tx, on a scenario of credits
	src := ex.BreakHandlerSource()
	if !strings.Contains(src, "@on credit") || strings.Contains(src, "@on ship") || !strings.HasPrefix(src, "-- dedupe-tx") {
		t.Errorf("the handler to break reads:\n%s", src)
	}
	if _, err := ParseHandler("shown", src); err != nil {
		t.Errorf("what the page shows does not parse: %v", err)
	}
	ship := inverseFixtures(t)["break-shipping"]
	if got := ship.BreakHandlerSource(); strings.TrimSpace(got) != strings.TrimSpace(ship.BreakHandler) {
		t.Errorf("a handler written in the block is shown as %q", got)
	}
}

func TestShortestBreak_Deterministic(t *testing.T) {
	ex := inverseFixtures(t)["break-shipping"]
	a, err := CheckBreak(context.Background(), ex, "deliver ship-1 crash-after 2; redeliver ship-1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := CheckBreak(context.Background(), ex, "deliver ship-1 crash-after 2; redeliver ship-1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two checks of one script differ:\n%+v\n%+v", a, b)
	}
}

func TestExerciseValidate_InverseFields(t *testing.T) {
	base := func() *Exercise {
		return &Exercise{ID: "inv", Goal: "Break it.", Scenarios: []string{"producer-retry"}, Invariants: []string{InvariantExactlyOnce}, Break: "dedupe-tx"}
	}
	cases := []struct {
		name   string
		change func(*Exercise)
		want   string
	}{
		{"Both", func(e *Exercise) { e.BreakHandler = "@on credit\nSELECT 1;\n" }, "exercise inv: break: give break (a built-in handler) or break_handler"},
		{"UnknownBuiltin", func(e *Exercise) { e.Break = "dedupe" }, `exercise inv: break: unknown handler "dedupe"`},
		{"BadHandler", func(e *Exercise) { e.Break, e.BreakHandler = "", "@on credit\nUPDATE accounts SET balance = :amout;\n" }, "exercise inv: break_handler: handler mine, line 2: unknown parameter :amout"},
		{"TwoScenarios", func(e *Exercise) { e.Scenarios = []string{"producer-retry", "lost-ack"} }, "scenarios: 2 scenarios; an inverse exercise has one"},
		{"Overlap", func(e *Exercise) { e.Overlap = ExploreBounds{Workers: 2} }, "overlap: an inverse exercise is checked under bounds only"},
		{"Interleave", func(e *Exercise) { e.Bounds = ExploreBounds{Workers: 2, Interleave: true} }, "bounds.interleave: an inverse exercise's scripts deliver whole"},
		{"Solution", func(e *Exercise) { e.Solution = "deliver msg-1" }, "solution: an inverse exercise has no written solution"},
		{"BadStart", func(e *Exercise) { e.Start = "deliver msg-1\nfly msg-2" }, `start: event 2: unknown event "fly"`},
		{"BoundsStillChecked", func(e *Exercise) { e.Bounds.MaxEvents = 99 }, "bounds.max_events: 99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := base()
			if err := e.Validate(); err != nil {
				t.Fatalf("the base exercise: %v", err)
			}
			c.change(e)
			err := e.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestCheck_RefusesAnInverseExercise(t *testing.T) {
	ex := inverseFixtures(t)["break-message-id"]
	if _, err := Check(context.Background(), ex, "@on credit\nSELECT 1;\n"); err == nil || !strings.Contains(err.Error(), "CheckBreak") {
		t.Errorf("Check on an inverse exercise: %v", err)
	}
	if _, err := CheckBreak(context.Background(), exerciseByID(t, "dedupe-credit"), "deliver msg-1"); err == nil {
		t.Error("CheckBreak on a handler exercise gave no error")
	}
}

func TestCheckBreak_LeavesNoLedgerOpen(t *testing.T) {
	before := openLedgers.Load()
	for _, ex := range inverseFixtures(t) {
		for _, s := range []string{ex.Start, "deliver msg-1; deliver msg-2", "deliver ship-1 crash-after 2; redeliver ship-1", "nonsense"} {
			if _, err := CheckBreak(context.Background(), ex, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if after := openLedgers.Load(); after != before {
		t.Errorf("%d ledgers open before, %d after", before, after)
	}
}

// FuzzCheckBreak: whatever script arrives in the form, CheckBreak answers
// without panicking, and an error names a line of the text.
func FuzzCheckBreak(f *testing.F) {
	exs := inverseFixtures(f)
	ids := make([]string, 0, len(exs))
	for id, ex := range exs {
		ids = append(ids, id)
		f.Add(id, ex.Start)
	}
	sort.Strings(ids)
	f.Add(ids[0], "deliver msg-1; deliver msg-2")
	f.Add(ids[0], "deliver msg-1 crash-after 99; advance 5; redrive msg-1")
	f.Add(ids[1], "deliver ship-1 crash-after 2\nredeliver ship-1 # the redelivery")
	f.Add(ids[1], "start ship-1 on B; step B; finish B")
	f.Fuzz(func(t *testing.T, id, script string) {
		ex, ok := exs[id]
		if !ok {
			return
		}
		res, err := CheckBreak(context.Background(), ex, script)
		if err != nil {
			if strings.Contains(err.Error(), "too long") {
				return
			}
			t.Fatalf("internal error: %v", err)
		}
		if e := res.Error; e != nil {
			if res.Broken || e.Message == "" || e.Line > strings.Count(script, "\n")+1 {
				t.Fatalf("bad error %+v for %q", e, script)
			}
			return
		}
		if res.Broken != (res.Invariant != "") || res.Broken == (res.Held != "") {
			t.Fatalf("inconsistent result %+v", res)
		}
	})
}

// BenchmarkCheckBreak measures a learner's check of the shortest breaking
// script against a plain run of the same script with the same handler
// (the baseline, measured in the same run): the check adds the search for
// the shortest script. ShortestBreak alone is what "Show the shortest" costs.
func BenchmarkCheckBreak(b *testing.B) {
	for id, ex := range inverseFixtures(b) {
		ce, err := ShortestBreak(context.Background(), ex)
		if err != nil || ce == nil {
			b.Fatal(ce, err)
		}
		var run, check time.Duration
		b.Run(id+"/run", func(b *testing.B) {
			h, err := ex.breakHandler()
			if err != nil {
				b.Fatal(err)
			}
			req := Request{Scenario: ex.Scenarios[0], Script: ce.Script, Custom: []*Handler{h}}
			start := time.Now()
			for b.Loop() {
				if _, err := Run(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
			run = time.Since(start) / time.Duration(b.N)
		})
		b.Run(id+"/check", func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				if res, err := CheckBreak(context.Background(), ex, ce.Script); err != nil || !res.Broken {
					b.Fatal(res, err)
				}
			}
			check = time.Since(start) / time.Duration(b.N)
			if run > 0 {
				b.ReportMetric(float64(check)/float64(run), "×run")
			}
		})
		b.Run(id+"/shortest", func(b *testing.B) {
			for b.Loop() {
				if _, err := ShortestBreak(context.Background(), ex); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
