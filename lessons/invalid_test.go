package lessons

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLoad_InvalidFixtures loads each folder of testdata/invalid and checks
// the exact report an author would read (idemlab lint prints err.Error()).
func TestLoad_InvalidFixtures(t *testing.T) {
	cases := []struct {
		folder string
		want   string
	}{
		{"bad-file-name", "01-Bad_Name.md: file name must be NN-slug.md or slug.md, where the slug \"Bad_Name\" is lowercase letters, digits and single dashes"},
		{"bad-sources", "01-a.md:11: sources item 2 url \"http://example.com/x\": want an https:// address\n" +
			"01-a.md:12: sources item 3: missing \"title\"\n" +
			"01-a.md:13: sources item 4: missing \"url\"\n" +
			"01-a.md:14: sources item 4: unknown key \"link\" (want title or url)\n" +
			"01-a.md:15: sources item 5 must be a mapping of title and url, not a string\n" +
			"01-a.md:16: sources item 6: https://docs.aws.amazon.com/sqs is already listed as item 1\n" +
			"01-a.md:19: sources item 7 url \"https://user:pw@example.com/\" must not hold a user name or password\n" +
			"01-a.md:21: sources item 8 url \"https://example.com/a b\" contains a space or a control character at byte 22\n" +
			"01-a.md:22: sources item 9 title must be a string, not a list\n" +
			"01-a.md:23: sources item 9 url \"/relative\": want an https:// address\n" +
			"02-b.md:7: sources is an empty list\n" +
			"03-c.md:7: sources must be a list of title and url pairs, not a string"},
		{"bad-yaml", "01-a.md:4: front matter: invalid YAML: did not find expected ',' or ']'"},
		{"broken-links", "01-a.md:9: link to \"02-b.md\": there is no lesson \"b\"\n01-a.md:9: link to \"/lessons/c#x\": there is no lesson \"c\""},
		{"broken-anchors", "01-a.md:11: link to \"#there\": lesson \"a\" has no heading #there\n" +
			"01-a.md:11: link to \"/lessons/b#part-three\": lesson \"b\" has no heading #part-three\n" +
			"01-a.md:16: link to \"02-b.md#nowhere\": lesson \"b\" has no heading #nowhere"},
		{"duplicate-order", "02-b.md:4: order 1 is already used by 01-a.md"},
		{"duplicate-slug", "a.md: slug \"a\" is already taken by 01-a.md"},
		{"engine-problems", "01-a.md:15: expect: lesson claims increment: ok but the engine shows duplicate-effect\n" +
			"01-a.md:20: scenario: unknown scenario \"lost-acks\"; scenarios are lost-ack, crash-before-ack, lease-expiry, webhook-retry, concurrent-duplicate, topic-replay, early-prune, producer-retry, dlq-redrive, restart-filter, order-shipping, crash-mid-handler, never-paid, stale-price, partition-crash, card-charge, receipt-email, outage-requeue, outage-backoff, outage-jitter, order-flow\n" +
			"01-a.md:28: handlers: unknown handler \"incremnt\"; handlers are increment, set-value, dedupe-tx, conditional, check-then-insert, mark-before, mark-after, memory-filter, filter-dedupe, dedupe-key, versioned-set, auto-commit-poll, auto-commit-timer, commit-after, offset-tx, charge-no-key, charge-key, charge-after-commit, charge-inbox, charge-outbox, email-in-tx, email-after-commit, email-outbox, flow-restart, flow-phases\n" +
			"01-a.md:36: script: event 2: unknown event \"fly\"; events are deliver, redeliver, publish, start, step, finish, crash, expire, restart, replay, prune, advance, redrive, poll, rebalance"},
		{"exercise-bad-script", "01-a.md:24: exercise ex-a: start: unknown parameter :amout; parameters are :message_id, :amount, :balance, :account_id, :order_id, :payment_id, :sku, :price, :version, :now, :offset, :partition\n" +
			"01-a.md:29: exercise ex-a: solution: @stop-if-found must follow a SELECT (line 3 is INSERT)"},
		{"exercise-bad-yaml", "01-a.md:15: exercise: invalid YAML: did not find expected ',' or ']'"},
		{"exercise-duplicate-id", "02-b.md:14: exercise: id \"ex-a\" is already used by the exercise at 01-a.md:13"},
		{"exercise-missing-fields", "01-a.md:13: exercise: missing \"id\"\n" +
			"01-a.md:13: exercise: missing \"goal\"\n" +
			"01-a.md:13: exercise: missing \"start\"\n" +
			"01-a.md:13: exercise: missing \"solution\""},
		{"exercise-nested", "01-a.md:13: a ```exercise block must be at the top level of the lesson, not inside a list or quote"},
		{"exercise-solution-fails", "01-a.md:25: exercise ex-a: solution: the solution does not pass: deliver msg-1 to A; A's ack is lost; redeliver msg-1 to A → msg-1 credited 2 times to acc-1, expected once (schedule: deliver msg-1 lose-ack; redeliver msg-1)"},
		{"exercise-start-passes", "01-a.md:22: exercise ex-a: start: the starting script already holds in all 12 schedules: there is nothing for the learner to fix"},
		{"exercise-unknown-key", "01-a.md:18: exercise: unknown key \"invariant\": did you mean \"invariants\"?\n" +
			"01-a.md:21: exercise: bounds: unknown key \"lost_ack\": did you mean \"lost_acks\"?\n" +
			"01-a.md:32: exercise: unknown key \"hint\": did you mean \"hints\"?"},
		{"exercise-unknown-scenario", "01-a.md:17: exercise ex-a: scenarios: scenario: unknown scenario \"lost-acks\"; scenarios are lost-ack, crash-before-ack, lease-expiry, webhook-retry, concurrent-duplicate, topic-replay, early-prune, producer-retry, dlq-redrive, restart-filter, order-shipping, crash-mid-handler, never-paid, stale-price, partition-crash, card-charge, receipt-email, outage-requeue, outage-backoff, outage-jitter, order-flow"},
		{"exercise-wrong-types", "01-a.md:15: exercise: title must be a string, not a list\n" +
			"01-a.md:17: exercise: scenarios must be a list, not a string\n" +
			"01-a.md:20: exercise: bounds.max_events must be a whole number, not a string\n" +
			"01-a.md:21: exercise: bounds.interleave must be true or false, not an integer\n" +
			"01-a.md:32: exercise: hints item 2 must be a string, not a mapping"},
		{"goal-problems", "01-a.md:15: goals: goal \"met-already\": the block's own script already meets \"increment applies msg-1 twice\": the goal would be met before the learner does anything\n" +
			"01-a.md:19: goals: goal \"unreachable\": its solution \"deliver msg-1 lose-ack; redeliver msg-1; redeliver msg-1\" does not meet \"dedupe-tx applies msg-1 twice\", so lint cannot show the goal is reachable\n" +
			"01-a.md:23: goals: goal \"wrong-names\": clause 1 (\"mark-after is ok\"): handler \"mark-after\" is not in this playground (it has increment, dedupe-tx)\n" +
			"01-a.md:35: playground: goal 1: id \"Bad_Id\": want 1 to 40 of a-z, 0-9 and -\n" +
			"01-a.md:37: playground: goal 1: check: clause 1 (\"increment is great\"): \"great\" is not a verdict (want ok, duplicate-effect, lost-effect, unexpected-effect, pending, dead-lettered)\n" +
			"01-a.md:43: playground: goal 2: unknown key \"hint\" (want id, task, check, solution or done)\n" +
			"01-a.md:44: playground: goal 3: want a mapping of id, task, check and solution, not a string\n" +
			"01-a.md:53: playground: goal two-paragraphs: task must be one paragraph of text\n" +
			"01-a.md:68: playground: goal id \"met-already\" is already used on line 15: goal ids are unique within a lesson"},
		{"include-problems", "01-a.md:9: include=examples/missing/main.go: cannot read the file: no such file or directory\n" +
			"01-a.md:12: include=code/a.go lines=3-9: the file has only 3 lines\n" +
			"01-a.md:15: lines=2-1: want A-B, A- or A, with 1 ≤ A ≤ B\n" +
			"01-a.md:18: include=../secret.go: want a path inside the lessons folder, such as include=examples/NAME/main.go\n" +
			"01-a.md:21: include=code/a.go: the block must be empty, the file's text takes its place\n" +
			"01-a.md:25: unknown include option \"mode=fast\" (want include=PATH and optionally lines=A-B)\n" +
			"01-a.md:28: include: unknown language \"klingon\": write the fence as ```go include=PATH or ```sql include=PATH"},
		{"quiz-problems", "01-a.md:14: quiz: question 2: missing \"choices\"\n" +
			"01-a.md:15: quiz: question 3: choices must be a list of 2 to 6 choices, each with choice: and why:, one of them with correct: true, not no choices\n" +
			"01-a.md:15: quiz: question 3: missing \"q\"\n" +
			"01-a.md:16: quiz: question 4: want a mapping with q: and choices:, not a string\n" +
			"01-a.md:17: quiz: question 5: missing \"choices\"\n" +
			"01-a.md:18: quiz: question 5: unknown key \"choice\": did you mean \"choices\"?\n" +
			"01-a.md:19: quiz: question 6: missing \"choices\"\n" +
			"01-a.md:20: quiz: question 6: a: is the old reveal-only answer; give choices: instead, each with choice:, why: and one correct: true\n" +
			"01-a.md:23: quiz: question 7: 2 choices are marked correct: true; want exactly one\n" +
			"01-a.md:24: quiz: question 7, choice 2: missing \"why\"\n" +
			"01-a.md:25: quiz: question 7, choice 3: correct must be true or false, not a string\n" +
			"01-a.md:25: quiz: question 7, choice 3: unknown key \"hint\" (want choice, why, correct or check)\n" +
			"01-a.md:29: quiz: want a YAML list of questions, each with q: (the question) and choices: (the answers to pick from), not a mapping\n" +
			"01-a.md:34: quiz: invalid YAML: did not find expected ',' or ']'\n" +
			"01-a.md:37: quiz: link to \"09-nope.md\": there is no lesson \"nope\""},
		{"missing-fields", "01-a.md:1: front matter: missing field \"summary\"\n01-a.md:1: front matter: missing field \"minutes\"\n01-a.md:1: front matter: missing field \"objectives\""},
		{"missing-sources", "01-a.md:1: front matter: missing field \"sources\": list the documentation each fact comes from, as items with title and url"},
		{"missing-front-matter", "01-a.md:1: missing front matter: start the file with a --- line, then title, summary, order, minutes and objectives, then ---"},
		{"no-lessons", ".: no lessons: want at least one NN-slug.md file"},
		{"not-a-mapping", "01-a.md:2: front matter must be a YAML mapping of title, summary, order, minutes and objectives, not a list"},
		{"objective-items", "01-a.md:8: objectives item 2 is empty\n01-a.md:9: objectives item 3 must be a string, not a mapping"},
		{"playground-bad-expect", "01-a.md:15: playground: expect increment: \"duplicated\" is not a verdict (want ok, duplicate-effect, lost-effect, unexpected-effect or dead-lettered)\n01-a.md:16: playground: expect names handler \"mark-after\", which is not in handlers\n01-a.md:17: playground: expect dedupe-tx must be a string, not a list"},
		{"playground-bad-yaml", "01-a.md:11: playground: invalid YAML: did not find expected ',' or ']'"},
		{"playground-duplicate-handler", "01-a.md:11: playground: handlers: \"increment\" is listed twice"},
		{"playground-empty", "01-a.md:9: playground: the block is empty: want a YAML mapping of scenario, handlers, script and caption"},
		{"playground-missing-fields", "01-a.md:11: playground: missing \"handlers\"\n01-a.md:11: playground: missing \"script\"\n01-a.md:11: playground: missing \"caption\""},
		{"playground-nested", "01-a.md:11: a ```playground block must be at the top level of the lesson, not inside a list or quote"},
		{"playground-unknown-key", "01-a.md:11: playground: unknown key \"handler\": did you mean \"handlers\"?"},
		{"playground-wrong-types", "01-a.md:10: playground: scenario must be a string, not a list\n01-a.md:11: playground: handlers must be a list, not a string\n01-a.md:12: playground: script must be a string, not an integer\n01-a.md:13: playground: caption is empty"},
		{"predict-problems", "01-a.md:14: predict: choice 1: it is marked wrong, but the engine shows \"increment acc-1 above expected\" holds at the end of the script\n" +
			"01-a.md:14: predict: choice 2: it is marked correct, but the engine shows \"dedupe-tx acc-1 above expected\" does not hold at the end of the script\n" +
			"01-a.md:14: predict: choice 3: clause 1 (\"mark-after is ok\"): handler \"mark-after\" is not in this playground (it has increment, dedupe-tx)\n" +
			"01-a.md:35: playground: predict: question must be a string, not a list\n" +
			"01-a.md:37: playground: predict: question: choices must be a list of 2 to 6 choices, each with choice: and why:, one of them with correct: true, not 1 choice\n" +
			"01-a.md:38: playground: predict: unknown key \"hint\" (want question or choices)"},
		{"repeated-field", "01-a.md:3: \"title\" is set twice (first on line 2)"},
		{"unclosed-front-matter", "01-a.md:1: front matter is never closed: end it with a --- line"},
		{"unknown-callout", "01-a.md:9: unknown callout [!CAUTION] (want [!NOTE], [!TIP] or [!WARNING])"},
		{"unknown-code-kind", "01-a.md:9: unknown code block kind \"playgroud\": did you mean \"playground\"?"},
		{"unknown-directives", "01-a.md:12: unknown code block kind \"exercize\": did you mean \"exercise\"?\n" +
			"01-a.md:16: unknown code block kind \"Quiz\": did you mean \"quiz\"?\n" +
			"01-a.md:23: unknown code block kind \"playgrounds\": did you mean \"playground\"?\n" +
			"01-a.md:27: unknown code block kind \"quiz-2\": did you mean \"quiz\"?"},
		{"unknown-field", "01-a.md:7: unknown front matter field \"tags\" (want title, summary, order, minutes, objectives, kind or sources)"},
		{"unknown-kind", "01-a.md:7: unknown kind \"appendix\" (want lesson or reference)\n" +
			"02-b.md:7: unknown kind \"refrence\": did you mean \"reference\"?\n" +
			"03-c.md:7: kind must be a string, not a list"},
		{"wrong-types", "01-a.md:2: title must be a string, not an integer\n01-a.md:3: summary must be a string, not a list\n01-a.md:4: order must be a whole number, not a string\n01-a.md:5: minutes must be 1 or more, not 0\n01-a.md:6: objectives must be a list, not a string"},
	}
	// These folders hold exercises that only the checker finds wrong.
	checked := map[string]bool{"exercise-solution-fails": true, "exercise-start-passes": true}
	// These folders are wrong only for lint, which requires sources.
	requireSources := map[string]bool{"missing-sources": true}
	entries, err := os.ReadDir(filepath.Join("testdata", "invalid"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(cases) {
		t.Errorf("testdata/invalid has %d folders, the table %d: keep them in step", len(entries), len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.folder, func(t *testing.T) {
			course, err := Load(os.DirFS(filepath.Join("testdata", "invalid", tc.folder)), Options{CheckExercises: checked[tc.folder], RequireSources: requireSources[tc.folder]})
			if err == nil {
				t.Fatalf("Load succeeded with %d lessons, want an error", len(course.Lessons))
			}
			var loadErr *LoadError
			if !errors.As(err, &loadErr) {
				t.Fatalf("error is %T, want *LoadError", err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
