package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestRun_RunPrintsVerdictTable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "lost-ack", "-handlers", "increment,dedupe-tx"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"HANDLER", "increment", "duplicate-effect", "dedupe-tx", "ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestRun_RunFlagsBeforeScenario(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "-script", "deliver msg-1 crash-after 4; redeliver msg-1 to B", "crash-mid-handler"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "lost-effect") {
		t.Errorf("mark-before should lose the effect:\n%s", stdout.String())
	}
}

func TestRun_RunJSONIsTheTrace(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"run", "restart-filter", "-json"}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var trace struct {
		Scenario string `json:"scenario"`
		Handlers []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"handlers"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &trace); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if trace.Scenario != "restart-filter" || len(trace.Handlers) != 2 {
		t.Fatalf("trace = %+v", trace)
	}
	if trace.Handlers[0].OK || !trace.Handlers[1].OK {
		t.Errorf("memory-filter should fail and filter-dedupe hold: %+v", trace.Handlers)
	}
}

func TestRun_RunBadInputExits2WithPosition(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"UnknownScenario", []string{"run", "nope"}, `unknown scenario "nope"`},
		{"BadEvent", []string{"run", "lost-ack", "-script", "deliver msg-1; fly msg-1"}, "event 2"},
		{"UnknownMessage", []string{"run", "lost-ack", "-script", "deliver msg-9"}, "unknown message msg-9"},
		{"UnknownHandler", []string{"run", "lost-ack", "-handlers", "nope"}, "nope"},
		{"NoScenario", []string{"run"}, "name a scenario"},
		{"ExtraArgument", []string{"run", "lost-ack", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if err == nil {
				t.Fatal("no error")
			}
			if got := exitStatus(err); got != 2 {
				t.Errorf("exit status %d, want 2", got)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "goroutine") {
				t.Errorf("stack trace on stderr: %s", stderr.String())
			}
		})
	}
}

func TestRun_ListsScenariosAndHandlers(t *testing.T) {
	for cmd, want := range map[string][]string{
		"scenarios": {"lost-ack", "crash-mid-handler", "order-shipping", "deliver msg-1"},
		"handlers":  {"increment", "dedupe-tx", "filter-dedupe", "IDEMPOTENT"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{cmd}, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		for _, w := range want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%s lacks %q:\n%s", cmd, w, stdout.String())
			}
		}
	}
}
