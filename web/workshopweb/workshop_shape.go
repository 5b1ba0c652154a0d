package workshopweb

import (
	"strconv"

	"idemlab/playground"
)

// ScriptShape is a schedule's shape, to group counterexamples: its events
// with messages and workers renamed in order of first appearance, so
// "deliver m2 to B lose-ack; redeliver m2 to B" and "deliver m1 to A
// lose-ack; redeliver m1 to A" are one shape. A script that does not parse
// is its own shape.
func ScriptShape(text string) string {
	script, err := playground.ParseScript(text)
	if err != nil {
		return text
	}
	messages, workers := map[string]string{}, map[string]string{}
	rename := func(names map[string]string, name, prefix string) string {
		if name == "" {
			return ""
		}
		if _, ok := names[name]; !ok {
			names[name] = prefix + strconv.Itoa(len(names)+1)
		}
		return names[name]
	}
	for i, e := range script.Events {
		e.Message, e.Worker = rename(messages, e.Message, "m"), rename(workers, e.Worker, "w")
		script.Events[i] = e
	}
	return script.String()
}

// memoShape is scriptShape remembering what it computed, for one class
// feed (not safe for concurrent use); it forgets all past 10,000 scripts.
func memoShape() func(string) string {
	known := make(map[string]string)
	return func(text string) string {
		shape, ok := known[text]
		if !ok {
			if len(known) >= 10_000 {
				clear(known)
			}
			shape = ScriptShape(text)
			known[text] = shape
		}
		return shape
	}
}
