package lessons

import (
	"fmt"
	"io/fs"
	"slices"
	"testing"
)

// tryThis is a lesson's "Try this" prompt as a playground run.
type tryThis struct {
	lesson string
	spec   PlaygroundSpec
}

// The "Try this" prompts send the learner to change a playground's script
// and watch a result the lesson names. Each prompt's variant is run here, so
// that a prompt cannot promise what the engine will not show.
func TestTryThis_PromptsHold(t *testing.T) {
	cases := []tryThis{
		{"why-messages-arrive-twice", PlaygroundSpec{Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"},
			Script: "deliver msg-1 lose-ack; redeliver msg-1 lose-ack; redeliver msg-1",
			Expect: map[string]string{"increment": "duplicate-effect", "dedupe-tx": "ok"}}},
		{"why-messages-arrive-twice", PlaygroundSpec{Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"},
			Script: "deliver msg-1; redeliver msg-1",
			Expect: map[string]string{"increment": "ok", "dedupe-tx": "ok"}}},
		{"set-dont-add", PlaygroundSpec{Scenario: "topic-replay", Handlers: []string{"increment", "set-value"},
			Script: "deliver msg-1; deliver msg-2; replay; replay",
			Expect: map[string]string{"increment": "duplicate-effect", "set-value": "ok"}}},
		{"the-dedupe-table", PlaygroundSpec{Scenario: "webhook-retry", Handlers: []string{"increment", "dedupe-tx"},
			Script: "deliver evt-1; publish evt-1; publish evt-1; publish evt-1",
			Expect: map[string]string{"increment": "duplicate-effect", "dedupe-tx": "ok"}}},
		{"conditional-writes", PlaygroundSpec{Scenario: "order-shipping", Handlers: []string{"increment", "conditional"},
			Script: "deliver ship-1 lose-ack; deliver ship-2; redeliver ship-1 to B; publish ship-1",
			Expect: map[string]string{"increment": "duplicate-effect", "conditional": "ok"}}},
		{"check-then-insert-race", PlaygroundSpec{Scenario: "concurrent-duplicate", Handlers: []string{"check-then-insert", "dedupe-tx"},
			Script: "start msg-1 on A; start msg-1 on B; finish A; finish B",
			Expect: map[string]string{"check-then-insert": "ok", "dedupe-tx": "ok"}}},
		{"pruning-the-dedupe-table", PlaygroundSpec{Scenario: "early-prune", Handlers: []string{"dedupe-tx"},
			Script: "deliver pay-1; advance 48; prune older-than 36; publish pay-1",
			Expect: map[string]string{"dedupe-tx": "duplicate-effect"}}},
		{"pruning-the-dedupe-table", PlaygroundSpec{Scenario: "early-prune", Handlers: []string{"dedupe-tx"},
			Script: "deliver pay-1; advance 48; prune older-than 49; publish pay-1",
			Expect: map[string]string{"dedupe-tx": "ok"}}},
		{"pruning-the-dedupe-table", PlaygroundSpec{Scenario: "early-prune", Handlers: []string{"dedupe-tx"},
			Script: "deliver pay-1; advance 80; prune older-than 72; publish pay-1",
			Expect: map[string]string{"dedupe-tx": "duplicate-effect"}}},
		// Lesson 7: mark-before loses the credit at crash points 2, 3 and 4,
		// mark-after repeats it at 4, dedupe-tx survives all five.
		crashAfter(1, "ok", "ok"),
		crashAfter(2, "lost-effect", "ok"),
		crashAfter(3, "lost-effect", "ok"),
		crashAfter(4, "lost-effect", "duplicate-effect"),
		crashAfter(5, "ok", "ok"),
		{"the-in-process-filter", PlaygroundSpec{Scenario: "restart-filter", Handlers: []string{"memory-filter", "filter-dedupe"},
			Script: "deliver msg-1 lose-ack; redeliver msg-1",
			Expect: map[string]string{"memory-filter": "ok", "filter-dedupe": "ok"}}},
		{"idempotency-keys", PlaygroundSpec{Scenario: "webhook-retry", Handlers: []string{"increment", "dedupe-tx"},
			Script: "start evt-1 on A; step A 2; publish evt-1 to B; finish A; publish evt-1",
			Expect: map[string]string{"increment": "duplicate-effect", "dedupe-tx": "ok"}}},
		{"the-transactional-outbox", PlaygroundSpec{Scenario: "webhook-retry", Handlers: []string{"increment", "dedupe-tx"},
			Script: "deliver evt-1; publish evt-1; publish evt-1",
			Expect: map[string]string{"increment": "duplicate-effect", "dedupe-tx": "ok"}}},
	}
	var slugs []string
	files, _ := fs.Glob(Embedded(), "*.md")
	for _, f := range files {
		slugs = append(slugs, slugFromFileName(f))
	}
	for _, tc := range cases {
		t.Run(tc.lesson, func(t *testing.T) {
			if !slices.Contains(slugs, tc.lesson) {
				t.Fatalf("no lesson %q", tc.lesson)
			}
			if err := CheckWithEngine(&tc.spec); err != nil {
				t.Errorf("%s: %v", tc.spec.Script, err)
			}
		})
	}
}

// crashAfter is lesson 7's prompt: the crash moved to statement n.
func crashAfter(n int, markBefore, markAfter string) tryThis {
	return tryThis{"ordering-around-a-crash", PlaygroundSpec{Scenario: "crash-mid-handler", Handlers: []string{"mark-before", "mark-after", "dedupe-tx"},
		Script: fmt.Sprintf("deliver msg-1 crash-after %d; redeliver msg-1 to B", n),
		Expect: map[string]string{"mark-before": markBefore, "mark-after": markAfter, "dedupe-tx": "ok"}}}
}
