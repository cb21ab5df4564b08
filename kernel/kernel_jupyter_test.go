package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJupyterClient drives the kernel with jupyter_client over libzmq (the
// client Jupyter itself uses) through testdata/jupyter_client_check.py. It
// skips when no python3 with jupyter_client is found.
func TestJupyterClient(t *testing.T) {
	tk := startKernel(t, nil)
	b, err := json.Marshal(tk.ci)
	if err != nil {
		t.Fatal(err)
	}
	conn := filepath.Join(t.TempDir(), "kernel-test.json")
	if err := os.WriteFile(conn, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		start := time.Now()
		out, err := runWithTimeout(exec.Command(p, "testdata/jupyter_client_check.py", conn), 60*time.Second)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			continue // this python has no jupyter_client
		}
		if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "OK") {
			t.Fatalf("jupyter_client check (%s): %v\n%s", p, err, out)
		}
		t.Logf("jupyter_client check (%s) ran %v", p, time.Since(start))
		select {
		case <-tk.done:
		case <-time.After(wait):
			t.Fatal("kernel did not exit after shutdown_request")
		}
		return
	}
	t.Skip("no python3 with jupyter_client")
}

// runWithTimeout runs cmd, killing it after d.
func runWithTimeout(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
		return out, err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return out, errors.New("timed out")
	}
}

// testKernelEnv, set to "1", makes the test binary serve a kernel with the
// tests' Executor on the connection file in its last argument, instead of
// running tests: the kernelspec of TestJupyterKernelTest starts it so.
const testKernelEnv = "TRACEBOOK_TEST_KERNEL"

func TestMain(m *testing.M) {
	if os.Getenv(testKernelEnv) == "1" {
		info := Info{Implementation: "tracebook-test", LanguageName: "sql", MimeType: "application/sql", FileExtension: ".sql"}
		if err := Run(context.Background(), os.Args[len(os.Args)-1], newTestExec(), info, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestJupyterKernelTest runs jupyter_kernel_test's conformance tests (they
// validate every message against the protocol's schema) on a kernel started
// by jupyter_client from a kernelspec, as Jupyter does. It skips when no
// python3 can import jupyter_kernel_test (PYTHONPATH is honoured).
func TestJupyterKernelTest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kernels through jupyter_client")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	spec := map[string]any{
		"argv":           []string{exe, "-test.run=^$", "{connection_file}"},
		"display_name":   "tracebook test",
		"language":       "sql",
		"interrupt_mode": "message",
		"env":            map[string]string{testKernelEnv: "1"},
	}
	b, _ := json.Marshal(spec)
	dir := filepath.Join(data, "kernels", "tracebook-test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		cmd := exec.Command(p, "jupyter_kernel_test_check.py")
		cmd.Dir = "testdata"
		cmd.Env = append(os.Environ(), "JUPYTER_PATH="+data)
		out, err := runWithTimeout(cmd, 120*time.Second)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			continue
		}
		if err != nil {
			t.Fatalf("jupyter_kernel_test (%s): %v\n%s", p, err, out)
		}
		t.Logf("jupyter_kernel_test (%s):\n%s", p, out)
		return
	}
	t.Skip("no python3 with jupyter_kernel_test")
}
