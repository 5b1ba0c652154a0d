package english

import "testing"

func TestPlural(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{0, "0 reference pages"},
		{1, "1 reference page"},
		{2, "2 reference pages"},
		{-1, "-1 reference pages"},
	}
	for _, tt := range tests {
		if got := Plural(tt.n, "reference page", "reference pages"); got != tt.want {
			t.Errorf("Plural(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"ééé", 3, "é…"}, // never cut inside a rune
	}
	for _, tt := range tests {
		if got := Truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
