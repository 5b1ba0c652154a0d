package pgstore

import (
	"fmt"
	"testing"
)

func TestParseNotification_RoundTripAndRejects(t *testing.T) {
	for _, tc := range []struct {
		payload string
		ok      bool
	}{
		{"12 345 push", true},
		{"12 0 deleted", true},
		{"7 8 event", true},
		{"12 345", false},
		{"12 345 other", false},
		{"x 345 push", false},
		{"12 345 push extra", false},
		{"", false},
	} {
		room, ev, what, err := parseNotification(tc.payload)
		if (err == nil) != tc.ok {
			t.Errorf("parseNotification(%q) = %v, want ok %v", tc.payload, err, tc.ok)
		}
		if err == nil && fmt.Sprintf("%d %d %s", room, ev, what) != tc.payload {
			t.Errorf("parseNotification(%q) = %d %d %s", tc.payload, room, ev, what)
		}
	}
}

func FuzzParseNotification(f *testing.F) {
	for _, s := range []string{"12 345 push", "1 0 deleted", "", "a b c", "9223372036854775808 1 event"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		room, ev, what, err := parseNotification(payload)
		if err == nil && what != event && what != push && what != deleted {
			t.Fatalf("parseNotification(%q) accepted %d %d %q", payload, room, ev, what)
		}
	})
}
