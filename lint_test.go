package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"idemlab/lessons"
)

func TestRun_Lint(t *testing.T) {
	good := copyCourse(t)
	bad := copyCourse(t)
	badFile := lessonFile(t, bad)
	if err := os.WriteFile(badFile, []byte("---\nsummary: no title here\n---\n\nBody.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lessonsOK := coursePages(course) + " OK"
	if want := strconv.Itoa(len(course.Lessons)-1) + " lessons and 1 reference page OK"; lessonsOK != want || len(course.Lessons) < 13 {
		t.Errorf("the built-in course reads %q, want at least 12 lessons and the glossary", lessonsOK)
	}

	tests := []struct {
		name       string
		args       []string
		wantStatus int // 0: success
		wantStdout string
		wantStderr string
	}{
		{"Embedded", []string{"lint"}, 0, lessonsOK, ""},
		{"GoodFolder", []string{"lint", good}, 0, lessonsOK, ""},
		{"BrokenFolder", []string{"lint", bad}, 1, badFile + ":", "problem"},
		{"MissingFolder", []string{"lint", filepath.Join(good, "nope")}, 1, "", "lessons folder"},
		{"TwoFolders", []string{"lint", good, bad}, 2, "", "one folder at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			status := 0
			if err != nil {
				status = exitStatus(err)
			}
			if status != tt.wantStatus {
				t.Errorf("exit status %d (%v), want %d", status, err, tt.wantStatus)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantStdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr.String())
			}
		})
	}
}
