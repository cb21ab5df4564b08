package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracebook/tracebook/kernel"
)

func TestInstall(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	prefix := t.TempDir()
	userData := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", userData)
	tests := []struct {
		name string
		args []string
		dir  string
	}{
		{"prefix", []string{"install", "--prefix", prefix}, filepath.Join(prefix, "share", "jupyter", "kernels", "tracebook")},
		{"user", []string{"install", "--user"}, filepath.Join(userData, "kernels", "tracebook")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != 0 {
				t.Fatalf("run(%q) = %d, stderr %s", tc.args, code, stderr.String())
			}
			if want := "installed kernelspec tracebook in " + tc.dir + "\n"; stdout.String() != want {
				t.Errorf("stdout = %q, want %q", stdout.String(), want)
			}
			b, err := os.ReadFile(filepath.Join(tc.dir, "kernel.json"))
			if err != nil {
				t.Fatal(err)
			}
			var spec map[string]any
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatal(err)
			}
			wantArgv := []any{exe, "kernel", "-f", "{connection_file}"}
			if !reflect.DeepEqual(spec["argv"], wantArgv) {
				t.Errorf("argv = %v, want %v", spec["argv"], wantArgv)
			}
			if !filepath.IsAbs(spec["argv"].([]any)[0].(string)) {
				t.Errorf("argv[0] is not absolute")
			}
			if spec["display_name"] != "tracebook (SQL)" || spec["language"] != "sql" || spec["interrupt_mode"] != "message" {
				t.Errorf("kernel.json = %s", b)
			}
			if _, ok := spec["metadata"].(map[string]any); !ok {
				t.Errorf("metadata = %v", spec["metadata"])
			}
		})
	}
}

func TestInstall_Errors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"install", "--user", "--prefix", "x"}, "tracebook install: --user and --prefix exclude each other\n"},
		{[]string{"install", "extra"}, "tracebook install: unexpected argument \"extra\"\n"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 1 || stderr.String() != tc.want {
			t.Errorf("run(%q) = %d, stderr %q, want 1, %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

func TestKernelLogPath(t *testing.T) {
	tests := []struct{ conn, want string }{
		{"/run/user/1000/jupyter/kernel-4f2a.json", "/run/user/1000/jupyter/tracebook-kernel-4f2a.log"},
		{"/tmp/conn.json", "/tmp/tracebook-kernel-conn.log"},
	}
	for _, tc := range tests {
		if got := kernelLogPath(tc.conn); got != tc.want {
			t.Errorf("kernelLogPath(%q) = %q, want %q", tc.conn, got, tc.want)
		}
	}
}

type nopExecutor struct{}

func (nopExecutor) Execute(context.Context, string, kernel.Publisher) (*kernel.Result, error) {
	return nil, nil
}
func (nopExecutor) Complete(string, int) ([]string, int, int)       { return nil, 0, 0 }
func (nopExecutor) Inspect(string, int, int) (map[string]any, bool) { return nil, false }
func (nopExecutor) IsComplete(string) (string, string)              { return "complete", "" }
func (nopExecutor) Shutdown(bool) error                             { return nil }

func TestKernelCommand_LogsBesideConnectionFile(t *testing.T) {
	old := newExecutor
	t.Cleanup(func() { newExecutor = old })
	newExecutor = func() (kernel.Executor, error) { return nopExecutor{}, nil }
	dir := t.TempDir()
	conn := filepath.Join(dir, "kernel-abc.json") // does not exist: the kernel fails to start
	var stdout, stderr bytes.Buffer
	if code := run([]string{"kernel", "-f", conn}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit code %d", code)
	}
	if stdout.Len() != 0 {
		t.Errorf("kernel wrote to stdout: %q", stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "tracebook-kernel-abc.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "read connection file") {
		t.Errorf("log = %s", b)
	}
}

func TestKernelCommand_NoExecutor(t *testing.T) {
	old := newExecutor
	t.Cleanup(func() { newExecutor = old })
	newExecutor = nil
	var stdout, stderr bytes.Buffer
	if code := run([]string{"kernel", "-f", filepath.Join(t.TempDir(), "k.json")}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), errNoExecutor.Error()) {
		t.Errorf("code %d, stderr %q", code, stderr.String())
	}
}
