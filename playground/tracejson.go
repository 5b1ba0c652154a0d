package playground

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A recorded run: a trace written as JSON (EncodeTrace) and read back
// (DecodeTrace), so that a lesson can show a run made on a PostgreSQL
// server to a learner whose server has none, and a test can compare it,
// byte for byte, with the same run made again.

// EncodeTrace writes a trace as indented JSON ending in a newline: the
// form a recording is committed in, so that a stale one shows as a diff.
func EncodeTrace(tr *Trace) ([]byte, error) {
	b, err := json.MarshalIndent(tr, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeTrace reads a trace EncodeTrace wrote. Unknown fields are an error
// (a recording from another version of the engine says so rather than
// losing what it holds); the scenario must be a built-in one, and each
// handler's broker state (HandlerTrace.BrokerAt) is restored from it.
func DecodeTrace(data []byte) (*Trace, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var tr Trace
	if err := dec.Decode(&tr); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one trace")
	}
	sc, err := LookupScenario(tr.Scenario)
	if err != nil {
		return nil, err
	}
	for i, h := range tr.Handlers {
		if h == nil {
			return nil, fmt.Errorf("handler %d is null", i+1)
		}
		if len(h.Frames) != len(tr.Events) {
			return nil, fmt.Errorf("handler %s: %d frames for %d events", h.Name, len(h.Frames), len(tr.Events))
		}
		h.workers = sc.Workers
		h.messages = h.messages[:0]
		for _, m := range sc.Messages {
			h.messages = append(h.messages, m.ID)
		}
	}
	return &tr, nil
}
