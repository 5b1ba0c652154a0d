package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"idemlab/internal/pgtest"
	"idemlab/workshop"
)

// instructorLink waits for the instructor link serve printed.
func instructorLink(t *testing.T, s *runningServer) string {
	t.Helper()
	var link string
	eventually(t, 10*time.Second, "serve prints the instructor link", func() bool {
		link, _ = s.InstructorLink.Load().(string)
		return link != ""
	})
	return link
}

// openInstructorLink opens link without following the redirect: 303 and
// the instructor cookie for a right key, 403 for a wrong one.
func openInstructorLink(t *testing.T, link string) int {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestServe_InstructorLinkSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	first := startServe(t, "-data", dir)
	before := instructorLink(t, first)
	if got := openInstructorLink(t, before); got != http.StatusSeeOther {
		t.Fatalf("the printed instructor link answers %d, want 303", got)
	}
	if err := first.Stop(t); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, workshop.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("%s has mode %o, want 600: it is the instructor's secret", workshop.KeyFileName, mode)
	}

	second := startServe(t, "-data", dir)
	after := instructorLink(t, second)
	key := before[strings.LastIndex(before, "key=")+4:]
	if !strings.HasSuffix(after, "key="+key) {
		t.Errorf("after a restart serve prints %s, want the key of %s", after, before)
	}
	// The link opened before the restart, on the new server's address.
	if got := openInstructorLink(t, second.URL+"/workshop?key="+key); got != http.StatusSeeOther {
		t.Errorf("the instructor link from before the restart answers %d after it, want 303", got)
	}
	if err := second.Stop(t); err != nil {
		t.Fatal(err)
	}

	rotated := startServe(t, "-data", dir, "-rotate-instructor-key")
	newLink := instructorLink(t, rotated)
	if strings.HasSuffix(newLink, "key="+key) {
		t.Fatal("-rotate-instructor-key printed the old key")
	}
	if got := openInstructorLink(t, rotated.URL+"/workshop?key="+key); got != http.StatusForbidden {
		t.Errorf("the old key answers %d after a rotation, want 403", got)
	}
	if got := openInstructorLink(t, newLink); got != http.StatusSeeOther {
		t.Errorf("the rotated link answers %d, want 303", got)
	}
}

func TestParseServeConfig_InstructorKeyNeeds128Bits(t *testing.T) {
	env := func(string) string { return "" }
	for _, key := range []string{
		"kill-test-instructor-key",           // 24 characters, not hexadecimal
		"0123456789abcdef",                   // 16 digits: 64 bits at most
		"00000000000000000000000000000000",   // 32 digits, one of them
		"0101010101010101010101010101010101", // two distinct digits
	} {
		if _, err := parseServeConfig([]string{"-instructor-key", key}, env, nil); err == nil {
			t.Errorf("-instructor-key %s accepted, want a usage error", key)
		}
	}
	key := workshop.NewInstructorKey()
	if _, err := parseServeConfig([]string{"-instructor-key", key}, env, nil); err != nil {
		t.Errorf("-instructor-key %s (a random key): %v", key, err)
	}
	if _, err := parseServeConfig([]string{"-instructor-key", key, "-rotate-instructor-key"}, env, nil); err == nil {
		t.Error("-instructor-key with -rotate-instructor-key accepted, want a usage error")
	}
}

// Replicas on one PostgreSQL store print one instructor key, the first
// start's, and a rotation on one is what the next start of another prints.
func TestServe_ReplicasShareTheInstructorKey(t *testing.T) {
	db := pgtest.Database(t)
	key := func(s *runningServer) string {
		link := instructorLink(t, s)
		return link[strings.LastIndex(link, "key=")+4:]
	}
	a := startServe(t, "-database", db)
	b := startServe(t, "-database", db)
	first := key(a)
	if got := key(b); got != first {
		t.Fatalf("two replicas print keys %s and %s, want one", first, got)
	}
	if got := openInstructorLink(t, b.URL+"/workshop?key="+first); got != http.StatusSeeOther {
		t.Errorf("the first replica's link on the second: %d, want 303", got)
	}
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}
	rotated := startServe(t, "-database", db, "-rotate-instructor-key")
	if got := key(rotated); got == first {
		t.Fatal("-rotate-instructor-key printed the old key")
	}
	next := startServe(t, "-database", db)
	if got, want := key(next), key(rotated); got != want {
		t.Errorf("a replica started after the rotation prints %s, want the rotated %s", got, want)
	}
}
