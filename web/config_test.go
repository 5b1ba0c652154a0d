package web

import (
	"strings"
	"testing"
)

// TestParseFrameAncestors_OneRuleForFlagAndServer: every list the
// -frame-ancestors flag accepts starts a server whose embed pages carry it,
// and every list it refuses the server refuses too.
func TestParseFrameAncestors_OneRuleForFlagAndServer(t *testing.T) {
	tests := []struct {
		flag    string
		want    string // the sources, as the CSP header carries them
		wantErr string
	}{
		{flag: "'self'", want: "'self'"},
		{flag: "self", want: "'self'"}, // the shell ate the quotes
		{flag: "'none'", want: "'none'"},
		{flag: "none", want: "'none'"},
		{flag: "*", want: "*"},
		{flag: "'*'", want: "*"},
		{flag: "'self', https://docs.example.com", want: "'self' https://docs.example.com"},
		{flag: "https://*.example.com:8443 http://localhost:3000", want: "https://*.example.com:8443 http://localhost:3000"},
		{flag: "docs.example.org", want: "docs.example.org"},
		{flag: "https:", want: "https:"},
		{flag: "", wantErr: "empty list"},
		{flag: " , ", wantErr: "empty list"},
		{flag: "'none' 'self'", wantErr: "cannot be combined"},
		{flag: "https://a.example;script-src", wantErr: "frame ancestor 1"},
		{flag: "'self' https://a.org;", wantErr: "frame ancestor 2"},
		{flag: "'unsafe-inline'", wantErr: "not an origin"},
		{flag: "https://example.com/path", wantErr: "not an origin"},
		{flag: `"self"`, wantErr: "not an origin"},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			got, err := ParseFrameAncestors(tt.flag)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseFrameAncestors(%q) = %q, %v; want an error containing %q", tt.flag, got, err, tt.wantErr)
				}
				if fields := strings.Fields(strings.ReplaceAll(tt.flag, ",", " ")); len(fields) > 0 {
					if _, err := NewServer(Config{FrameAncestors: fields}, sampleCourse()); err == nil {
						t.Errorf("the flag refuses %q but the server accepts it", tt.flag)
					}
				}
				return
			}
			if err != nil || strings.Join(got, " ") != tt.want {
				t.Fatalf("ParseFrameAncestors(%q) = %q, %v; want %q", tt.flag, got, err, tt.want)
			}
			s, err := NewServer(Config{FrameAncestors: got}, sampleCourse())
			if err != nil {
				t.Fatalf("the flag accepts %q but the server refuses it: %v", tt.flag, err)
			}
			csp := do(t, s.Handler(), "GET", "/embed/lessons/why-twice").Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "frame-ancestors "+tt.want+";") {
				t.Errorf("CSP %q lacks frame-ancestors %s", csp, tt.want)
			}
		})
	}
}

func TestCheckPublicURL(t *testing.T) {
	tests := []struct {
		raw, wantErr string
	}{
		{"", ""},
		{"https://learn.example.org", ""},
		{"http://127.0.0.1:8080/idemlab/", ""},
		{"https://[::1]:8443", ""},
		{"learn.example.org", "must start with http:// or https://"},
		{"ftp://x.org", "must start with http:// or https://"},
		{"https://", "has no host"},
		{"https://x.org/?a=1", "without user, query or fragment"},
		{"https://u@x.org", "without user, query or fragment"},
		{"https://x.org/#top", "without user, query or fragment"},
		{"https://a_b.org", "is not a host name"},
		{"http://[::1", "missing ']'"},
	}
	for _, tt := range tests {
		err := CheckPublicURL(tt.raw)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("CheckPublicURL(%q) = %v, want nil", tt.raw, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("CheckPublicURL(%q) = %v, want an error containing %q", tt.raw, err, tt.wantErr)
		}
		if _, serverErr := NewServer(Config{PublicURL: tt.raw}, sampleCourse()); (serverErr == nil) != (err == nil) {
			t.Errorf("public URL %q: the flag says %v, the server %v", tt.raw, err, serverErr)
		}
	}
}

func TestNewServer_BadConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"relative public URL", Config{PublicURL: "learn.example.org"}, "must start with http:// or https://"},
		{"public URL without host", Config{PublicURL: "https://"}, "has no host"},
		{"public URL with query", Config{PublicURL: "https://x.org/?a=1"}, "without user, query or fragment"},
		{"empty source", Config{FrameAncestors: []string{""}}, "frame ancestor 1"},
		{"injection", Config{FrameAncestors: []string{"https://a.org; script-src *"}}, "frame ancestor 1"},
		{"two sources in one", Config{FrameAncestors: []string{"https://a.org b.org"}}, "frame ancestor 1"},
		{"none with others", Config{FrameAncestors: []string{"'none'", "https://a.org"}}, "cannot be combined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewServer(tt.cfg, sampleCourse())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := NewServer(Config{}, nil); err == nil {
		t.Error("nil course accepted")
	}
}

// FuzzParseFrameAncestors checks that whatever an operator types, what
// reaches the CSP header is a list of single source expressions: nothing
// that could end the directive (';', ','), add a keyword of its own or break
// the line, and the server takes what the flag accepts.
func FuzzParseFrameAncestors(f *testing.F) {
	for _, seed := range []string{"'self'", "none", "'self', https://docs.example.com", "https://*.example.com:443", "https:", "*", "a;b", "'unsafe-inline'", "\n", "https://a.org; script-src *"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, list string) {
		sources, err := ParseFrameAncestors(list)
		if err != nil {
			return
		}
		if len(sources) == 0 {
			t.Fatalf("ParseFrameAncestors(%q) accepted an empty list", list)
		}
		for _, src := range sources {
			if src == "'self'" || src == "'none'" {
				continue
			}
			if src == "" || strings.ContainsAny(src, "'\";, \t\r\n") {
				t.Fatalf("ParseFrameAncestors(%q) let %q through", list, src)
			}
		}
		again, err := checkFrameAncestors(sources)
		if err != nil || strings.Join(again, " ") != strings.Join(sources, " ") {
			t.Fatalf("ParseFrameAncestors(%q) = %q, which the server's check turns into %q, %v", list, sources, again, err)
		}
	})
}
