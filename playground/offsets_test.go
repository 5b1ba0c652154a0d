package playground

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// offsetsVerdicts are the default-script verdicts of the offset handlers in
// every scenario and of every handler in the partition scenario;
// TestRun_Verdicts adds them to its table. In a queue scenario @offsets
// changes nothing: auto-commit and commit-after credit and ship as
// increment does, offset-tx does the same in a transaction whose offset row
// is not there.
var offsetsVerdicts = map[string]map[string]string{
	"lost-ack":             {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"crash-before-ack":     {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"lease-expiry":         {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"webhook-retry":        {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"concurrent-duplicate": {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"topic-replay":         {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"early-prune":          {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"producer-retry":       {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"dlq-redrive":          {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"restart-filter":       {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"order-shipping":       {"auto-commit": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	// crash-after 4 is past the single UPDATE of the first two, and right
	// after offset-tx's COMMIT.
	"crash-mid-handler": {"auto-commit": VerdictOK, "commit-after": VerdictOK, "offset-tx": VerdictDuplicate},
	"never-paid":        {"auto-commit": VerdictUnexpected, "commit-after": VerdictUnexpected, "offset-tx": VerdictUnexpected},
	"partition-crash": {"increment": VerdictDuplicate, "set-value": VerdictOK, "dedupe-tx": VerdictOK, "conditional": VerdictOK,
		"check-then-insert": VerdictOK, "mark-before": VerdictOK, "mark-after": VerdictOK, "memory-filter": VerdictDuplicate,
		"filter-dedupe": VerdictOK, "dedupe-key": VerdictOK,
		"auto-commit": VerdictLost, "commit-after": VerdictDuplicate, "offset-tx": VerdictOK},
}

// violationsOf lists a handler's violations as "kind message".
func violationsOf(ht *HandlerTrace) []string {
	out := []string{}
	for _, v := range ht.Violations {
		out = append(out, v.Kind+" "+v.MessageID)
	}
	return out
}

// TestPartition_Verdicts names, per handler, each record lost or applied
// twice, for the scripts lesson 17 and the README play.
func TestPartition_Verdicts(t *testing.T) {
	type want struct {
		verdict    string
		violations []string
		balance    int64
	}
	tests := []struct {
		script string
		want   map[string]want
	}{
		{"poll crash-at 2; rebalance to B; poll", map[string]want{
			"auto-commit":  {VerdictLost, []string{"lost-effect rec-2"}, 220},
			"commit-after": {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 190},
			"offset-tx":    {VerdictOK, []string{}, 250},
		}},
		{"poll crash-at 0; rebalance to B; poll", map[string]want{
			"auto-commit":  {VerdictLost, []string{"lost-effect rec-0", "lost-effect rec-1", "lost-effect rec-2"}, 190},
			"commit-after": {VerdictOK, []string{}, 160},
			"offset-tx":    {VerdictOK, []string{}, 160},
		}},
		// The crashed consumer restarts and the group gives it its partition back.
		{"poll crash-at 1; rebalance to A; poll", map[string]want{
			"auto-commit":  {VerdictLost, []string{"lost-effect rec-1", "lost-effect rec-2"}, 200},
			"commit-after": {VerdictDuplicate, []string{"duplicate-effect rec-0"}, 170},
			"offset-tx":    {VerdictOK, []string{}, 200},
		}},
		// Still owed: the records the crash left are pending, not lost.
		{"poll crash-at 2", map[string]want{
			"auto-commit":  {VerdictLost, []string{"lost-effect rec-2"}, 130},
			"commit-after": {VerdictPending, []string{}, 130},
			"offset-tx":    {VerdictPending, []string{}, 130},
		}},
		// No crash, a rebalance between batches: every style is right.
		{"poll; rebalance; poll", map[string]want{
			"auto-commit":  {VerdictOK, []string{}, 250},
			"commit-after": {VerdictOK, []string{}, 250},
			"offset-tx":    {VerdictOK, []string{}, 250},
		}},
		// A crash after the batch is over, and a restart that forgets the position.
		{"poll; crash A; rebalance; poll; restart B; poll", map[string]want{
			"auto-commit":  {VerdictOK, []string{}, 250},
			"commit-after": {VerdictOK, []string{}, 250},
			"offset-tx":    {VerdictOK, []string{}, 250},
		}},
		// Two crashes in a row: commit-after applies rec-0 three times.
		{"poll crash-at 1; rebalance to B; poll crash-at 2; rebalance to A; poll; poll", map[string]want{
			"auto-commit":  {VerdictLost, []string{"lost-effect rec-1", "lost-effect rec-2"}, 200},
			"commit-after": {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 290},
			"offset-tx":    {VerdictOK, []string{}, 250},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			tr, err := Run(context.Background(), Request{Scenario: "partition-crash", Script: tt.script})
			if err != nil {
				t.Fatal(err)
			}
			for _, ht := range tr.Handlers {
				w := tt.want[ht.Name]
				if ht.Verdict != w.verdict || !reflect.DeepEqual(violationsOf(ht), w.violations) || ht.Actual[0].Value != w.balance {
					t.Errorf("%s: %s %v balance %d, want %s %v balance %d", ht.Name, ht.Verdict, violationsOf(ht), ht.Actual[0].Value, w.verdict, w.violations, w.balance)
				}
			}
		})
	}
}

// TestPartition_Details checks the words a learner reads: why a record is
// lost or still owed, and the seek of a consumer that stores its offset.
func TestPartition_Details(t *testing.T) {
	tr, err := Run(context.Background(), Request{Scenario: "partition-crash", Script: "poll crash-at 2"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*HandlerTrace{}
	for _, ht := range tr.Handlers {
		byName[ht.Name] = ht
	}
	if got := byName["auto-commit"].Violations[0].Detail; got != "rec-2 (offset 2) was never applied, and the group's committed offset is 3, past it: no consumer of the group reads it again" {
		t.Errorf("auto-commit: %q", got)
	}
	if got := byName["commit-after"].InFlight; len(got) != 3 || got[2].Detail != "rec-2 (offset 2) is still owed: the group has no committed offset (a new owner starts at 0), so the next consumer to read payments-0 from there reads it again" {
		t.Errorf("commit-after in flight: %+v", got)
	}
	if got := byName["offset-tx"].InFlight; len(got) != 1 || got[0].Detail != "rec-2 (offset 2) is still owed: the offset stored in consumer_offsets is 2, so the next consumer to read payments-0 from there reads it again" {
		t.Errorf("offset-tx in flight: %+v", got)
	}
	f := byName["offset-tx"].Frames[0].Partition
	if f == nil || f.Owner != "" || f.Stored == nil || *f.Stored != 2 || f.Committed != nil || f.End != 5 {
		t.Errorf("offset-tx partition frame %+v", f)
	}
	f = byName["auto-commit"].Frames[0].Partition
	if f == nil || f.Committed == nil || *f.Committed != 3 || f.Stored != nil {
		t.Errorf("auto-commit partition frame %+v", f)
	}

	// The broker's view at a cursor: records A moved past are handled, the
	// one it died on is its crash's, and nobody holds anything.
	b := byName["commit-after"].BrokerAfter(1)
	var got []string
	for _, m := range b.Messages {
		got = append(got, m.ID+":"+m.Status+":"+m.Worker)
	}
	if want := []string{"rec-0:batch-done:A", "rec-1:batch-done:A", "rec-2:crash:A", "rec-3::", "rec-4::"}; !reflect.DeepEqual(got, want) || len(b.Held()) != 0 {
		t.Errorf("broker after the crash: %v, held %v; want %v", got, b.Held(), want)
	}

	tr, err = Run(context.Background(), Request{Scenario: "partition-crash", Handlers: []string{"offset-tx"}, Script: "poll crash-at 2; rebalance to B"})
	if err != nil {
		t.Fatal(err)
	}
	steps := tr.Handlers[0].Steps
	seek := steps[len(steps)-1]
	if seek.Kind != StepSeek || seek.SQL != seekSQL || seek.RowsFound == nil || *seek.RowsFound != 1 || !strings.HasPrefix(seek.Note, "B seeks to offset 2, the next_offset in consumer_offsets") {
		t.Errorf("the seek step: %+v", seek)
	}
	if tr.Handlers[0].Frames[0].Partition == nil || tr.Handlers[0].Frames[1].Partition.Owner != "B" {
		t.Errorf("frames do not show B owning the partition")
	}
}

// TestPartition_Refusals: events that cannot happen are skip steps that say why.
func TestPartition_Refusals(t *testing.T) {
	tests := []struct{ scenario, script, note string }{
		{"partition-crash", "deliver rec-0", "payments-0 is a partition: its owner reads records with poll, and rebalance moves it to another consumer; deliver is for queues"},
		{"partition-crash", "replay", "payments-0 is a partition"},
		{"partition-crash", "poll crash-at 1; poll", "no live consumer owns payments-0: its owner crashed; rebalance assigns it to another (rebalance to B)"},
		{"partition-crash", "poll; poll; poll", "A has read payments-0 to its end (offset 5): there is nothing new to poll"},
		{"partition-crash", "step A", "A has no message in hand"},
		{"lost-ack", "poll", "poll reads a partition, and this scenario's broker is a queue: try it in the partition-crash scenario"},
		{"lost-ack", "rebalance to B", "rebalance reads a partition"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.script, func(t *testing.T) {
			tr, err := Run(context.Background(), Request{Scenario: tt.scenario, Script: tt.script, Handlers: []string{"dedupe-tx"}})
			if err != nil {
				t.Fatal(err)
			}
			steps := tr.Handlers[0].Steps
			last := steps[len(steps)-1]
			if last.Kind != StepSkip || !strings.HasPrefix(last.Note, tt.note) {
				t.Errorf("last step %s %q, want a skip %q", last.Kind, last.Note, tt.note)
			}
		})
	}
	tr, err := Run(context.Background(), Request{Scenario: "partition-crash", Script: "poll crash-at 4"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ht := range tr.Handlers {
		if !slicesHaveNote(ht.Steps, "crash-at 4 did not fire: the batch held offsets 0 to 2") {
			t.Errorf("%s: no note that crash-at 4 did not fire", ht.Name)
		}
	}
}

func slicesHaveNote(steps []Step, note string) bool {
	for _, st := range steps {
		if st.Note == note {
			return true
		}
	}
	return false
}

// TestParseScript_PartitionEvents: poll and rebalance parse, print and
// parse back; bad input names the event and what is wrong.
func TestParseScript_PartitionEvents(t *testing.T) {
	good := []struct {
		in   string
		want Event
	}{
		{"poll", Event{Kind: EventPoll}},
		{"poll crash-at 0", Event{Kind: EventPoll, Fault: FaultCrashAt}},
		{"poll crash-at 2", Event{Kind: EventPoll, Fault: FaultCrashAt, N: 2}},
		{"rebalance", Event{Kind: EventRebalance}},
		{"rebalance to B", Event{Kind: EventRebalance, Worker: "B"}},
	}
	for _, tt := range good {
		s, err := ParseScript(tt.in)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if !reflect.DeepEqual(s.Events, []Event{tt.want}) || s.String() != tt.in {
			t.Errorf("%q parsed to %+v, printed %q", tt.in, s.Events, s.String())
		}
	}
	bad := []struct{ in, msg string }{
		{"poll A", `script: event 1: unexpected "A" after poll; expected crash-at OFFSET`},
		{"poll crash-at", "script: event 1: crash-at needs an offset, e.g. crash-at 2"},
		{"poll crash-at -1", `script: event 1: crash-at needs a whole number from 0 to 49, not "-1"`},
		{"poll crash-at 2 now", `script: event 1: unexpected "now" at the end of poll`},
		{"deliver rec-1; rebalance B", "script: event 2: rebalance takes an optional to W, e.g. rebalance to B"},
		{"rebalance to", "script: event 1: rebalance takes an optional to W, e.g. rebalance to B"},
		{"rebalance to crash-at", `script: event 1: worker "crash-at" is a keyword`},
		{"deliver crash-at", `script: event 1: message id "crash-at" is a keyword`},
	}
	for _, tt := range bad {
		_, err := ParseScript(tt.in)
		var ie *InputError
		if !errors.As(err, &ie) || err.Error() != tt.msg {
			t.Errorf("%q: error %v, want %s", tt.in, err, tt.msg)
		}
	}
	// Offsets and workers the scenario does not have.
	for in, msg := range map[string]string{
		"poll crash-at 5":      "script: event 1: crash-at 5: payments-0 holds offsets 0 to 4",
		"poll; rebalance to C": "script: event 2: unknown worker C; workers are A, B",
	} {
		_, err := Run(context.Background(), Request{Scenario: "partition-crash", Script: in})
		if err == nil || err.Error() != msg {
			t.Errorf("%q: error %v, want %s", in, err, msg)
		}
	}
}

// randomPartitionScript is a script of partition events, crashes,
// restarts and the queue's other events.
func randomPartitionScript(r *rand.Rand) string {
	var evs []string
	for n := 1 + r.IntN(10); n > 0; n-- {
		switch r.IntN(9) {
		case 0, 1, 2:
			evs = append(evs, "poll")
		case 3, 4:
			evs = append(evs, fmt.Sprintf("poll crash-at %d", r.IntN(5)))
		case 5:
			evs = append(evs, "rebalance")
		case 6:
			evs = append(evs, "rebalance to "+[]string{"A", "B"}[r.IntN(2)])
		case 7:
			evs = append(evs, []string{"crash A", "restart B", "restart A", "crash B"}[r.IntN(4)])
		case 8:
			evs = append(evs, []string{"advance 50", "prune", "deliver rec-1", "step A", "finish B"}[r.IntN(5)])
		}
	}
	return strings.Join(evs, "; ")
}

// TestPartition_StylesKeepTheirPromise runs random scripts: the offset
// stored with the effect never loses or repeats a record, auto-commit
// never repeats one, commit-after never loses one.
func TestPartition_StylesKeepTheirPromise(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 17))
	seen := map[string]bool{}
	for i := 0; i < 300; i++ {
		script := randomPartitionScript(r)
		checkPartitionPromises(t, script)
		tr, _ := Run(context.Background(), Request{Scenario: "partition-crash", Script: script})
		for _, ht := range tr.Handlers {
			seen[ht.Name+" "+ht.Verdict] = true
		}
	}
	// The random scripts reach every outcome the promises allow.
	for _, want := range []string{"auto-commit lost-effect", "auto-commit ok", "commit-after duplicate-effect", "commit-after pending", "commit-after ok", "offset-tx ok", "offset-tx pending"} {
		if !seen[want] {
			t.Errorf("no random script gave %s", want)
		}
	}
}

func checkPartitionPromises(t *testing.T, script string) {
	t.Helper()
	tr, err := Run(context.Background(), Request{Scenario: "partition-crash", Script: script})
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("%q: %v", script, err)
		}
		return
	}
	for _, ht := range tr.Handlers {
		for _, v := range ht.Violations {
			broken := ht.Name == "offset-tx" ||
				ht.Name == "auto-commit" && v.Kind != VerdictLost ||
				ht.Name == "commit-after" && v.Kind != VerdictDuplicate
			if broken {
				t.Fatalf("%q: %s has %s: %s", script, ht.Name, v.Kind, v.Detail)
			}
		}
		if len(ht.Frames) != len(tr.Events) {
			t.Fatalf("%q: %s has %d frames for %d events", script, ht.Name, len(ht.Frames), len(tr.Events))
		}
	}
}

// FuzzRunPartition feeds arbitrary scripts to the partition scenario: a
// script that parses runs, and each offset style keeps its promise.
func FuzzRunPartition(f *testing.F) {
	f.Add("poll crash-at 2; rebalance to B; poll")
	f.Add("poll; crash A; rebalance; poll; restart B; poll; poll")
	f.Add("poll crash-at 1; rebalance to B; poll crash-at 2; rebalance to A; poll; poll")
	f.Fuzz(func(t *testing.T, script string) {
		checkPartitionPromises(t, script)
	})
}

// TestPartition_PostgresMatchesSQLite plays the partition scripts on a
// PostgreSQL ledger at each isolation level: every step (kind, record,
// rows, note) and every verdict is the SQLite ledger's. It needs
// IDEMLAB_TEST_DATABASE, as the other PostgreSQL tests do.
func TestPartition_PostgresMatchesSQLite(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	count := func(n *int64) string {
		if n == nil {
			return "-"
		}
		return fmt.Sprint(*n)
	}
	steps := func(h *HandlerTrace) []string {
		var out []string
		for _, st := range h.Steps {
			out = append(out, strings.Join([]string{st.Kind, st.Worker, st.Message, st.Note, st.Error, count(st.RowsFound), count(st.RowsAffected)}, " | "))
		}
		return out
	}
	for _, script := range []string{"poll crash-at 2; rebalance to B; poll", "poll crash-at 1; rebalance to B; poll crash-at 2; rebalance to A; poll; poll"} {
		want, err := Run(context.Background(), Request{Scenario: "partition-crash", Script: script})
		if err != nil {
			t.Fatal(err)
		}
		for _, ledger := range []string{"postgres-rc", "postgres-rr", "postgres-serializable"} {
			for _, wh := range want.Handlers {
				got := runOnPostgres(t, pg, ledger, "partition-crash", wh.Name, "", script).Handlers[0]
				if got.Verdict != wh.Verdict || !reflect.DeepEqual(steps(got), steps(wh)) {
					t.Errorf("%s, %s, %q: verdict %s, steps\n%s\nwant %s, steps\n%s", ledger, wh.Name, script,
						got.Verdict, strings.Join(steps(got), "\n"), wh.Verdict, strings.Join(steps(wh), "\n"))
				}
			}
		}
	}
}
