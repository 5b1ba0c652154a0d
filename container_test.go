package main

import (
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// No Docker engine runs in CI, so these tests read the Dockerfile and check
// that what the image would run is something this binary understands, and
// that .ci/run builds the binary the way the image does.

// dockerfileExecForm returns the JSON-array argument of the first
// instruction named name at the start of a line (ENTRYPOINT, CMD, or
// HEALTHCHECK with its CMD on a continuation line).
func dockerfileExecForm(t *testing.T, dockerfile, name string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + name + `\b[^\[\n]*(?:\\\n[^\[\n]*)*(\[.*\])\s*$`)
	m := re.FindStringSubmatch(dockerfile)
	if m == nil {
		t.Fatalf("Dockerfile has no %s instruction in exec form", name)
	}
	var argv []string
	if err := json.Unmarshal([]byte(m[1]), &argv); err != nil {
		t.Fatalf("Dockerfile %s %s: %v", name, m[1], err)
	}
	return argv
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDockerfile_RunsCommandsThisBinaryAccepts(t *testing.T) {
	dockerfile := readRepoFile(t, "Dockerfile")

	entrypoint := dockerfileExecForm(t, dockerfile, "ENTRYPOINT")
	if strings.Join(entrypoint, " ") != "/idemlab" {
		t.Errorf("ENTRYPOINT = %q, want [/idemlab]", entrypoint)
	}
	cmd := dockerfileExecForm(t, dockerfile, "CMD")
	if len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("CMD = %q, want serve …", cmd)
	}
	cfg, err := parseServeConfig(cmd[1:], func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("CMD %q is not a valid serve command line: %v", cmd, err)
	}
	if cfg.Addr != "0.0.0.0:8080" {
		t.Errorf("the image listens on %q, want 0.0.0.0:8080 (EXPOSE 8080, reachable from outside)", cfg.Addr)
	}

	health := dockerfileExecForm(t, dockerfile, "HEALTHCHECK")
	if len(health) < 2 || health[0] != "/idemlab" || health[1] != "health" {
		t.Fatalf("HEALTHCHECK runs %q, want /idemlab health …", health)
	}
	fs := newFlagSet("health")
	url := fs.String("url", "", "")
	if err := parseFlags(fs, health[2:], io.Discard); err != nil {
		t.Fatalf("HEALTHCHECK %q: %v", health, err)
	}
	if !strings.HasSuffix(strings.TrimRight(*url, "/"), ":8080") {
		t.Errorf("HEALTHCHECK checks %q, want the port the image listens on (8080)", *url)
	}

	for _, want := range []string{
		"FROM golang:1.26 AS build",
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"USER nonroot",
		"EXPOSE 8080",
	} {
		if !strings.Contains(dockerfile, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

// goBuild matches the build of the binary: the environment, the flags and
// the ldflags up to any -X that stamps a version.
var goBuild = regexp.MustCompile(`CGO_ENABLED=0 go build -trimpath -ldflags "-s -w\b`)

func TestCIRun_BuildsLikeTheDockerfile(t *testing.T) {
	for _, name := range []string{"Dockerfile", ".ci/run"} {
		if !goBuild.MatchString(readRepoFile(t, name)) {
			t.Errorf("%s does not build with %s", name, goBuild)
		}
	}
	ci := readRepoFile(t, ".ci/run")
	for _, want := range []string{"set -euo pipefail", "go tool templ generate", "gofmt -l", "go vet ./...", "export IDEMLAB_REQUIRE_BROWSER=1", "go test -race -short -count=1", `bash -c "$readme_test"`,
		`eval "$(.ci/postgres start`, "export IDEMLAB_REQUIRE_POSTGRES=1", `.ci/postgres stop "$pgdir"`} {
		if !strings.Contains(ci, want) {
			t.Errorf(".ci/run lacks %q", want)
		}
	}
	if got := quickStartTestCommand(readRepoFile(t, "README.md")); got != "go test ./..." {
		t.Errorf("the go test line of the README's quick start, which .ci/run runs as written, is %q; want %q", got, "go test ./...")
	}
}

// quickStartTestCommand is what .ci/run's awk reads from the README: the
// first line starting "go test " of the first sh block under "## Quick start".
func quickStartTestCommand(readme string) string {
	_, after, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		return ""
	}
	section, _, _ := strings.Cut(after, "\n## ")
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		return ""
	}
	block, _, _ = strings.Cut(block, "```")
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "go test ") {
			return line
		}
	}
	return ""
}
