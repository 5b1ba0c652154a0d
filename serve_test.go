package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/lessons"
	"idemlab/web"
)

// syncBuffer is a bytes.Buffer that the server's goroutines may write while
// the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runningServer is `idemlab serve` started through run, as a person would.
type runningServer struct {
	URL string // "http://127.0.0.1:PORT", no trailing slash
	// InstructorLink is the instructor link serve printed.
	InstructorLink atomic.Value // string
	Stderr         *syncBuffer
	stop           context.CancelFunc
	done           chan struct{} // closed when run has returned
	err            error         // what run returned; read after done
}

// Stop cancels run's context, as SIGINT would, and returns run's error.
func (s *runningServer) Stop(t testing.TB) error {
	t.Helper()
	s.stop()
	select {
	case <-s.done:
		return s.err
	case <-time.After(shutdownTimeout + 5*time.Second):
		t.Fatal("serve did not return after its context was cancelled")
		return nil
	}
}

// startServe runs `idemlab serve -addr 127.0.0.1:0 args...` and waits for the
// line that tells a person which URL to open; the test reads the bound
// address from that line, which also proves the line is printed.
func startServe(t testing.TB, args ...string) *runningServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdoutReader, stdoutWriter := io.Pipe()
	s := &runningServer{Stderr: &syncBuffer{}, stop: cancel, done: make(chan struct{})}
	dataDir := t.TempDir()
	go func() {
		// A folder of the test's own for the kept instructor key (args may
		// name another: the last -data wins).
		s.err = run(ctx, append([]string{"serve", "-addr", "127.0.0.1:0", "-data", dataDir}, args...), stdoutWriter, s.Stderr)
		stdoutWriter.Close()
		close(s.done)
	}()

	urls := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdoutReader)
		for scanner.Scan() {
			if rest, ok := strings.CutPrefix(scanner.Text(), "Idemlab is serving the course at "); ok {
				urls <- strings.TrimRight(rest, "/")
			}
			if rest, ok := strings.CutPrefix(scanner.Text(), "Instructor link (keep it to yourself): "); ok {
				s.InstructorLink.Store(rest)
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			<-s.done
			t.Fatalf("serve ended before printing its URL: %v\nstderr:\n%s", s.err, s.Stderr)
		}
		s.URL = u
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("serve printed no URL within 30s\nstderr:\n%s", s.Stderr)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(shutdownTimeout + 5*time.Second):
		}
	})
	return s
}

func get(t testing.TB, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestRun_ServeAnswersThenShutsDownCleanly(t *testing.T) {
	server := startServe(t)

	resp, body := get(t, server.URL+"/")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET / = %s, want 200", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("GET / Content-Type = %q, want text/html", ct)
	}
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if first := course.Lessons[0]; !strings.Contains(body, "/lessons/"+first.Slug) {
		t.Errorf("GET / does not link the first lesson /lessons/%s", first.Slug)
	}

	if resp, _ := get(t, server.URL+"/healthz"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz = %s, want 200", resp.Status)
	}

	if err := server.Stop(t); err != nil {
		t.Errorf("serve returned %v after a clean shutdown, want nil", err)
	}
	logs := server.Stderr.String()
	for _, want := range []string{"msg=serving", "msg=stopped"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if _, err := http.Get(server.URL + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestRun_ServeLogsJSON(t *testing.T) {
	server := startServe(t, "-log-format", "json")
	get(t, server.URL+"/healthz")
	if err := server.Stop(t); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(server.Stderr.String(), "\n")
	if !strings.HasPrefix(first, "{") || !strings.Contains(first, `"msg":`) {
		t.Errorf("first log line is not JSON: %s", first)
	}
}

// copyCourse writes the built-in lessons into a new folder and returns it.
func copyCourse(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "course")
	if err := os.CopyFS(dir, lessons.Embedded()); err != nil {
		t.Fatal(err)
	}
	return dir
}

// lessonFile returns the path of the first lesson file in dir.
func lessonFile(t testing.TB, dir string) string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no lesson in %s (%v)", dir, err)
	}
	return matches[0]
}

// eventually polls check until it returns true or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// smallCourse writes a two-lesson course into a new folder and returns it:
// reloading it is quick even under the race detector on a busy machine, where
// re-rendering the whole built-in course can take seconds.
func smallCourse(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "course")
	files := map[string]string{
		"01-first.md":  "---\ntitle: First steps\nsummary: The first lesson.\norder: 1\nminutes: 3\nobjectives:\n  - Read a lesson\n---\n\n## Hello\n\nOn to [the second](02-second.md).\n",
		"02-second.md": "---\ntitle: Second steps\nsummary: The second lesson.\norder: 2\nminutes: 4\nobjectives:\n  - Go back\n---\n\n## Again\n\nBack to [the first](01-first.md).\n",
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRun_ServeLessonsFolderReloadsAndSurvivesBrokenEdits(t *testing.T) {
	dir := smallCourse(t)
	server := startServe(t, "-lessons", dir)

	course, err := lessons.Load(os.DirFS(dir), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := course.Lessons[0]
	path := filepath.Join(dir, first.Path)
	original, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lessonURL := server.URL + "/lessons/" + first.Slug

	// An instructor edits the title: the next reload shows it.
	edited := strings.Replace(string(original), "title: "+first.Title, "title: Edited while serving", 1)
	if edited == string(original) {
		t.Fatalf("could not find %q in %s", "title: "+first.Title, path)
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the edited title never appeared", func() bool {
		_, body := get(t, lessonURL)
		return strings.Contains(body, "Edited while serving")
	})

	// A broken edit is logged and the last good course keeps serving.
	if err := os.WriteFile(path, []byte("---\ntitle: [unclosed\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the broken lesson was never logged", func() bool {
		return strings.Contains(server.Stderr.String(), first.Path)
	})
	resp, body := get(t, lessonURL)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Edited while serving") {
		t.Errorf("after a broken edit GET %s = %s, want the last good lesson", lessonURL, resp.Status)
	}
	if err := server.Stop(t); err != nil {
		t.Error(err)
	}
}

func TestRun_ServeRejectsBadLessonsFolder(t *testing.T) {
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "01-broken.md"), []byte("---\nsummary: no title\n---\n# Hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-folder")

	tests := []struct {
		name       string
		dir        string
		wantStderr []string
	}{
		{"Missing", missing, []string{"lessons folder " + missing}},
		{"BrokenLesson", broken, []string{filepath.Join(broken, "01-broken.md") + ":", "idemlab: cannot serve " + broken + ": 4 problems, listed above"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"serve", "-addr", "127.0.0.1:0", "-lessons", tt.dir}, &stdout, &stderr)
			if err == nil {
				t.Fatal("serve started with a bad lessons folder")
			}
			if got := exitStatus(err); got != 1 {
				t.Errorf("exit status %d, want 1", got)
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), "goroutine ") {
				t.Errorf("stderr holds a stack trace:\n%s", stderr.String())
			}
		})
	}
}

func TestParseServeConfig_AddrPrecedence(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"Default", nil, nil, "127.0.0.1:8080"},
		{"PORT", nil, map[string]string{"PORT": "9000"}, ":9000"},
		{"EnvBeatsPORT", nil, map[string]string{"PORT": "9000", "IDEMLAB_ADDR": "127.0.0.1:7000"}, "127.0.0.1:7000"},
		{"FlagBeatsAll", []string{"-addr", "0.0.0.0:8080"}, map[string]string{"PORT": "9000", "IDEMLAB_ADDR": "127.0.0.1:7000"}, "0.0.0.0:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseServeConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Addr != tt.want {
				t.Errorf("Addr = %q, want %q", cfg.Addr, tt.want)
			}
		})
	}
}

func TestParseServeConfig_EnvFallbacks(t *testing.T) {
	env := map[string]string{
		"IDEMLAB_LESSONS":         "/srv/lessons",
		"IDEMLAB_PUBLIC_URL":      "https://learn.example.com",
		"IDEMLAB_FRAME_ANCESTORS": "'self' https://docs.example.com",
		"IDEMLAB_LOG_FORMAT":      "json",
	}
	getenv := func(k string) string { return env[k] }
	cfg, err := parseServeConfig(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LessonsDir != "/srv/lessons" || cfg.PublicURL != "https://learn.example.com" || cfg.LogFormat != "json" ||
		strings.Join(cfg.FrameAncestors, " ") != "'self' https://docs.example.com" {
		t.Errorf("config from env = %+v", cfg)
	}
	cfg, err = parseServeConfig([]string{"-log-format", "text", "-frame-ancestors", "none"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LogFormat != "text" || strings.Join(cfg.FrameAncestors, " ") != "'none'" {
		t.Errorf("flags did not win over env: %+v", cfg)
	}
}

// -base-path (or IDEMLAB_BASE_PATH) reaches the server as the public URL's
// path: alone, or agreeing with -public-url.
func TestParseServeConfig_BasePathIsThePublicURLsPath(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-base-path", "/learn"}, nil, "/learn"},
		{[]string{"-base-path", "/learn/"}, nil, "/learn"},
		{nil, map[string]string{"IDEMLAB_BASE_PATH": "/learn"}, "/learn"},
		{[]string{"-base-path", "/learn", "-public-url", "https://x.example/learn"}, nil, "https://x.example/learn"},
		{[]string{"-public-url", "https://x.example/learn"}, nil, "https://x.example/learn"},
	} {
		cfg, err := parseServeConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Fatalf("%v %v: %v", tc.args, tc.env, err)
		}
		if cfg.PublicURL != tc.want {
			t.Errorf("%v %v: PublicURL %q, want %q", tc.args, tc.env, cfg.PublicURL, tc.want)
		}
	}
}

// The flag and the server apply one rule: a list the flag accepts starts
// the server (it used to refuse '*').
func TestParseServeConfig_FrameAncestorsTheServerAccepts(t *testing.T) {
	for _, list := range []string{"*", "'*'", "self", "'self' https://docs.example.com", "none"} {
		cfg, err := parseServeConfig([]string{"-frame-ancestors", list}, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Errorf("-frame-ancestors %q: %v", list, err)
			continue
		}
		course := &lessons.Course{Lessons: []*lessons.Lesson{{Slug: "one", Title: "One", Path: "01-one.md"}}}
		if _, err := web.NewServer(web.Config{FrameAncestors: cfg.FrameAncestors}, course); err != nil {
			t.Errorf("-frame-ancestors %q passes the flag but not the server: %v", list, err)
		}
	}
}

func TestBrowseURL_ShowsWhereToGo(t *testing.T) {
	tests := []struct {
		publicURL, addr, want string
	}{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080/"},
		{"", "0.0.0.0:8080", "http://localhost:8080/"},
		{"", "[::]:8080", "http://localhost:8080/"},
		{"https://learn.example.com", "0.0.0.0:8080", "https://learn.example.com/"},
		{"/learn", "0.0.0.0:8080", "http://localhost:8080/learn/"},
	}
	for _, tt := range tests {
		addr, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := browseURL(tt.publicURL, addr); got != tt.want {
			t.Errorf("browseURL(%q, %s) = %q, want %q", tt.publicURL, tt.addr, got, tt.want)
		}
	}
}

// BenchmarkStartup measures what a start costs before the first request:
// load, validate and render every built-in lesson, then build the server.
func BenchmarkStartup(b *testing.B) {
	for b.Loop() {
		course, err := loadCourse("")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := web.NewServer(web.Config{Logger: newLogger("text", io.Discard)}, course); err != nil {
			b.Fatal(err)
		}
	}
}
