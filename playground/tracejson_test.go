package playground

import (
	"bytes"
	"context"
	"testing"
)

// A trace written by EncodeTrace reads back to the same bytes, for every
// scenario's default run.
func TestDecodeTrace_RoundTripsEveryScenario(t *testing.T) {
	for _, sc := range Scenarios() {
		tr, err := Run(context.Background(), sc.NewRequest())
		if err != nil {
			t.Fatal(err)
		}
		data, err := EncodeTrace(tr)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeTrace(data)
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		again, err := EncodeTrace(back)
		if err != nil || !bytes.Equal(data, again) {
			t.Errorf("%s: the trace does not round-trip (%v)", sc.Name, err)
		}
		for i, h := range back.Handlers {
			if got, want := h.BrokerAt(len(h.Steps)), tr.Handlers[i].BrokerAt(len(h.Steps)); len(got.Messages) != len(want.Messages) || len(got.Workers) != len(want.Workers) {
				t.Errorf("%s %s: broker state %+v, want %+v", sc.Name, h.Name, got, want)
			}
		}
	}
}

func FuzzDecodeTrace(f *testing.F) {
	tr, err := Run(context.Background(), Request{Scenario: "concurrent-duplicate"})
	if err != nil {
		f.Fatal(err)
	}
	data, _ := EncodeTrace(tr)
	f.Add(data)
	f.Add([]byte(`{"scenario": "lost-ack", "events": [{}], "handlers": [null]}`))
	f.Add([]byte(`{"scenario": "lost-ack"} {}`))
	f.Add([]byte(`{"scenario": "lost-ack", "handlers": [{"frames": [{"first_step": 9, "step_count": 99}]}], "events": [{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := DecodeTrace(data)
		if err != nil {
			return
		}
		for _, h := range tr.Handlers {
			h.BrokerAt(len(h.Steps))
		}
	})
}
