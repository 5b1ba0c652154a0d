package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// idemlab load, briefly, against a server in this process: it measures and
// reports; a target off the loopback interface is refused.
func TestLoad_PlaysLearnersAgainstALocalServer(t *testing.T) {
	if testing.Short() {
		t.Skip("plays learners for a second")
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"load", "-learners", "5", "-duration", "1s", "-think-min", "20ms", "-think-max", "80ms", "-expensive", "1", "-idle", "0s"}, &out, &out)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out.String())
	}
	for _, want := range []string{"idle RSS before", "learners:", "req/s", "p99=", "expensive requests answered", "peak RSS", "idle RSS after"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"load", "-target", "http://example.org"}, &out, &out); err == nil || !strings.Contains(out.String(), "loopback") {
		t.Errorf("a remote target: err %v, %s", err, out.String())
	}
}
