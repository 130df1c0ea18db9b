package stdio

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests run fake MCP servers by re-executing the test binary: when
// helperEnv is set, TestMain runs that server mode instead of the tests.
// This keeps the fake servers in Go, needs no external programs, and lets
// each mode misbehave in exactly one way.
const (
	helperEnv     = "LEMON_STDIO_HELPER"
	helperSizeEnv = "LEMON_STDIO_SIZE" // bytes, for the long-line modes
	helperCodeEnv = "LEMON_STDIO_CODE" // exit status, for "exit"
	helperKidEnv  = "LEMON_STDIO_KID"  // grandchild mode, for "grandchild"
)

// testLauncher runs the fake servers through the sandbox helper when the
// suite is re-run by TestEveryCaseThroughTheHelper (via_helper_test.go):
// viaHelper is then "reaper" or "confined", and every case must hold as
// it does with the server run directly.
var (
	testLauncher Launcher
	viaHelper    string
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		runHelper(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runHelper(mode string) {
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	defer out.Flush()
	println := func(s string) {
		out.WriteString(s)
		out.WriteByte('\n')
		out.Flush()
	}
	size, _ := strconv.Atoi(os.Getenv(helperSizeEnv))

	switch mode {
	case "echo":
	case "banner":
		println("Welcome to the fake server v1.0")
		println("")
		println("   ")
		println("\r")
		println("not json {")
		println(strings.Repeat("b", 3000))
		println("\xEF\xBB\xBF{\"bom\":1}")
		println("{\"crlf\":1}\r")
		println(`  {"hello":1}`)
	case "stderr-flood":
		w := bufio.NewWriterSize(os.Stderr, 64<<10)
		pad := strings.Repeat(".", 90)
		for i, n := 0, 0; n < 5<<20; i++ {
			k, _ := fmt.Fprintf(w, "noise %07d %s\n", i, pad)
			n += k
		}
		fmt.Fprintf(w, "long-%s\n", strings.Repeat("x", 20000))
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(w, "tail %d\n", i)
		}
		w.Flush()
		println(`{"ready":true}`)
	case "stderr-line":
		fmt.Fprintln(os.Stderr, "oops on stderr")
		time.Sleep(20 * time.Millisecond) // keep the order stable in merge mode
		println(`{"ok":1}`)
	case "long-line":
		// One line of size bytes that looks like JSON, then a normal one.
		chunk := []byte(strings.Repeat("a", 64<<10))
		out.WriteString(`{"big":"`)
		for left := size - len(`{"big":""}`); left > 0; {
			n := min(left, len(chunk))
			out.Write(chunk[:n])
			left -= n
		}
		out.WriteString(`"}` + "\n")
		println(`{"next":1}`)
	case "exit":
		println(`{"bye":1}`)
		code, _ := strconv.Atoi(os.Getenv(helperCodeEnv))
		out.Flush()
		os.Exit(code)
	case "kill-self":
		out.Flush()
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	case "stubborn":
		// Ignores SIGTERM and stdin EOF: only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM)
		println(`{"ready":1}`)
		io.Copy(io.Discard, os.Stdin)
		sleepForever()
	case "grandchild":
		exe, _ := os.Executable()
		kid := exec.Command(exe)
		kid.Env = append(os.Environ(), helperEnv+"="+os.Getenv(helperKidEnv))
		kid.Stdout, kid.Stderr = os.Stdout, os.Stderr // holds the pipes open
		if err := kid.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "grandchild:", err)
			os.Exit(1)
		}
		println(fmt.Sprintf(`{"grandchild":%d}`, kid.Process.Pid))
	case "sleep":
		sleepForever()
	case "sleep-stubborn":
		signal.Ignore(syscall.SIGTERM)
		os.Stdout.WriteString(`{"grandchild_ready":1}` + "\n")
		sleepForever()
	case "env":
		b, _ := json.Marshal(map[string][]string{"env": os.Environ()})
		println(string(b))
	case "cwd":
		wd, _ := os.Getwd()
		b, _ := json.Marshal(map[string]string{"cwd": wd})
		println(string(b))
	case "no-read":
		println(`{"ready":1}`)
		sleepForever()
	case "late-read":
		// Reads only once the test sends SIGUSR1: the client fills the
		// pipe meanwhile, and a send that waited for a read never returns.
		release := make(chan os.Signal, 1)
		signal.Notify(release, syscall.SIGUSR1)
		println(`{"ready":1}`)
		<-release
	case "close-stdout":
		println(fmt.Sprintf(`{"pid":%d}`, os.Getpid()))
		out.Flush()
		os.Stdout.Close()
		sleepForever()
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		os.Exit(2)
	}
	echo(out)
}

// echo writes every stdin line back on stdout until stdin ends. It flushes
// only when no more input is buffered, so bursts go out in few writes.
func echo(out *bufio.Writer) {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			out.Write(line)
			if in.Buffered() == 0 {
				out.Flush()
			}
		}
		if err != nil {
			out.Flush()
			return
		}
	}
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}
