package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestRun_Verdicts runs every scenario's default script against every
// built-in handler. Rows marked in the scenario's own handler list are the
// ones lessons rely on.
func TestRun_Verdicts(t *testing.T) {
	const (
		ok         = VerdictOK
		dup        = VerdictDuplicate
		lost       = VerdictLost
		unexpected = VerdictUnexpected
	)
	want := map[string]map[string]string{
		"lost-ack": {"increment": dup, "set-value": lost, "dedupe-tx": ok, "conditional": ok, "check-then-insert": ok,
			"mark-before": ok, "mark-after": ok, "memory-filter": ok, "filter-dedupe": ok, "dedupe-key": ok},
		"crash-before-ack": {"increment": dup, "set-value": ok, "dedupe-tx": ok, "conditional": ok, "check-then-insert": ok,
			"mark-before": ok, "mark-after": ok, "memory-filter": dup, "filter-dedupe": ok, "dedupe-key": ok},
		"lease-expiry": {"increment": dup, "set-value": ok, "dedupe-tx": ok, "conditional": ok, "check-then-insert": ok,
			"mark-before": ok, "mark-after": ok, "memory-filter": dup, "filter-dedupe": ok, "dedupe-key": ok},
		"webhook-retry": {"increment": dup, "set-value": ok, "dedupe-tx": ok, "conditional": ok, "check-then-insert": dup,
			"mark-before": ok, "mark-after": dup, "memory-filter": dup, "filter-dedupe": ok, "dedupe-key": ok},
		"concurrent-duplicate": {"increment": dup, "set-value": ok, "dedupe-tx": ok, "conditional": ok, "check-then-insert": dup,
			"mark-before": ok, "mark-after": dup, "memory-filter": dup, "filter-dedupe": ok, "dedupe-key": ok},
		"topic-replay": {"increment": dup, "set-value": ok, "dedupe-tx": ok, "conditional": ok, "check-then-insert": ok,
			"mark-before": ok, "mark-after": ok, "memory-filter": ok, "filter-dedupe": ok, "dedupe-key": ok},
		"early-prune": {"increment": dup, "set-value": ok, "dedupe-tx": dup, "conditional": ok, "check-then-insert": dup,
			"mark-before": dup, "mark-after": dup, "memory-filter": ok, "filter-dedupe": ok, "dedupe-key": dup},
		"producer-retry": {"increment": dup, "set-value": ok, "dedupe-tx": dup, "conditional": ok, "check-then-insert": dup,
			"mark-before": dup, "mark-after": dup, "memory-filter": dup, "filter-dedupe": dup, "dedupe-key": ok},
		"dlq-redrive": {"increment": dup, "set-value": ok, "dedupe-tx": dup, "conditional": ok, "check-then-insert": dup,
			"mark-before": dup, "mark-after": dup, "memory-filter": ok, "filter-dedupe": ok, "dedupe-key": dup},
		"restart-filter": {"increment": dup, "set-value": ok, "dedupe-tx": ok, "conditional": ok, "check-then-insert": ok,
			"mark-before": ok, "mark-after": ok, "memory-filter": dup, "filter-dedupe": ok, "dedupe-key": ok},
		"order-shipping": {"increment": dup, "set-value": ok, "dedupe-tx": ok, "conditional": ok, "check-then-insert": ok,
			"mark-before": ok, "mark-after": ok, "memory-filter": dup, "filter-dedupe": ok, "dedupe-key": ok},
		"crash-mid-handler": {"increment": ok, "set-value": ok, "dedupe-tx": ok, "conditional": ok, "check-then-insert": ok,
			"mark-before": lost, "mark-after": dup, "memory-filter": ok, "filter-dedupe": ok, "dedupe-key": ok},
		"never-paid": {"increment": unexpected, "set-value": unexpected, "dedupe-tx": unexpected, "conditional": ok, "check-then-insert": unexpected,
			"mark-before": unexpected, "mark-after": unexpected, "memory-filter": unexpected, "filter-dedupe": unexpected, "dedupe-key": ok},
	}
	for sc, row := range offsetsVerdicts { // offsets_test.go
		if want[sc] == nil {
			want[sc] = map[string]string{}
		}
		maps.Copy(want[sc], row)
	}
	addOrderingVerdicts(want) // after the partition's row: versioned-set is lost there too (no credit section)
	mergeVerdicts(want, providerVerdicts)
	mergeVerdicts(want, retryVerdicts()) // backoff_test.go
	mergeVerdicts(want, stepsVerdicts()) // scenario_steps_test.go
	for _, sc := range Scenarios() {
		for _, h := range Handlers() {
			t.Run(sc.Name+"/"+h.Name, func(t *testing.T) {
				verdict, ok := want[sc.Name][h.Name]
				if !ok {
					t.Fatalf("no expected verdict for %s × %s", sc.Name, h.Name)
				}
				tr, err := Run(context.Background(), Request{Scenario: sc.Name, Handlers: []string{h.Name}})
				if err != nil {
					t.Fatal(err)
				}
				ht := tr.Handlers[0]
				if ht.Verdict != verdict {
					t.Errorf("verdict %s, want %s (expected %v, actual %v, violations %+v)", ht.Verdict, verdict, ht.Expected, ht.Actual, ht.Violations)
				}
				if ht.OK != (verdict == VerdictOK) {
					t.Errorf("ok = %v with verdict %s", ht.OK, ht.Verdict)
				}
				// Dead-lettered and pending are verdicts without a violation.
				if !ht.OK && verdict != VerdictDeadLettered && verdict != VerdictPending && (len(ht.Violations) == 0 || ht.FirstDivergence == nil) {
					t.Errorf("not ok, but no violations or first divergence")
				}
				if ht.OK && (len(ht.Violations) != 0 || ht.FirstDivergence != nil) {
					t.Errorf("ok, but violations %+v", ht.Violations)
				}
			})
		}
	}
}

// TestRun_IssueExamples pins the verdicts the issue names, with their scripts.
func TestRun_IssueExamples(t *testing.T) {
	tests := []struct {
		scenario, script string
		verdicts         map[string]string
		message          string // the violation's message for the non-ok handler
	}{
		{"lost-ack", "deliver msg-1 lose-ack; redeliver msg-1",
			map[string]string{"increment": VerdictDuplicate, "dedupe-tx": VerdictOK}, "msg-1"},
		{"concurrent-duplicate", "start msg-1 on A; start msg-1 on B; step A; step B; step A; step B; finish A; finish B",
			map[string]string{"check-then-insert": VerdictDuplicate, "dedupe-tx": VerdictOK}, "msg-1"},
		{"crash-mid-handler", "deliver msg-1 crash-after 4; redeliver msg-1 to B",
			map[string]string{"mark-before": VerdictLost, "mark-after": VerdictDuplicate}, "msg-1"},
		{"restart-filter", "deliver msg-1 lose-ack; restart A; redeliver msg-1",
			map[string]string{"memory-filter": VerdictDuplicate, "filter-dedupe": VerdictOK}, "msg-1"},
		{"restart-filter", "deliver msg-1 lose-ack; redeliver msg-1",
			map[string]string{"memory-filter": VerdictOK, "filter-dedupe": VerdictOK}, ""},
		{"early-prune", "deliver pay-1 lose-ack; advance 48; prune older-than 24; redeliver pay-1",
			map[string]string{"dedupe-tx": VerdictDuplicate}, "pay-1"},
		{"early-prune", "deliver pay-1 lose-ack; advance 48; prune older-than 72; redeliver pay-1",
			map[string]string{"dedupe-tx": VerdictOK}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.script, func(t *testing.T) {
			var names []string
			for _, h := range Handlers() {
				if _, ok := tt.verdicts[h.Name]; ok {
					names = append(names, h.Name)
				}
			}
			tr, err := Run(context.Background(), Request{Scenario: tt.scenario, Handlers: names, Script: tt.script})
			if err != nil {
				t.Fatal(err)
			}
			for _, ht := range tr.Handlers {
				if ht.Verdict != tt.verdicts[ht.Name] {
					t.Errorf("%s: verdict %s, want %s", ht.Name, ht.Verdict, tt.verdicts[ht.Name])
				}
				if !ht.OK && ht.Violations[0].MessageID != tt.message {
					t.Errorf("%s: violation on %q, want %q", ht.Name, ht.Violations[0].MessageID, tt.message)
				}
			}
		})
	}
}

func TestRun_GoldenTraces(t *testing.T) {
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			tr, err := Run(context.Background(), Request{Scenario: sc.Name})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(tr, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			var table bytes.Buffer
			if err := tr.WriteTable(&table); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", sc.Name+".json"), got)
			golden(t, filepath.Join("testdata", sc.Name+".txt"), table.Bytes())
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output; run go test ./playground -update and review the diff", path)
	}
}

func TestRun_Deterministic(t *testing.T) {
	for _, sc := range Scenarios() {
		for _, seed := range []int64{0, 7} {
			var out [2][]byte
			for i := range out {
				tr, err := Run(context.Background(), Request{Scenario: sc.Name, Seed: seed, Handlers: allHandlerNames()[:4]})
				if err != nil {
					t.Fatal(err)
				}
				if out[i], err = json.Marshal(tr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Errorf("%s seed %d: two runs gave different JSON", sc.Name, seed)
			}
		}
	}
}

func allHandlerNames() []string {
	var names []string
	for _, h := range Handlers() {
		names = append(names, h.Name)
	}
	return names
}

// TestRun_MirrorMatchesSQLite checks that the committed rows the change
// hooks maintain are exactly what SQLite holds, for every scenario and handler.
func TestRun_MirrorMatchesSQLite(t *testing.T) {
	var mismatches []string
	testHookBeforeClose = func(l *ledger) {
		rollbackOpenTransactions(l)
		got, err := readTables(l.pinned.conn)
		if err != nil {
			mismatches = append(mismatches, err.Error())
			return
		}
		for _, table := range tableOrder {
			if len(got[table]) == 0 && len(l.committed[table]) == 0 {
				continue
			}
			if !reflect.DeepEqual(got[table], l.committed[table]) {
				mismatches = append(mismatches, table)
			}
		}
	}
	defer func() { testHookBeforeClose = nil }()
	for _, sc := range Scenarios() {
		for _, h := range allHandlerNames() {
			if _, err := Run(context.Background(), Request{Scenario: sc.Name, Handlers: []string{h}}); err != nil {
				t.Fatal(err)
			}
			if len(mismatches) > 0 {
				t.Fatalf("%s × %s: mirror differs from SQLite in %v", sc.Name, h, mismatches)
			}
		}
	}
}

func TestRun_InputErrors(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"UnknownScenario", Request{Scenario: "nope"}, "scenario: unknown scenario \"nope\"; scenarios are lost-ack, "},
		{"UnknownHandler", Request{Scenario: "lost-ack", Handlers: []string{"magic"}}, "handlers: unknown handler \"magic\""},
		{"TooManyHandlers", Request{Scenario: "lost-ack", Handlers: allHandlerNames()[:5]}, "handlers: 5 handlers; the limit is 4"},
		{"DuplicateHandler", Request{Scenario: "lost-ack", Handlers: []string{"increment", "increment"}}, "listed twice"},
		{"UnknownWorker", Request{Scenario: "lost-ack", Script: "deliver msg-1; step C"}, "script: event 2: unknown worker C; workers are A, B"},
		{"UnknownMessage", Request{Scenario: "lost-ack", Script: "deliver msg-9"}, "script: event 1: unknown message msg-9; messages are msg-1, msg-2"},
		{"BadEvent", Request{Scenario: "lost-ack", Script: "deliver msg-1\nexplode"}, "script: event 2: unknown event \"explode\""},
		{"TooLong", Request{Scenario: "lost-ack", Script: strings.Repeat("advance 1; ", 900)}, "script: the script is"},
		{"TooManyEvents", Request{Scenario: "lost-ack", Script: strings.Repeat("replay;", 201)}, "script: event 201: the script has more than 200 events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), tt.req)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *InputError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestRun_ImpossibleEventsAreSkips(t *testing.T) {
	tr, err := Run(context.Background(), Request{Scenario: "lost-ack", Handlers: []string{"increment"},
		Script: "step A; finish B; deliver msg-1; redeliver msg-1; expire msg-1; redeliver msg-2"})
	if err != nil {
		t.Fatal(err)
	}
	var skips int
	for _, st := range tr.Handlers[0].Steps {
		if st.Kind == StepSkip {
			skips++
			if st.Note == "" {
				t.Errorf("skip step %d has no note", st.Index)
			}
		}
	}
	if skips != 5 {
		t.Errorf("%d skip steps, want 5", skips)
	}
}

func TestRun_Canceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Request{Scenario: "lost-ack"}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestRun_NoLeak runs a few thousand times and checks that no ledger,
// connection or goroutine is left behind.
func TestRun_NoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	ctx := context.Background()
	for _, sc := range Scenarios() { // build the templates first: they live for the process
		if _, err := Run(ctx, Request{Scenario: sc.Name}); err != nil {
			t.Fatal(err)
		}
	}
	goroutines := runtime.NumGoroutine()
	first := memdbSeq.Load()
	for i := 0; i < 2000; i++ {
		sc := scenarioList[i%len(scenarioList)]
		runCtx, cancel := ctx, context.CancelFunc(func() {})
		if i%2 == 1 { // the web layer runs under a deadline: modernc watches it per statement
			runCtx, cancel = context.WithTimeout(ctx, time.Minute)
		}
		_, err := Run(runCtx, Request{Scenario: sc.Name})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := openLedgers.Load(); n != 0 {
		t.Errorf("%d ledgers still open", n)
	}
	// A freed memdb database comes back empty when its name is opened again.
	for _, seq := range []int64{first + 1, memdbSeq.Load()} {
		uri := "file:/idemlab-ledger-" + strconv.FormatInt(seq, 10) + "?vfs=memdb"
		c, err := sqliteDriver.Open(uri)
		if err != nil {
			t.Fatal(err)
		}
		state, err := readTables(c)
		c.Close()
		if err == nil || len(state) > 0 {
			t.Errorf("%s still has its tables: the ledger was not freed", uri)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines, %d before", n, goroutines)
	}
}

// TestRequest_EventsScriptAndDefaults: a request's script can be given as
// events (as the web decodes them) or as text (as the CLI reads it), with
// the same trace; neither means the scenario's default script.
func TestRequest_EventsScriptAndDefaults(t *testing.T) {
	sc, _ := LookupScenario("lost-ack")
	const text = "deliver msg-1 lose-ack; redeliver msg-1"
	script, err := ParseScript(text)
	if err != nil {
		t.Fatal(err)
	}
	byText, err := Run(context.Background(), Request{Scenario: sc.Name, Script: text})
	if err != nil {
		t.Fatal(err)
	}
	req := sc.NewRequest()
	req.Events = script.Events
	parses, lookups := WorkCounts()
	byEvents, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if p, l := WorkCounts(); p != parses || l != lookups {
		t.Errorf("Run of a scenario's request with events parsed %d scripts and looked up %d scenarios, want none", p-parses, l-lookups)
	}
	if !reflect.DeepEqual(byText, byEvents) {
		t.Error("the same script as text and as events gives different traces")
	}
	tr, err := Run(context.Background(), Request{Scenario: sc.Name})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Script != sc.DefaultScript || len(tr.Handlers) != len(sc.Handlers) {
		t.Errorf("defaults not applied: script %q, %d handlers", tr.Script, len(tr.Handlers))
	}
	long := make([]Event, MaxScriptEvents+1)
	for i := range long {
		long[i] = Event{Kind: EventAdvance, N: 1}
	}
	var ie *InputError
	if _, err := Run(context.Background(), Request{Scenario: sc.Name, Events: long}); !errors.As(err, &ie) || ie.Field != "script" {
		t.Errorf("too many events: error %v", err)
	}
}

func TestScenarios_Catalogue(t *testing.T) {
	names := []string{"lost-ack", "crash-before-ack", "lease-expiry", "webhook-retry", "concurrent-duplicate",
		"topic-replay", "early-prune", "producer-retry", "dlq-redrive", "restart-filter", "order-shipping", "crash-mid-handler", "never-paid",
		"stale-price", "partition-crash", "card-charge", "receipt-email",
		"outage-requeue", "outage-backoff", "outage-jitter", "order-flow"}
	var got []string
	for _, sc := range Scenarios() {
		got = append(got, sc.Name)
		if sc.Title == "" || sc.Story == "" || len(sc.Handlers) == 0 || len(sc.Messages) == 0 {
			t.Errorf("%s: incomplete", sc.Name)
		}
		s, err := ParseScript(sc.DefaultScript)
		if err != nil {
			t.Errorf("%s: default script: %v", sc.Name, err)
		} else if s.String() != sc.DefaultScript {
			t.Errorf("%s: default script is not canonical: %q", sc.Name, s.String())
		}
		for _, h := range sc.Handlers {
			if _, err := LookupHandler(h); err != nil {
				t.Errorf("%s: %v", sc.Name, err)
			}
		}
	}
	if !reflect.DeepEqual(got, names) {
		t.Errorf("scenarios %v, want %v", got, names)
	}
	if _, err := LookupScenario("x"); err == nil || !strings.Contains(err.Error(), "crash-mid-handler") {
		t.Errorf("LookupScenario error does not list the names: %v", err)
	}
}

// TestRun_Concurrent runs scenarios from several goroutines at once, as the
// web server does; with -race it checks the engine shares nothing unsafely.
func TestRun_Concurrent(t *testing.T) {
	want := map[string][]byte{}
	for _, sc := range Scenarios() {
		tr, err := Run(context.Background(), Request{Scenario: sc.Name})
		if err != nil {
			t.Fatal(err)
		}
		want[sc.Name], _ = json.Marshal(tr)
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 20; i++ {
				sc := scenarioList[(g+i)%len(scenarioList)]
				tr, err := Run(context.Background(), Request{Scenario: sc.Name})
				if err != nil {
					errs <- err
					return
				}
				got, _ := json.Marshal(tr)
				if !bytes.Equal(got, want[sc.Name]) {
					errs <- errors.New(sc.Name + ": a concurrent run gave a different trace")
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// FuzzRun feeds arbitrary scripts to every handler of the concurrent
// scenario: a script that parses must run, give a verdict, and keep the
// step and frame indexes consistent.
func FuzzRun(f *testing.F) {
	for _, sc := range Scenarios() {
		f.Add(sc.DefaultScript, int64(0))
	}
	f.Add("start msg-1 on A; step A 2; start msg-1 on B; step B 3; crash A; finish B; replay; prune older-than 0; advance 40; redeliver msg-1 crash-after 2", int64(3))
	f.Fuzz(func(t *testing.T, script string, seed int64) {
		tr, err := Run(context.Background(), Request{Scenario: "concurrent-duplicate", Script: script, Seed: seed,
			Handlers: []string{"check-then-insert", "dedupe-tx", "mark-after", "filter-dedupe"}})
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
			return
		}
		for _, ht := range tr.Handlers {
			if len(ht.Frames) != len(tr.Events) {
				t.Fatalf("%s: %d frames for %d events", ht.Name, len(ht.Frames), len(tr.Events))
			}
			for i, st := range ht.Steps {
				if st.Index != i+1 || st.Event < 1 || st.Event > len(tr.Events) {
					t.Fatalf("%s: step %d has index %d, event %d", ht.Name, i+1, st.Index, st.Event)
				}
			}
			if ht.OK == (len(ht.Violations) > 0) {
				t.Fatalf("%s: ok %v with violations %+v", ht.Name, ht.OK, ht.Violations)
			}
		}
	})
}
