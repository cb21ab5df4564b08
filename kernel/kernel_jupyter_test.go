package kernel

import (
	"encoding/json"
	"errors"
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
