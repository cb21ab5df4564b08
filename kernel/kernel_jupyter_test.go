package kernel

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jupyterPython returns a python3 that can import jupyter_client, or skips.
func jupyterPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(py); err == nil && exec.Command(p, "-c", "import jupyter_client").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with jupyter_client")
	return ""
}

// TestJupyterClient drives the kernel with jupyter_client over libzmq: the
// client Jupyter itself uses, against the guarded zmq4 transport.
func TestJupyterClient(t *testing.T) {
	py := jupyterPython(t)
	tk := startKernel(t, nil)
	b, err := json.Marshal(tk.ci)
	if err != nil {
		t.Fatal(err)
	}
	conn := filepath.Join(t.TempDir(), "kernel-test.json")
	if err := os.WriteFile(conn, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "testdata/jupyter_client_check.py", conn)
	done := make(chan struct{})
	var out []byte
	go func() {
		out, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("jupyter_client check timed out: %s", out)
	}
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "OK") {
		t.Fatalf("jupyter_client check: %v\n%s", err, out)
	}
	select {
	case <-tk.done:
	case <-time.After(wait):
		t.Fatal("kernel did not exit after shutdown_request")
	}
}
