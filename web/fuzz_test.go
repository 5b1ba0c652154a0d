package web

import (
	"strings"
	"testing"
)

// FuzzFrameAncestorsSource checks that whatever the flag holds, an accepted
// value can never smuggle another directive into the CSP header.
func FuzzFrameAncestorsSource(f *testing.F) {
	for _, seed := range []string{"'self'", "'none'", "https://docs.example.org", "self", "https://a.org; script-src *", "a\nb", "'self' https://*.x.org"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, flag string) {
		got, err := frameAncestorsSource(strings.Fields(flag))
		if err != nil {
			return
		}
		if strings.ContainsAny(got, ";,\r\n\"") {
			t.Errorf("frameAncestorsSource(%q) = %q: would break the CSP header", flag, got)
		}
		if len(strings.Fields(flag)) > 0 && got == "" {
			t.Errorf("frameAncestorsSource(%q) accepted and returned nothing", flag)
		}
	})
}

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
