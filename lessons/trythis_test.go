package lessons

import (
	"io/fs"
	"slices"
	"testing"
)

// The "Try this" prompts send the learner to change a playground's script
// and watch a result the lesson names. Each prompt's variant is run here, so
// that a prompt cannot promise what the engine will not show.
func TestTryThis_PromptsHold(t *testing.T) {
	cases := []struct {
		lesson string
		spec   PlaygroundSpec
	}{
		{"why-messages-arrive-twice", PlaygroundSpec{Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"},
			Script: "deliver msg-1 lose-ack; redeliver msg-1 lose-ack; redeliver msg-1",
			Expect: map[string]string{"increment": "duplicate-effect", "dedupe-tx": "ok"}}},
		{"why-messages-arrive-twice", PlaygroundSpec{Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"},
			Script: "deliver msg-1; redeliver msg-1",
			Expect: map[string]string{"increment": "ok", "dedupe-tx": "ok"}}},
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
