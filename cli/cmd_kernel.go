package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/tracebook/tracebook/kernel"
)

// newExecutor builds the Executor that runs notebook cells: the notebook
// language of package cells over the DuckDB engine. It is a hook so that the
// composition of cells and internal/duck can be wired in (in an init function
// of this package) without the kernel knowing either; while it is nil,
// `tracebook kernel` fails with errNoExecutor.
var newExecutor func() (kernel.Executor, error)

var errNoExecutor = errors.New("no notebook executor is built into this binary")

// runKernel serves one kernel. It logs to a file beside the connection file
// (Jupyter's runtime directory), never to stdout or stderr.
func runKernel(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connFile := fs.String("f", "", "connection file written by Jupyter")
	debugLog := fs.Bool("debug", false, "log every message received")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connFile == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: tracebook kernel -f CONNECTION_FILE")
	}
	level := slog.LevelInfo
	if *debugLog {
		level = slog.LevelDebug
	}
	f, path, err := openKernelLog(*connFile)
	if err != nil {
		return err
	}
	defer f.Close()
	log := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level}))
	log.Info("tracebook kernel", "version", buildVersion(), "connection_file", *connFile, "log", path)
	if newExecutor == nil {
		log.Error("cannot start", "err", errNoExecutor)
		return errNoExecutor
	}
	exec, err := newExecutor()
	if err != nil {
		log.Error("cannot create the executor", "err", err)
		return fmt.Errorf("create executor: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := kernel.Run(ctx, *connFile, exec, kernelInfo(), log); err != nil {
		log.Error("kernel failed", "err", err)
		return err
	}
	return nil
}

// kernelLogPath is where the kernel started with connFile logs: beside it,
// named after the kernel id of "kernel-<id>.json".
func kernelLogPath(connFile string) string {
	base := strings.TrimSuffix(filepath.Base(connFile), filepath.Ext(connFile))
	id := strings.TrimPrefix(base, "kernel-")
	return filepath.Join(filepath.Dir(connFile), "tracebook-kernel-"+id+".log")
}

// openKernelLog opens the log file for appending, falling back to the
// temporary directory when the runtime directory is not writable.
func openKernelLog(connFile string) (*os.File, string, error) {
	path := kernelLogPath(connFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err == nil {
		return f, path, nil
	}
	alt := filepath.Join(os.TempDir(), filepath.Base(path))
	f, err2 := os.OpenFile(alt, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err2 != nil {
		return nil, "", fmt.Errorf("open kernel log: %w", err)
	}
	return f, alt, nil
}

// kernelInfo is what kernel_info_reply says about tracebook's language.
func kernelInfo() kernel.Info {
	return kernel.Info{
		Implementation:        "tracebook",
		ImplementationVersion: buildVersion(),
		LanguageName:          "sql",
		LanguageVersion:       "duckdb",
		MimeType:              "application/sql",
		FileExtension:         ".sql",
		PygmentsLexer:         "sql",
		CodemirrorMode:        "sql",
		Banner:                "tracebook " + buildVersion() + ": SQL and %magics over PyTorch-profiler and vLLM traces. %help lists the magics.",
	}
}

// buildVersion is the module version the binary was built from, or "devel".
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
