package lessons

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWatch_ReloadsAndKeepsLastGood(t *testing.T) {
	dir, scratch := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "01-a.md")
	write := func(content string) {
		t.Helper()
		// Write and rename, so that Watch never reads a half-written file
		// (os.WriteFile truncates first, and a poll could land in between).
		tmp := filepath.Join(scratch, "01-a.md")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write(minimalLesson("First", 1, "Body.\n"))

	loads := make(chan *Course, 10)
	errs := make(chan error, 10)
	ctx, cancel := context.WithCancel(context.Background())
	// The watcher notes the folder's state here, before the first edit, so
	// that edit is a change however late the goroutine below starts.
	w := NewWatcher(dir)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.Run(ctx, Options{}, 5*time.Millisecond, func(c *Course) { loads <- c }, func(err error) { errs <- err })
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })

	// The server keeps the course it has until onLoad hands it a new one, so
	// "keep the last good" means: a broken edit calls onError and never onLoad.
	waitFor := func(wantLoad bool) (*Course, error) {
		t.Helper()
		select {
		case c := <-loads:
			if !wantLoad {
				t.Fatalf("onLoad called with %q, want onError", c.Lessons[0].Title)
			}
			return c, nil
		case err := <-errs:
			if wantLoad {
				t.Fatalf("onError called, want onLoad: %v", err)
			}
			return nil, err
		case <-time.After(30 * time.Second): // a bound on a hang, not a speed target
			t.Fatal("Watch reported nothing within 30s")
		}
		return nil, nil
	}

	write(minimalLesson("Second title", 1, "Body.\n"))
	if c, _ := waitFor(true); c.Lessons[0].Title != "Second title" {
		t.Errorf("reloaded title = %q", c.Lessons[0].Title)
	}

	write("---\ntitle: Broken\n---\n")
	_, err := waitFor(false)
	if want := filepath.Join(dir, "01-a.md") + `:1: front matter: missing field "summary"`; !strings.Contains(err.Error(), want) {
		t.Errorf("onError got:\n%v\nwant a line %q", err, want)
	}

	write(minimalLesson("Fixed", 1, "Body, fixed.\n"))
	if c, _ := waitFor(true); c.Lessons[0].Title != "Fixed" {
		t.Errorf("reloaded title = %q", c.Lessons[0].Title)
	}

	// An unchanged folder reports nothing more.
	select {
	case c := <-loads:
		t.Errorf("extra onLoad: %q", c.Lessons[0].Title)
	case err := <-errs:
		t.Errorf("extra onError: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestWatch_StopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Watch(ctx, t.TempDir(), Options{}, time.Millisecond, func(*Course) {}, func(error) {})
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not return after its context was cancelled")
	}
}

func TestWatch_ReportsAVanishedFolderOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lessons")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w := NewWatcher(dir) // the folder is there when the watcher first looks
	go func() {
		w.Run(ctx, Options{}, time.Millisecond, func(*Course) {}, func(err error) { errs <- err })
		close(done)
	}()
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "cannot read the lessons folder") {
			t.Errorf("onError got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no onError after the folder was removed")
	}
	time.Sleep(30 * time.Millisecond) // ~30 more polls
	cancel()
	<-done
	if n := len(errs); n != 0 {
		t.Errorf("%d more onError calls for the same missing folder, want 0", n)
	}
}

// An edit made after NewWatcher and before Run (while the server loads the
// course, say) is a change Run must report.
func TestWatcher_SeesAnEditMadeBeforeRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "01-a.md")
	if err := os.WriteFile(file, []byte(minimalLesson("First", 1, "Body.\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(dir)
	if err := os.WriteFile(file, []byte(minimalLesson("Edited before the watch began", 1, "Body, longer.\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	loads := make(chan *Course, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx, Options{}, 5*time.Millisecond, func(c *Course) {
			select {
			case loads <- c:
			default:
			}
		}, func(err error) { t.Errorf("onError: %v", err) })
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case c := <-loads:
		if got := c.Lessons[0].Title; got != "Edited before the watch began" {
			t.Errorf("reloaded title %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the edit made before Run was never reported")
	}
}
