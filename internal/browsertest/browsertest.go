// Package browsertest starts a headless Chromium for tests that drive the
// real site with chromedp, and saves the screenshots they take.
//
// A test calls New to get a chromedp context backed by a fresh browser with
// its own profile. Without Chromium the test is skipped with a message that
// says how to install it, unless IDEMLAB_REQUIRE_BROWSER=1 (as in CI), in
// which case it fails: a CI run must never pass by skipping its browser tests.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Environment variables the harness reads.
const (
	// EnvChromium names the browser binary to use instead of searching for one.
	EnvChromium = "IDEMLAB_CHROMIUM"
	// EnvRequireBrowser set to 1 turns a missing browser into a failure.
	EnvRequireBrowser = "IDEMLAB_REQUIRE_BROWSER"
	// EnvScreenshotDir names the folder screenshots go to; by default a
	// fresh temporary folder, one per test binary.
	EnvScreenshotDir = "IDEMLAB_SCREENSHOTS"
)

// Viewport is the window size of a new browser: a laptop screen.
const (
	ViewportWidth  = 1280
	ViewportHeight = 900
)

// browserLifetime bounds one test's browser, so that a wait for an element
// that never appears fails the test instead of hanging until go test's own
// ten-minute timeout. It is generous because -race builds on two cores are slow.
const browserLifetime = 4 * time.Minute

// candidates are the browser names tried, in order, when EnvChromium is unset.
var candidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"}

// FindChromium returns the path of the browser to drive, or an error that
// says where it looked.
func FindChromium() (string, error) {
	if path := os.Getenv(EnvChromium); path != "" {
		found, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvChromium, path, err)
		}
		return found, nil
	}
	for _, name := range candidates {
		if found, err := exec.LookPath(name); err == nil {
			return found, nil
		}
	}
	return "", fmt.Errorf("no Chromium found (tried %s=…, %s); on Debian: apt-get install chromium",
		EnvChromium, strings.Join(candidates, ", "))
}

// Required reports whether browser tests must run (IDEMLAB_REQUIRE_BROWSER=1).
func Required() bool { return os.Getenv(EnvRequireBrowser) == "1" }

// New starts a headless Chromium for t and returns a chromedp context whose
// actions run in its first tab. The browser stops, and its profile folder is
// removed, when t ends. New skips t when no browser is found (or with
// -short), unless Required.
func New(t testing.TB) context.Context {
	t.Helper()
	path, err := FindChromium()
	switch {
	case err != nil && Required():
		t.Fatalf("browser tests are required (%s=1): %v", EnvRequireBrowser, err)
	case err != nil:
		t.Skipf("skipping browser test: %v; set %s=1 to make this a failure", err, EnvRequireBrowser)
	case testing.Short() && !Required():
		t.Skip("skipping browser test in -short mode")
	}

	// TempDir before Cleanup: cleanups run last-in first-out, so the browser
	// has stopped before its profile folder is removed.
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(ViewportWidth, ViewportHeight),
	)
	lifetime, stopLifetime := context.WithTimeout(context.Background(), browserLifetime)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(lifetime, opts...)
	recorder := &pageErrors{}
	ctx, cancelTab := chromedp.NewContext(context.WithValue(allocCtx, pageErrorsKey{}, recorder))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		stopLifetime()
		for _, e := range recorder.list() {
			t.Logf("browser reported: %s", e)
		}
	})

	// Start the browser now, so that a broken installation fails here with
	// a clear message rather than inside the test's first step.
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tgt, cdplog.Enable, cdp.Empty{})
		return err
	})); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	if err := chromedp.Listen(ctx, recorder.record); err != nil {
		t.Fatalf("listening to %s: %v", path, err)
	}
	return ctx
}

// TestID selects the first element whose data-testid is id.
func TestID(id string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf("[data-testid=%q]", id))
}

// TestIDAll selects every element whose data-testid is id.
func TestIDAll(id string) chromedp.CSSAll {
	return chromedp.CSSAll(fmt.Sprintf("[data-testid=%q]", id))
}

// ColorScheme makes the tab report prefers-color-scheme as scheme ("light"
// or "dark"), so that a theme test does not depend on the machine's setting.
func ColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// DisableJavaScript turns off the page's own scripts in the tab (the
// harness can still evaluate expressions), to check that a page works as
// plain links and forms: progressive enhancement.
func DisableJavaScript() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})
}

// navigationTimeout bounds WaitForPath.
const navigationTimeout = 15 * time.Second

// WaitForPath waits until the tab shows a fully loaded document at path
// (location.pathname), as after a click or a key that navigates. Evaluation
// errors while the old page is torn down are expected and retried.
func WaitForPath(ctx context.Context, path string) error {
	deadline := time.Now().Add(navigationTimeout)
	var last string
	for {
		state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + " " + document.readyState`))
		if err == nil {
			last = state
			if state == path+" complete" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s the tab is at %q, want %q loaded", navigationTimeout, last, path)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// PageErrors returns the uncaught exceptions, console.error calls and
// browser log errors (such as Content-Security-Policy violations) seen so far
// in the tab of ctx, a context made by New.
func PageErrors(ctx context.Context) []string {
	recorder, _ := ctx.Value(pageErrorsKey{}).(*pageErrors)
	if recorder == nil {
		return nil
	}
	return recorder.list()
}

type pageErrorsKey struct{}

// pageErrors collects what the page reports as broken; Listen calls record
// on the tab's reading goroutine, so it only appends under a lock.
type pageErrors struct {
	mu     sync.Mutex
	errors []string
}

func (p *pageErrors) record(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		if d := ev.ExceptionDetails; d != nil {
			msg = fmt.Sprintf("uncaught exception: %s (%s:%d)", exceptionText(d), d.URL, d.LineNumber+1)
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, arg := range ev.Args {
				parts = append(parts, remoteObjectText(arg))
			}
			msg = "console.error: " + strings.Join(parts, " ")
		}
	case *cdplog.EventEntryAdded:
		if e := ev.Entry; e != nil && e.Level == cdplog.EntryLevelError {
			msg = fmt.Sprintf("%s error: %s", e.Source, e.Text)
		}
	}
	if msg == "" {
		return
	}
	p.mu.Lock()
	p.errors = append(p.errors, msg)
	p.mu.Unlock()
}

func (p *pageErrors) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

func remoteObjectText(o *runtime.RemoteObject) string {
	switch {
	case o == nil:
		return ""
	case len(o.Value) > 0:
		return string(o.Value)
	case o.Description != "":
		return o.Description
	default:
		return string(o.Type)
	}
}

var (
	screenshotDirOnce sync.Once
	screenshotDir     string
	screenshotDirErr  error
)

// ScreenshotDir returns the folder screenshots are saved in: EnvScreenshotDir
// if set, else one temporary folder shared by the whole test binary, kept
// after the run so that a person can look at the pictures.
func ScreenshotDir() (string, error) {
	screenshotDirOnce.Do(func() {
		if dir := os.Getenv(EnvScreenshotDir); dir != "" {
			screenshotDir, screenshotDirErr = dir, os.MkdirAll(dir, 0o755)
			return
		}
		screenshotDir, screenshotDirErr = os.MkdirTemp("", "idemlab-screenshots-")
	})
	return screenshotDir, screenshotDirErr
}

// Screenshot captures the whole page of ctx as a PNG named after the test and
// name, saves it in ScreenshotDir, logs its path and returns it.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %q: %v", name, err)
	}
	path, err := SaveScreenshot(t.Name(), name, png)
	if err != nil {
		t.Fatalf("screenshot %q: %v", name, err)
	}
	t.Logf("screenshot %s: %s", name, path)
	return path
}

// SaveScreenshot writes png to ScreenshotDir under a file name made of the
// test name and name, and returns its path.
func SaveScreenshot(testName, name string, png []byte) (string, error) {
	dir, err := ScreenshotDir()
	if err != nil {
		return "", fmt.Errorf("screenshot folder: %w", err)
	}
	return writeScreenshot(dir, testName, name, png)
}

func writeScreenshot(dir, testName, name string, png []byte) (string, error) {
	if len(png) == 0 {
		return "", errors.New("empty image")
	}
	path := filepath.Join(dir, fileName(testName)+"-"+fileName(name)+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// fileName keeps letters, digits, '-' and '_' and turns the rest into '_'.
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
