// Command ferretdb runs FerretDB 1.x, a MongoDB wire-protocol server, with its
// SQLite backend (pure Go, no cgo, no PostgreSQL needed) for local development
// and CI.
//
// Why a project-owned main: no real mongod is available from any package
// registry we can reach, and `go install github.com/FerretDB/FerretDB/cmd/ferretdb`
// builds a binary that panics at start-up (its build/version/version.txt is a
// generated file missing from the module zip). The embeddable package
// github.com/FerretDB/FerretDB/ferretdb has no such requirement.
//
// Usage: ferretdb [-listen-addr 127.0.0.1:27017] [-sqlite-dir DIR] [-log-level info]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listenAddr := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to serve the MongoDB wire protocol on")
	sqliteDir := flag.String("sqlite-dir", "data", "directory for the SQLite databases (one file per MongoDB database)")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	dir, err := filepath.Abs(*sqliteDir)
	if err != nil {
		fatal(err)
	}
	if err = os.MkdirAll(dir, 0o755); err != nil {
		fatal(err)
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listenAddr},
		Logger:   logger,
		Handler:  "sqlite",
		// FerretDB wants a file: URI naming a directory, with the trailing slash.
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		fatal(err)
	}

	// Stop cleanly on SIGTERM (servers.sh down) and SIGINT (Ctrl-C) so the
	// SQLite files are closed properly.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	logger.Info("FerretDB starting", "listen", *listenAddr, "sqlite", dir)
	if err = f.Run(ctx); err != nil {
		fatal(err)
	}
	logger.Info("FerretDB stopped")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ferretdb:", err)
	os.Exit(1)
}
