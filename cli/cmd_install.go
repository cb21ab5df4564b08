package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// kernelSpec is a Jupyter kernel.json.
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/kernels.html#kernel-specs
type kernelSpec struct {
	Argv          []string       `json:"argv"`
	DisplayName   string         `json:"display_name"`
	Language      string         `json:"language"`
	InterruptMode string         `json:"interrupt_mode"`
	Metadata      map[string]any `json:"metadata"`
}

// kernelName is the kernelspec's directory name: `jupyter console --kernel tracebook`.
const kernelName = "tracebook"

// systemKernelsDir is where a root install puts kernelspecs.
var systemKernelsDir = "/usr/local/share/jupyter/kernels"

func runInstall(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.Bool("user", false, "install for the current user (Jupyter's user data directory)")
	prefix := fs.String("prefix", "", "install under `DIR`/share/jupyter/kernels (a virtual environment or conda prefix)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *user && *prefix != "" {
		return fmt.Errorf("--user and --prefix exclude each other")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the tracebook binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return fmt.Errorf("find the tracebook binary: %w", err)
	}
	var kernels string
	switch {
	case *prefix != "":
		abs, err := filepath.Abs(*prefix)
		if err != nil {
			return err
		}
		kernels = filepath.Join(abs, "share", "jupyter", "kernels")
	case *user:
		kernels = userKernelsDir()
	case writableDir(systemKernelsDir):
		kernels = systemKernelsDir
	default:
		kernels = userKernelsDir()
	}
	path, err := writeKernelSpec(filepath.Join(kernels, kernelName), exe)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "installed kernelspec %s in %s\n", kernelName, filepath.Dir(path))
	return nil
}

// writeKernelSpec writes dir/kernel.json for the binary exe.
func writeKernelSpec(dir, exe string) (string, error) {
	spec := kernelSpec{
		Argv:          []string{exe, "kernel", "-f", "{connection_file}"},
		DisplayName:   "tracebook (SQL)",
		Language:      "sql",
		InterruptMode: "message",
		Metadata:      map[string]any{"debugger": false, "tracebook_version": buildVersion()},
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("install kernelspec: %w", err)
	}
	path := filepath.Join(dir, "kernel.json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("install kernelspec: %w", err)
	}
	return path, nil
}

// userKernelsDir is Jupyter's per-user kernels directory, as jupyter_core
// computes it: $JUPYTER_DATA_DIR, else ~/Library/Jupyter on macOS, else
// $XDG_DATA_HOME/jupyter or ~/.local/share/jupyter.
func userKernelsDir() string {
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return filepath.Join(d, "kernels")
	}
	home, _ := os.UserHomeDir()
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Jupyter", "kernels")
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "jupyter", "kernels")
	}
	return filepath.Join(home, ".local", "share", "jupyter", "kernels")
}

// writableDir reports whether dir exists or can be created, and a file can
// be created in it.
func writableDir(dir string) bool {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false
	}
	f, err := os.CreateTemp(dir, ".tracebook-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
