package playground

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The differential test of the partition scenario against a real Kafka
// client: franz-go's kgo consumer on kfake, franz-go's in-process Kafka
// cluster (no network beyond loopback, no external process). The engine's
// trace of one script drives the real consumers: each poll step is a real
// PollRecords of max.poll.records (3) records, each place where the engine
// fires an auto-commit timer (poll's timer-at) or commits inside poll()
// is a real tick of franz-go's autocommit timer that the test waits for,
// and a crash closes the consumer without any commit (a killed process
// runs no revoke callback). Then consumer B joins the group and reads from
// wherever the group's committed offset says. What the test compares, real
// against engine: each batch A was handed, the group's committed offset
// when A died, the records B receives, and so which records are lost and
// which are applied twice.
//
// franz-go's two autocommit modes are the engine's two styles:
//
//   - the default autocommit commits, on its timer, only what earlier polls
//     returned (kgo's undirtyUncommitted moves the poll's offsets to "head"
//     at the start of the next poll): auto-commit-poll, the Java consumer's
//     rule, whose commit runs inside poll() instead;
//   - GreedyAutoCommit commits everything polled so far: auto-commit-timer.
//
// The timer's interval is kgo's minimum, 100 ms, where the script needs a
// tick, and an hour where it must not tick; the test waits for the ticks it
// needs by watching the client's own log, never by sleeping.

// kafkaTopic and kafkaGroup are the real cluster's names for payments-0's
// topic and the scenario's consumer group.
const (
	kafkaTopic = "payments"
	kafkaGroup = "payments"
)

// franzTimer watches a franz-go client's autocommit timer: its ticks (from
// the client's debug log) and the commits they issue (from the autocommit
// callback, which franz-go calls once per commit, in order).
type franzTimer struct {
	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	ticks     int           // ticks of the autocommit timer
	issued    int           // ticks that issued a commit
	completed int           // commits answered
	committed []int64       // the offset each answered commit carried for partition 0
	errs      []error
}

func newFranzTimer() *franzTimer { return &franzTimer{changed: make(chan struct{})} }

func (ft *franzTimer) bump() { close(ft.changed); ft.changed = make(chan struct{}) }

// Level and Log make the watcher franz-go's logger: the autocommit loop
// logs "autocommitting" or "skipping autocommit…" on each tick, under the
// lock PollRecords takes to record what it hands out, so a tick counted
// after a poll returned saw that poll's offsets.
func (ft *franzTimer) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (ft *franzTimer) Log(_ kgo.LogLevel, msg string, _ ...any) {
	commit := msg == "autocommitting"
	if !commit && !strings.HasPrefix(msg, "skipping autocommit") {
		return
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.ticks++
	if commit {
		ft.issued++
	}
	ft.bump()
}

func (ft *franzTimer) callback(_ *kgo.Client, req *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.completed++
	if err != nil {
		ft.errs = append(ft.errs, err)
	}
	for _, tp := range req.Topics {
		for _, p := range tp.Partitions {
			ft.committed = append(ft.committed, p.Offset)
		}
	}
	ft.bump()
}

// awaitTick waits until the timer has ticked after ticksBefore and every
// commit it issued has been answered.
func (ft *franzTimer) awaitTick(ctx context.Context, ticksBefore int) error {
	for {
		ft.mu.Lock()
		done, ch := ft.ticks > ticksBefore && ft.completed >= ft.issued, ft.changed
		ft.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("franz-go's autocommit timer did not tick: %w", ctx.Err())
		}
	}
}

func (ft *franzTimer) tickCount() int {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.ticks
}

// kafkaOutcome is one run's observations, as offsets.
type kafkaOutcome struct {
	batchesA  [][]int64 // what each of A's polls handed over
	handledA  []int64   // the records A handled before it died
	committed int64     // the group's committed offset after A died; -1: none
	receivedB []int64   // every record B received, to the end of the partition
	lost      []int64   // records nobody handled
	twice     []int64   // records A handled and B received again
}

// engineOutcome reads the same observations from the engine's trace of one
// handler that runs as consumers A and then B.
func engineOutcome(t *testing.T, sc *Scenario, tr *Trace, ht *HandlerTrace) kafkaOutcome {
	t.Helper()
	offset := map[string]int64{}
	for i, m := range sc.Messages {
		offset[m.ID] = int64(i)
	}
	out := kafkaOutcome{committed: -1}
	var crashed string
	for _, st := range ht.Steps {
		switch {
		case st.Kind == StepPoll && st.Worker == "A":
			_, list, _ := strings.Cut(st.Note, " and receives ")
			list, _, _ = strings.Cut(list, " (")
			var batch []int64
			for _, id := range strings.Split(list, ", ") {
				batch = append(batch, offset[id])
			}
			out.batchesA = append(out.batchesA, batch)
		case st.Kind == StepCrash:
			crashed = st.Message
		case st.Kind == StepDeliver && st.Worker == "B":
			out.receivedB = append(out.receivedB, offset[st.Message])
		case st.Kind == StepDeliver && st.Worker == "A":
			out.handledA = append(out.handledA, offset[st.Message])
		}
	}
	if n := len(out.handledA); n > 0 && crashed != "" && out.handledA[n-1] == offset[crashed] {
		out.handledA = out.handledA[:n-1] // A died before its handler ran on it
	}
	for i, ev := range tr.Events {
		if strings.HasPrefix(ev.Text, "rebalance") { // A is dead: the frame before is the offset it left
			if f := ht.Frames[i-1].Partition; f.Committed != nil {
				out.committed = *f.Committed
			}
			break
		}
	}
	for _, v := range ht.Violations {
		switch v.Kind {
		case VerdictLost:
			out.lost = append(out.lost, offset[v.MessageID])
		case VerdictDuplicate:
			out.twice = append(out.twice, offset[v.MessageID])
		default:
			t.Fatalf("%s: violation %s", ht.Name, v.Kind)
		}
	}
	slices.Sort(out.lost)
	slices.Sort(out.twice)
	return out
}

// franzOutcome plays the engine's trace of one handler on real franz-go
// consumers: A polls, waits for its timer where the engine commits or
// fires one, dies, and B reads what the group's offset leaves it.
func franzOutcome(t *testing.T, sc *Scenario, ht *HandlerTrace, greedy bool) kafkaOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, kafkaTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seeds := kgo.SeedBrokers(c.ListenAddrs()...)

	producer, err := kgo.NewClient(seeds, kgo.DefaultProduceTopic(kafkaTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	records := make([]*kgo.Record, len(sc.Messages))
	for i, m := range sc.Messages {
		records[i] = &kgo.Record{Key: []byte(m.ID), Value: []byte(m.ID)}
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// The timer ticks only where the engine's trace has it commit or fire.
	interval := time.Hour
	for _, st := range ht.Steps {
		if st.Kind == StepOffsetCommit || strings.HasPrefix(st.Note, "timer-at ") {
			interval = 100 * time.Millisecond // kgo's minimum
		}
	}
	timer := newFranzTimer()
	noop := func(context.Context, *kgo.Client, map[string][]int32) {}
	opts := []kgo.Opt{seeds, kgo.ConsumerGroup(kafkaGroup), kgo.ConsumeTopics(kafkaTopic),
		kgo.AutoCommitInterval(interval), kgo.AutoCommitCallback(timer.callback), kgo.WithLogger(timer),
		// A killed process commits nothing on its way out: no revoke.
		kgo.OnPartitionsRevoked(noop), kgo.OnPartitionsLost(noop)}
	if greedy {
		opts = append(opts, kgo.GreedyAutoCommit())
	}
	a, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	out := kafkaOutcome{committed: -1}
	var batch []int64 // what A's last poll handed over
	ticksAtPoll, tick := 0, false
	alive := true
	for _, st := range ht.Steps {
		if st.Worker != "A" || !alive {
			continue
		}
		switch {
		case st.Kind == StepOffsetCommit || strings.HasPrefix(st.Note, "timer-at "):
			tick = true // the engine commits, or fires the timer, in this batch
		case st.Kind == StepPoll:
			ticksAtPoll = timer.tickCount()
			fs := a.PollRecords(ctx, sc.Partition.BatchSize)
			if err := fs.Err0(); err != nil {
				t.Fatalf("A's poll: %v", err)
			}
			batch = nil
			for _, r := range fs.Records() {
				batch = append(batch, r.Offset)
			}
			out.batchesA = append(out.batchesA, batch)
		case st.Kind == StepDeliver:
			// The schedule: A's handler runs on the record (the
			// application's work, which no client decides).
			off := messageOffset(sc, st.Message)
			if !slices.Contains(batch, off) {
				t.Fatalf("the engine hands A %s; franz-go's batch holds offsets %v", st.Message, batch)
			}
			out.handledA = append(out.handledA, off)
		case st.Kind == StepCrash:
			if n := len(out.handledA); n > 0 && out.handledA[n-1] == messageOffset(sc, st.Message) {
				out.handledA = out.handledA[:n-1] // A died before its handler ran on it
			}
			if tick { // the tick must come after A's last poll, and its commit be answered
				if err := timer.awaitTick(ctx, ticksAtPoll); err != nil {
					t.Fatal(err)
				}
			}
			a.Close()
			alive = false
		}
	}
	if alive {
		t.Fatalf("the engine's A never crashed: the test plays A's crash and B's takeover only")
	}
	timer.mu.Lock()
	if len(timer.errs) > 0 {
		t.Errorf("franz-go's autocommits failed: %v", timer.errs)
	}
	timer.mu.Unlock()

	adm := kadm.NewClient(producer)
	offs, err := adm.FetchOffsets(ctx, kafkaGroup)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup(kafkaTopic, 0); ok && o.Err == nil && o.At >= 0 {
		out.committed = o.At
	}

	// B joins once A has left, and reads to an end marker produced after
	// the scenario's records, so that "B receives nothing" needs no wait.
	end := int64(len(sc.Messages))
	if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("end")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b, err := kgo.NewClient(seeds, kgo.ConsumerGroup(kafkaGroup), kgo.ConsumeTopics(kafkaTopic), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for done := false; !done; {
		fs := b.PollRecords(ctx, sc.Partition.BatchSize)
		if err := fs.Err0(); err != nil {
			t.Fatalf("B's poll: %v", err)
		}
		for _, r := range fs.Records() {
			if r.Offset == end {
				done = true
				continue
			}
			out.receivedB = append(out.receivedB, r.Offset)
		}
	}

	seen := map[int64]bool{}
	for _, off := range out.receivedB {
		seen[off] = true
	}
	for _, off := range out.handledA {
		if seen[off] {
			out.twice = append(out.twice, off)
		}
		seen[off] = true
	}
	for off := int64(0); off < end; off++ {
		if !seen[off] {
			out.lost = append(out.lost, off)
		}
	}
	slices.Sort(out.twice)
	return out
}

// messageOffset is the offset of a scenario's record.
func messageOffset(sc *Scenario, id string) int64 {
	for i, m := range sc.Messages {
		if m.ID == id {
			return int64(i)
		}
	}
	return -1
}

// TestKafkaDifferential_FranzGoMatchesEngine plays each script on the
// engine and on franz-go: a real consumer whose autocommit is franz-go's
// default loses nothing when it dies mid-batch, as auto-commit-poll says,
// and one with GreedyAutoCommit whose timer fires inside the batch loses
// the records it had not handled, as auto-commit-timer says.
func TestKafkaDifferential_FranzGoMatchesEngine(t *testing.T) {
	sc, err := LookupScenario("partition-crash")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		handler string
		greedy  bool
		script  string
		lost    bool // what the engine must say, so that the case proves what its name says
	}{
		// franz-go's default: the timer commits only earlier polls' records.
		{"auto-commit-poll", false, "poll timer-at 1 crash-at 2; rebalance to B; poll; poll", false},
		{"auto-commit-poll", false, "poll; poll timer-at 4 crash-at 4; rebalance to B; poll; poll", false},
		{"auto-commit-poll", false, "poll; poll timer-at 3 crash-at 3; rebalance to B; poll; poll", false},
		// GreedyAutoCommit: the timer commits everything polled.
		{"auto-commit-timer", true, "poll timer-at 1 crash-at 2; rebalance to B; poll; poll", true},
		{"auto-commit-timer", true, "poll timer-at 0 crash-at 0; rebalance to B; poll; poll", true},
		{"auto-commit-timer", true, "poll; poll timer-at 4 crash-at 4; rebalance to B; poll; poll", true},
		// No tick before the crash: nothing is committed, nothing lost.
		{"auto-commit-timer", true, "poll crash-at 2; rebalance to B; poll; poll", false},
	}
	for _, tt := range tests {
		mode := "default autocommit"
		if tt.greedy {
			mode = "GreedyAutoCommit"
		}
		t.Run(mode+"/"+tt.script, func(t *testing.T) {
			tr, err := Run(context.Background(), Request{Scenario: sc.Name, Handlers: []string{tt.handler}, Script: tt.script})
			if err != nil {
				t.Fatal(err)
			}
			ht := tr.Handlers[0]
			want := engineOutcome(t, sc, tr, ht)
			if (len(want.lost) > 0) != tt.lost {
				t.Fatalf("the engine's %s loses %v: the case is meant to lose records: %v", tt.handler, want.lost, tt.lost)
			}
			got := franzOutcome(t, sc, ht, tt.greedy)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("franz-go (%s) and the engine (%s) differ:\nfranz-go %+v\nengine   %+v", mode, tt.handler, got, want)
			}
		})
	}
}
