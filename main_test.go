package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envMainArgs, when set, makes the test binary run main with these
// arguments (a JSON list) instead of the tests, so that a test can check
// what only a real process shows: exit statuses and signals.
const envMainArgs = "IDEMLAB_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(envMainArgs); args != "" {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			panic(err)
		}
		os.Args = append([]string{"idemlab"}, argv...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mainCommand returns a command that runs main with args in a child process.
func mainCommand(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	argv, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envMainArgs+"="+string(argv))
	return cmd
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestMain_ExitStatus(t *testing.T) {
	bad := t.TempDir()
	if err := os.WriteFile(bad+"/01-bad.md", []byte("---\ntitle: t\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantStderr string
	}{
		{"Version", []string{"version"}, 0, ""},
		{"LintOK", []string{"lint"}, 0, ""},
		{"LintProblems", []string{"lint", bad}, 1, "idemlab: lint: "},
		{"UnknownFlag", []string{"-nope"}, 2, "idemlab: serve: flag provided but not defined: -nope"},
		{"UnknownCommand", []string{"nope"}, 2, `idemlab: unknown command "nope"`},
		{"HealthDown", []string{"health", "-url", "http://127.0.0.1:1"}, 1, "idemlab: health: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			cmd := mainCommand(t, tt.args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			if got := exitCode(err); got != tt.wantStatus {
				t.Errorf("exit status %d, want %d; stderr:\n%s", got, tt.wantStatus, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr.String())
			}
			if strings.Contains(stderr.String(), "goroutine ") {
				t.Errorf("stderr holds a stack trace:\n%s", stderr.String())
			}
		})
	}
}

func TestMain_SIGTERMShutsDownCleanly(t *testing.T) {
	cmd := mainCommand(t, "serve", "-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serving := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		serving <- strings.HasPrefix(line, "Idemlab is serving the course at http://127.0.0.1:")
	}()
	select {
	case ok := <-serving:
		if !ok {
			t.Fatal("serve did not print the URL to open")
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve printed nothing within 30s")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != 0 {
			t.Errorf("exit status %d after SIGTERM, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(shutdownTimeout + 5*time.Second):
		cmd.Process.Kill()
		t.Fatal("serve did not exit after SIGTERM")
	}
	if !strings.Contains(stderr.String(), "msg=stopped") {
		t.Errorf("no 'stopped' log line after SIGTERM:\n%s", stderr.String())
	}
}
