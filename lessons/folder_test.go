package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lesson that includes a symlink leading out of the lessons folder is
// refused with a message naming the line; the file outside is never shown.
func TestFolderFS_IncludeThroughASymlinkOutOfTheFolderIsRefused(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.go")
	if err := os.WriteFile(secret, []byte("package secret // do not show\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(dir, "leak.go")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inside.go"), []byte("package inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lesson := "---\ntitle: Includes\norder: 1\nsummary: A lesson that shows code from files.\nminutes: 3\nobjectives:\n  - Read code\n---\n\nSome code:\n\n" +
		"```go include=inside.go\n```\n\n```go include=leak.go\n```\n\n```go include=elsewhere/secret.go\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "01-includes.md"), []byte(lesson), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := FolderFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(fsys, Options{DisplayRoot: dir})
	if err == nil {
		t.Fatal("the course loaded: a symlink out of the folder was followed")
	}
	msg := err.Error()
	for _, want := range []string{"01-includes.md:15: include=leak.go: cannot read the file: path escapes", "01-includes.md:18: include=elsewhere/secret.go: cannot read the file: path escapes"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not refuse %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "inside.go") || strings.Contains(msg, "do not show") {
		t.Errorf("the error is about the wrong include, or shows the file outside:\n%s", msg)
	}
}
