// Command ferretdb runs FerretDB 1.x, a MongoDB wire-protocol server, on a
// PostgreSQL backend (-postgresql-url; what servers.sh runs) or on its SQLite
// backend (-sqlite-dir; pure Go, nothing else needed) for local development and
// CI.
//
// Why PostgreSQL by default: FerretDB 1.24's SQLite tables index `_id` under an
// expression its queries do not use, so SQLite answers even `{_id: k}` with a
// full table scan (EXPLAIN: "SCAN"); a read-model load then costs time
// quadratic in the collection size. On PostgreSQL `{_id: k}` uses the primary
// key index (see infra/local/README.md for the measurements).
//
// Why a project-owned main: no real mongod is available from any package
// registry we can reach, and `go install github.com/FerretDB/FerretDB/cmd/ferretdb`
// builds a binary that panics at start-up (its build/version/version.txt is a
// generated file missing from the module zip). The embeddable package
// github.com/FerretDB/FerretDB/ferretdb has no such requirement.
//
// Usage:
//
//	ferretdb [-listen-addr 127.0.0.1:27017] [-postgresql-url URL | -sqlite-dir DIR] [-log-level info] [-pprof-addr 127.0.0.1:6060]
//	ferretdb -ping 127.0.0.1:27017   # exit 0 if the server answers {ping: 1} with ok: 1
//
// The -ping mode is the health check of infra/local/servers.sh: it needs no
// mongosh (not packaged anywhere we can reach) and no node_modules.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listenAddr := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to serve the MongoDB wire protocol on")
	sqliteDir := flag.String("sqlite-dir", "data", "directory for the SQLite databases (one file per MongoDB database)")
	postgresURL := flag.String("postgresql-url", "", "PostgreSQL connection string; when set, the PostgreSQL backend is used instead of SQLite")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	pingAddr := flag.String("ping", "", "only ping the server at this address and exit")
	pprofAddr := flag.String("pprof-addr", "", "serve Go's net/http/pprof on this address (off when empty)")
	flag.Parse()

	// Where FerretDB spends its CPU is what bounds a read-model load on it; a profile is
	// `go tool pprof` of http://<pprof-addr>/debug/pprof/profile?seconds=60.
	if *pprofAddr != "" {
		go func() {
			if err := http.ListenAndServe(*pprofAddr, nil); err != nil {
				fmt.Fprintln(os.Stderr, "ferretdb: pprof:", err)
			}
		}()
	}

	if *pingAddr != "" {
		if err := ping(*pingAddr); err != nil {
			fatal(err)
		}
		fmt.Println("ok")
		return
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	config := ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listenAddr},
		Logger:   logger,
	}
	backend := *postgresURL
	if *postgresURL != "" {
		config.Handler = "postgresql"
		config.PostgreSQLURL = *postgresURL
	} else {
		dir, err := filepath.Abs(*sqliteDir)
		if err != nil {
			fatal(err)
		}
		if err = os.MkdirAll(dir, 0o755); err != nil {
			fatal(err)
		}
		config.Handler = "sqlite"
		// FerretDB wants a file: URI naming a directory, with the trailing slash.
		config.SQLiteURL = "file:" + dir + "/"
		backend = dir
	}

	f, err := ferretdb.New(&config)
	if err != nil {
		fatal(err)
	}

	// Stop cleanly on SIGTERM (servers.sh down) and SIGINT (Ctrl-C) so the
	// backend's files and connections are closed properly.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	logger.Info("FerretDB starting", "listen", *listenAddr, "handler", config.Handler, "backend", backend)
	if err = f.Run(ctx); err != nil {
		fatal(err)
	}
	logger.Info("FerretDB stopped")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ferretdb:", err)
	os.Exit(1)
}

// ping sends {ping: 1, $db: "admin"} as an OP_MSG and checks the reply for ok: 1.0.
// Hand-encoded BSON keeps the health check free of any driver dependency.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))

	// BSON document {ping: int32(1), $db: "admin"}.
	var doc bytes.Buffer
	doc.Write([]byte{0, 0, 0, 0}) // length, patched below
	doc.WriteString("\x10ping\x00")
	_ = binary.Write(&doc, binary.LittleEndian, int32(1))
	doc.WriteString("\x02$db\x00")
	_ = binary.Write(&doc, binary.LittleEndian, int32(len("admin")+1))
	doc.WriteString("admin\x00")
	doc.WriteByte(0)
	d := doc.Bytes()
	binary.LittleEndian.PutUint32(d, uint32(len(d)))

	// OP_MSG (opCode 2013): header, flagBits 0, one kind-0 section with the document.
	msg := make([]byte, 16+4+1, 16+4+1+len(d))
	msg = append(msg, d...)
	binary.LittleEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.LittleEndian.PutUint32(msg[4:], 1)     // requestID
	binary.LittleEndian.PutUint32(msg[12:], 2013) // opCode OP_MSG
	if _, err = conn.Write(msg); err != nil {
		return err
	}

	var header [16]byte
	if _, err = io.ReadFull(conn, header[:]); err != nil {
		return err
	}
	n := binary.LittleEndian.Uint32(header[0:])
	if n < 16 || n > 16<<20 {
		return fmt.Errorf("bad reply length %d", n)
	}
	body := make([]byte, n-16)
	if _, err = io.ReadFull(conn, body); err != nil {
		return err
	}

	// The reply is {ok: double(1)}; look for that element rather than parse BSON fully.
	i := bytes.Index(body, []byte("\x01ok\x00"))
	if i < 0 || i+4+8 > len(body) {
		return errors.New("no ok field in reply")
	}
	if ok := math.Float64frombits(binary.LittleEndian.Uint64(body[i+4:])); ok != 1 {
		return fmt.Errorf("ping answered ok: %v", ok)
	}
	return nil
}
