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
// changes nothing: the auto-commit styles and commit-after credit and ship as
// increment does, offset-tx does the same in a transaction whose offset row
// is not there.
var offsetsVerdicts = map[string]map[string]string{
	"lost-ack":             {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"crash-before-ack":     {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"lease-expiry":         {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"webhook-retry":        {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"concurrent-duplicate": {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"topic-replay":         {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"early-prune":          {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"producer-retry":       {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"dlq-redrive":          {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"restart-filter":       {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	"order-shipping":       {"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictDuplicate, "commit-after": VerdictDuplicate, "offset-tx": VerdictDuplicate},
	// crash-after 4 is past the single UPDATE of the first two, and right
	// after offset-tx's COMMIT.
	"crash-mid-handler": {"auto-commit-poll": VerdictOK, "auto-commit-timer": VerdictOK, "commit-after": VerdictOK, "offset-tx": VerdictDuplicate},
	"never-paid":        {"auto-commit-poll": VerdictUnexpected, "auto-commit-timer": VerdictUnexpected, "commit-after": VerdictUnexpected, "offset-tx": VerdictUnexpected},
	"partition-crash": {"increment": VerdictDuplicate, "set-value": VerdictOK, "dedupe-tx": VerdictOK, "conditional": VerdictOK,
		"check-then-insert": VerdictOK, "mark-before": VerdictOK, "mark-after": VerdictOK, "memory-filter": VerdictDuplicate,
		"filter-dedupe": VerdictOK, "dedupe-key": VerdictOK,
		"auto-commit-poll": VerdictDuplicate, "auto-commit-timer": VerdictLost, "commit-after": VerdictDuplicate, "offset-tx": VerdictOK},
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
		// The default script: the timer fires as A is about to handle rec-1.
		{"poll timer-at 1 crash-at 2; rebalance to B; poll", map[string]want{
			"auto-commit-poll":  {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 190},
			"auto-commit-timer": {VerdictLost, []string{"lost-effect rec-2"}, 220},
			"commit-after":      {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 190},
			"offset-tx":         {VerdictOK, []string{}, 250},
		}},
		// No timer inside the batch: no auto-commit loses a record.
		{"poll crash-at 2; rebalance to B; poll", map[string]want{
			"auto-commit-poll":  {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 190},
			"auto-commit-timer": {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 190},
			"commit-after":      {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 190},
			"offset-tx":         {VerdictOK, []string{}, 250},
		}},
		// The timer fires as rec-0 is handed over: the whole batch is lost.
		// B has not polled again, so auto-commit-poll has committed nothing
		// of its batch yet: pending.
		{"poll timer-at 0 crash-at 0; rebalance to B; poll", map[string]want{
			"auto-commit-poll":  {VerdictPending, []string{}, 160},
			"auto-commit-timer": {VerdictLost, []string{"lost-effect rec-0", "lost-effect rec-1", "lost-effect rec-2"}, 190},
			"commit-after":      {VerdictOK, []string{}, 160},
			"offset-tx":         {VerdictOK, []string{}, 160},
		}},
		// The crashed consumer restarts and the group gives it its partition back.
		{"poll timer-at 0 crash-at 1; rebalance to A; poll", map[string]want{
			"auto-commit-poll":  {VerdictDuplicate, []string{"duplicate-effect rec-0"}, 170},
			"auto-commit-timer": {VerdictLost, []string{"lost-effect rec-1", "lost-effect rec-2"}, 200},
			"commit-after":      {VerdictDuplicate, []string{"duplicate-effect rec-0"}, 170},
			"offset-tx":         {VerdictOK, []string{}, 200},
		}},
		// Still owed: the records the crash left are pending, not lost.
		{"poll crash-at 2", map[string]want{
			"auto-commit-poll":  {VerdictPending, []string{}, 130},
			"auto-commit-timer": {VerdictPending, []string{}, 130},
			"commit-after":      {VerdictPending, []string{}, 130},
			"offset-tx":         {VerdictPending, []string{}, 130},
		}},
		{"poll timer-at 1 crash-at 2", map[string]want{
			"auto-commit-poll":  {VerdictPending, []string{}, 130},
			"auto-commit-timer": {VerdictLost, []string{"lost-effect rec-2"}, 130},
			"commit-after":      {VerdictPending, []string{}, 130},
			"offset-tx":         {VerdictPending, []string{}, 130},
		}},
		// A live owner's partition is revoked: both auto-commit styles
		// commit its position first, so B repeats nothing; B's own batch
		// waits for its next poll or timer.
		{"poll; rebalance; poll", map[string]want{
			"auto-commit-poll":  {VerdictPending, []string{}, 250},
			"auto-commit-timer": {VerdictPending, []string{}, 250},
			"commit-after":      {VerdictOK, []string{}, 250},
			"offset-tx":         {VerdictOK, []string{}, 250},
		}},
		// A crash after the batch is over, before the next poll: the Java
		// consumer had not committed it yet, and B reads it again.
		{"poll; crash A; rebalance; poll; restart B; poll", map[string]want{
			"auto-commit-poll":  {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1", "duplicate-effect rec-2"}, 280},
			"auto-commit-timer": {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1", "duplicate-effect rec-2"}, 280},
			"commit-after":      {VerdictOK, []string{}, 250},
			"offset-tx":         {VerdictOK, []string{}, 250},
		}},
		// The second batch: its poll committed the first batch (poll), or
		// the timer commits the second batch before rec-4 is handled.
		{"poll; poll timer-at 4 crash-at 4; rebalance to B; poll; poll", map[string]want{
			"auto-commit-poll":  {VerdictDuplicate, []string{"duplicate-effect rec-3"}, 290},
			"auto-commit-timer": {VerdictLost, []string{"lost-effect rec-4"}, 200},
			"commit-after":      {VerdictDuplicate, []string{"duplicate-effect rec-3"}, 290},
			"offset-tx":         {VerdictOK, []string{}, 250},
		}},
		// Two crashes in a row: commit-after applies rec-0 three times.
		{"poll crash-at 1; rebalance to B; poll crash-at 2; rebalance to A; poll; poll", map[string]want{
			"auto-commit-poll":  {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 290},
			"auto-commit-timer": {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 290},
			"commit-after":      {VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, 290},
			"offset-tx":         {VerdictOK, []string{}, 250},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			tr, err := Run(context.Background(), Request{Scenario: "partition-crash", Script: tt.script})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Handlers) != len(tt.want) {
				t.Fatalf("%d handlers ran, want %d", len(tr.Handlers), len(tt.want))
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
	tr, err := Run(context.Background(), Request{Scenario: "partition-crash", Script: "poll timer-at 1 crash-at 2"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*HandlerTrace{}
	for _, ht := range tr.Handlers {
		byName[ht.Name] = ht
	}
	if got := byName["auto-commit-timer"].Violations[0].Detail; got != "rec-2 (offset 2) was never applied, and the group's committed offset is 3, past it: no consumer of the group reads it again" {
		t.Errorf("auto-commit-timer: %q", got)
	}
	if !slicesHaveNote(byName["auto-commit-timer"].Steps, "timer-at 1: A's auto-commit timer fires and commits offset 3, past every record handed to A, though it has not handled rec-1, rec-2 yet") {
		t.Errorf("auto-commit-timer: no note of the timer's commit")
	}
	if !slicesHaveNote(byName["auto-commit-poll"].Steps, "timer-at 1: auto-commit-poll commits only the records earlier polls returned, and no earlier poll returned a record since A took payments-0: nothing A has not handled is committed") {
		t.Errorf("auto-commit-poll: no note that the timer commits nothing new")
	}
	if !slicesHaveNote(byName["commit-after"].Steps, "timer-at 1: A's consumer has no auto-commit (@offsets commit-after): the timer commits nothing") {
		t.Errorf("commit-after: no note that it has no timer")
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
	f = byName["auto-commit-timer"].Frames[0].Partition
	if f == nil || f.Committed == nil || *f.Committed != 3 || f.Stored != nil {
		t.Errorf("auto-commit-timer partition frame %+v", f)
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
		{"poll timer-at 0", Event{Kind: EventPoll, Timer: true}},
		{"poll timer-at 1 crash-at 2", Event{Kind: EventPoll, Timer: true, TimerAt: 1, Fault: FaultCrashAt, N: 2}},
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
		{"poll A", `script: event 1: unexpected "A" after poll; expected timer-at OFFSET, crash-at OFFSET, or both`},
		{"poll timer-at", "script: event 1: timer-at needs an offset, e.g. timer-at 2"},
		{"poll timer-at 1 timer-at 2", "script: event 1: poll takes timer-at once"},
		{"poll crash-at 1 crash-at 2", "script: event 1: poll takes crash-at once"},
		{"poll timer-at x", `script: event 1: timer-at needs a whole number from 0 to 49, not "x"`},
		{"rebalance to timer-at", `script: event 1: worker "timer-at" is a keyword`},
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
		"poll timer-at 5":      "script: event 1: timer-at 5: payments-0 holds offsets 0 to 4",
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
		switch r.IntN(11) {
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
		case 9:
			evs = append(evs, fmt.Sprintf("poll timer-at %d", r.IntN(5)))
		case 10:
			evs = append(evs, fmt.Sprintf("poll timer-at %d crash-at %d", r.IntN(5), r.IntN(5)))
		}
	}
	return strings.Join(evs, "; ")
}

// TestPartition_StylesKeepTheirPromise runs random scripts: the offset
// stored with the effect never loses or repeats a record, commit-after and
// the Java consumer's commit-on-poll never lose one; only a timer that
// commits what was handed out can.
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
	for _, want := range []string{"auto-commit-timer lost-effect", "auto-commit-timer duplicate-effect", "auto-commit-poll duplicate-effect", "auto-commit-poll ok", "commit-after duplicate-effect", "commit-after pending", "commit-after ok", "offset-tx ok", "offset-tx pending"} {
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
				ht.Name == "auto-commit-poll" && v.Kind != VerdictDuplicate ||
				ht.Name == "auto-commit-timer" && v.Kind != VerdictDuplicate && v.Kind != VerdictLost ||
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
	f.Add("poll timer-at 1 crash-at 2; rebalance to B; poll")
	f.Add("poll; poll timer-at 4 crash-at 4; rebalance to B; poll; poll")
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
	for _, script := range []string{"poll timer-at 1 crash-at 2; rebalance to B; poll", "poll crash-at 1; rebalance to B; poll crash-at 2; rebalance to A; poll; poll"} {
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

// runPartition runs one handler on partition-crash.
func runPartition(t *testing.T, handler, script string) *HandlerTrace {
	t.Helper()
	tr, err := Run(context.Background(), Request{Scenario: "partition-crash", Handlers: []string{handler}, Script: script})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Handlers[0]
}

// TestOffsets_CommitOnPollRedeliversAfterCrash: the Java consumer's
// auto-commit commits inside poll() what earlier polls returned, so a
// consumer that handles each batch before polling again loses nothing when
// it crashes mid-batch, wherever a timer fires: the next owner reads the
// batch's handled records again (at least once, as the Javadoc says).
func TestOffsets_CommitOnPollRedeliversAfterCrash(t *testing.T) {
	tests := []struct {
		script     string
		violations []string
		resumeAt   string // the next owner's seek
	}{
		{"poll crash-at 2; rebalance to B; poll", []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, "the group has no committed offset"},
		{"poll timer-at 1 crash-at 2; rebalance to B; poll", []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}, "the group has no committed offset"},
		{"poll; poll timer-at 3 crash-at 4; rebalance to B; poll", []string{"duplicate-effect rec-3"}, "B starts at offset 3"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			ht := runPartition(t, "auto-commit-poll", tt.script)
			if ht.Verdict != VerdictDuplicate || !reflect.DeepEqual(violationsOf(ht), tt.violations) {
				t.Errorf("verdict %s %v, want duplicate-effect %v", ht.Verdict, violationsOf(ht), tt.violations)
			}
			var seeks []string
			for _, st := range ht.Steps {
				if st.Kind == StepSeek && st.Worker == "B" {
					seeks = append(seeks, st.Note)
				}
			}
			if len(seeks) != 1 || !strings.Contains(seeks[0], tt.resumeAt) {
				t.Errorf("B's seek %q, want it to say %q", seeks, tt.resumeAt)
			}
		})
	}
}

// TestOffsets_TimerCommitInsideBatchLosesRecord: a timer that commits
// everything handed out (librdkafka's defaults, franz-go's
// GreedyAutoCommit) and fires inside a batch commits records not yet
// handled; a crash before them loses them for good. Without the timer the
// same crash only repeats records.
func TestOffsets_TimerCommitInsideBatchLosesRecord(t *testing.T) {
	tests := []struct {
		script     string
		verdict    string
		violations []string
	}{
		{"poll timer-at 1 crash-at 2; rebalance to B; poll", VerdictLost, []string{"lost-effect rec-2"}},
		{"poll timer-at 2 crash-at 2; rebalance to B; poll", VerdictLost, []string{"lost-effect rec-2"}},
		{"poll; poll timer-at 4 crash-at 4; rebalance to B; poll", VerdictLost, []string{"lost-effect rec-4"}},
		// The timer after the crash point never fires.
		{"poll timer-at 2 crash-at 1; rebalance to B; poll", VerdictDuplicate, []string{"duplicate-effect rec-0"}},
		{"poll crash-at 2; rebalance to B; poll", VerdictDuplicate, []string{"duplicate-effect rec-0", "duplicate-effect rec-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			ht := runPartition(t, "auto-commit-timer", tt.script)
			if ht.Verdict != tt.verdict || !reflect.DeepEqual(violationsOf(ht), tt.violations) {
				t.Errorf("verdict %s %v, want %s %v", ht.Verdict, violationsOf(ht), tt.verdict, tt.violations)
			}
		})
	}
}

// TestOffsets_AutoCommitNameSaysWhatItBecame: the one auto-commit handler
// and @offsets style were split in two; an old link or forked handler that
// still names it is told both new names, as a 4xx-class input error.
func TestOffsets_AutoCommitNameSaysWhatItBecame(t *testing.T) {
	_, err := Run(context.Background(), Request{Scenario: "partition-crash", Handlers: []string{"auto-commit"}})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "handlers" || !strings.Contains(ie.Msg, "auto-commit-poll (the Java consumer") || !strings.Contains(ie.Msg, "auto-commit-timer (librdkafka") {
		t.Errorf("handler auto-commit: %v", err)
	}
	_, err = ParseHandler("mine", "@offsets auto-commit\n@on credit\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n")
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "line 1: @offsets auto-commit is now two styles") {
		t.Errorf("@offsets auto-commit: %v", err)
	}
	for _, name := range []string{"auto-commit-poll", "auto-commit-timer"} {
		h, err := LookupHandler(name)
		if err != nil || h.Offsets != name || h.Idempotent {
			t.Errorf("%s: %+v, %v", name, h, err)
		}
	}
}

// TestOffsets_AutoCommitCommitsOnRevoke: a live owner whose partition is
// revoked in a rebalance commits its position first when auto-commit is on
// (the Java consumer before it rejoins, librdkafka when it unassigns,
// franz-go's default revoke under GreedyAutoCommit), so the next owner repeats nothing; commit-after has
// committed the finished batch itself; a crashed owner commits nothing.
func TestOffsets_AutoCommitCommitsOnRevoke(t *testing.T) {
	for _, handler := range []string{"auto-commit-poll", "auto-commit-timer"} {
		ht := runPartition(t, handler, "poll; rebalance to B; poll")
		if !slicesHaveNote(ht.Steps, "A commits offset 3 as payments-0 is revoked: with auto-commit on, a consumer commits its position before it gives a partition up ("+map[string]string{
			"auto-commit-poll":  "the Java consumer commits before it rejoins the group",
			"auto-commit-timer": "librdkafka commits the partitions it unassigns; franz-go's default revoke commits everything polled under GreedyAutoCommit"}[handler]+")") ||
			!slicesHaveNote(ht.Steps, "B starts at offset 3, the group's committed offset for payments-0") || len(ht.Violations) != 0 {
			t.Errorf("%s: no commit on revoke, or B does not start at 3: %v", handler, violationsOf(ht))
		}
		ht = runPartition(t, handler, "poll; crash A; rebalance to B; poll")
		if !slicesHaveNote(ht.Steps, "the group has no committed offset for payments-0: B starts at offset 0 (auto.offset.reset=earliest)") {
			t.Errorf("%s: a crashed owner committed on its way out", handler)
		}
	}
}

// TestParseScript_PollWordsInAnyOrder: timer-at and crash-at may come in
// either order; the canonical text puts the timer first.
func TestParseScript_PollWordsInAnyOrder(t *testing.T) {
	s, err := ParseScript("poll crash-at 2 timer-at 1")
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Kind: EventPoll, Fault: FaultCrashAt, N: 2, Timer: true, TimerAt: 1}
	if !reflect.DeepEqual(s.Events, []Event{want}) || s.String() != "poll timer-at 1 crash-at 2" {
		t.Errorf("parsed %+v, printed %q", s.Events, s.String())
	}
}
