package static

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// The site must work offline: nothing in the front end may point outside the
// server (no CDN, no web fonts, no remote images).
func TestFS_NothingLoadsFromTheInternet(t *testing.T) {
	remote := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|@font-face`)
	cssURL := regexp.MustCompile(`url\(\s*["']?([^"')]*)`)
	err := fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(FS, path)
		if err != nil {
			return err
		}
		text := string(body)
		if strings.HasSuffix(path, ".svg") {
			text = strings.ReplaceAll(text, "http://www.w3.org/2000/svg", "") // a namespace, not a fetch
		}
		for _, m := range remote.FindAllString(text, -1) {
			t.Errorf("%s: %q points outside the server", path, m)
		}
		for _, m := range cssURL.FindAllStringSubmatch(text, -1) {
			if !strings.HasPrefix(m[1], "data:") {
				t.Errorf("%s: url(%s) is not a data: URL", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFS_HasTheFilesTheLayoutLinks(t *testing.T) {
	for _, name := range []string{"app.js", "playground.js", "theme.js", "favicon.svg", "exercise.css", "exercise.js"} {
		if _, err := fs.Stat(FS, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestStylesheet_JoinsThePartsInOrder: app.css is every part under css/,
// tokens first (the rest use them), each part whole and once.
func TestStylesheet_JoinsThePartsInOrder(t *testing.T) {
	sheet := string(Stylesheet())
	parts, err := fs.Glob(FS, "css/*.css")
	if err != nil || len(parts) < 2 {
		t.Fatalf("parts: %v %v", parts, err)
	}
	at := 0
	for _, name := range parts {
		part, _ := FS.ReadFile(name)
		i := strings.Index(sheet[at:], string(part))
		if len(part) == 0 || i != 0 {
			t.Fatalf("%s is not next in app.css (at byte %d)", name, at)
		}
		at += len(part)
	}
	if at != len(sheet) {
		t.Errorf("app.css has %d bytes beyond its parts", len(sheet)-at)
	}
	if !strings.Contains(sheet[:2000], "Design tokens") {
		t.Error("app.css does not start with the design tokens")
	}
}
