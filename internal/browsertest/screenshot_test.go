package browsertest

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteScreenshot_SanitizesName(t *testing.T) {
	dir := t.TempDir()
	path, err := writeScreenshot(dir, "TestX/sub case", "phone 390×844", []byte("png bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir {
		t.Errorf("saved in %s, want %s", filepath.Dir(path), dir)
	}
	if base := filepath.Base(path); strings.ContainsAny(base, " /×") {
		t.Errorf("file name %q keeps unsafe characters", base)
	}
	if _, err := writeScreenshot(dir, "T", "empty", nil); err == nil {
		t.Error("writeScreenshot(nil) succeeded, want an error")
	}
}
