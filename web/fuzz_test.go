package web

import (
	"strings"
	"testing"
)

// FuzzParsePublicURL checks that an accepted public URL always splits into an
// http(s) origin and a path prefix that links can be glued to.
func FuzzParsePublicURL(f *testing.F) {
	for _, seed := range []string{"", "https://learn.example.org", "http://x.org/idemlab/", "x.org", "https://", "https://a.org/?q", "https://u@a.org", "https://a.org/%zz"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		origin, base, err := parsePublicURL(raw)
		if err != nil || raw == "" {
			return
		}
		if !strings.HasPrefix(origin, "http://") && !strings.HasPrefix(origin, "https://") {
			t.Errorf("parsePublicURL(%q): origin %q", raw, origin)
		}
		if strings.HasSuffix(base, "/") || (base != "" && !strings.HasPrefix(base, "/")) {
			t.Errorf("parsePublicURL(%q): base %q cannot prefix /lessons/x", raw, base)
		}
		if strings.ContainsAny(origin+base, "\"<> \n") {
			t.Errorf("parsePublicURL(%q) = %q %q: unsafe characters in a link", raw, origin, base)
		}
	})
}
